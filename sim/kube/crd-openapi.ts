/**
 * The OpenAPI definitions the API server publishes for a custom resource (what `kubectl explain`
 * and kubectl's validation read): the version's schema with `apiVersion`, `kind` and `metadata`
 * (ObjectMeta) filled in and its `x-kubernetes-group-version-kind`, plus the list kind, named after
 * the reversed group (`io.vmss-prototype.v1alpha1.PoolImagePolicy`). `/openapi/v2` gets the v2 form,
 * without what Swagger 2.0 cannot say (`nullable`, `anyOf`, `oneOf`, `not`).
 *
 * Upstream: kubernetes/kubernetes
 * `staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go` (`BuildOpenAPIV3`,
 * `BuildOpenAPIV2`, the definition names, `addTypeMetaProperties`, the list schema) and
 * `pkg/controller/openapi/v2/conversion.go` (`ToStructuralOpenAPIV2`).
 */
import type { Schema } from './openapi-schemas.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** `io.vmss-prototype.v1alpha1.PoolImagePolicy` for group `vmss-prototype.io`. */
export function customDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function typeMeta(schema: Schema): Schema {
  const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
  return {
    ...schema,
    properties: {
      ...properties,
      apiVersion: {
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
        type: 'string',
      },
      kind: {
        description:
          'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
      },
      metadata: {
        description:
          "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        allOf: [{ $ref: `#/definitions/${META}.ObjectMeta` }],
      },
    },
  };
}

/** The kind's and its list's definitions, v3 form, references written `#/definitions/…` as openapi.ts expects. */
export function customDefinitions(
  group: string,
  version: string,
  kind: string,
  listKind: string,
  schema: Schema,
): Record<string, Schema> {
  const name = customDefinitionName(group, version, kind);
  const listName = customDefinitionName(group, version, listKind);
  const object = typeMeta(structuredClone(schema));
  object['x-kubernetes-group-version-kind'] = [{ group, version, kind }];
  const list = typeMeta({
    description: `${listKind} is a list of ${kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      items: {
        description: `List of ${name.split('.').pop() ?? kind}s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        type: 'array',
        items: { allOf: [{ $ref: `#/definitions/${name}` }] },
      },
    },
  });
  const listProperties = list.properties as Record<string, Schema>;
  listProperties.metadata = {
    description:
      'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    allOf: [{ $ref: `#/definitions/${META}.ListMeta` }],
  };
  list['x-kubernetes-group-version-kind'] = [{ group, version, kind: listKind }];
  return { [name]: object, [listName]: list };
}

/** The Swagger 2.0 form of a schema: `nullable`, `anyOf`, `oneOf` and `not` dropped. */
export function toOpenApiV2(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (['nullable', 'anyOf', 'oneOf', 'not'].includes(key)) continue;
    if (
      (key === 'properties' || key === 'patternProperties') &&
      typeof value === 'object' &&
      value !== null
    ) {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, Schema>).map(([name, property]) => [
          name,
          toOpenApiV2(property),
        ]),
      );
    } else if (
      ['items', 'additionalProperties'].includes(key) &&
      typeof value === 'object' &&
      value !== null
    ) {
      out[key] = toOpenApiV2(value as Schema);
    } else if (key === 'allOf' && Array.isArray(value)) {
      out[key] = value.map((entry) => toOpenApiV2(entry as Schema));
    } else out[key] = value;
  }
  return out;
}
