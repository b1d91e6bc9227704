/**
 * What the write verbs (api-writes.ts) do differently for CustomResourceDefinitions and custom
 * resources: pruning and defaulting of what a client sent, the status strategy (a create or main
 * resource write cannot set `status` when the status subresource is on; a `/status` write changes
 * nothing else), `metadata.generation` bumped on any change outside metadata, and validation against
 * the CRD (for a CRD: crd-validation.ts) with the API server's 422.
 *
 * Upstream (kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver/pkg/registry/`):
 * `customresource/strategy.go` (`PrepareForCreate`: status dropped, generation 1; `PrepareForUpdate`:
 * old status kept, generation bumped when anything but metadata changed; `Validate`),
 * `customresource/status_strategy.go` (`PrepareForUpdate`: only status taken) and
 * `customresourcedefinition/strategy.go` (a created CRD's status is its storage version only;
 * `storedVersions` gains each new storage version).
 */
import type { KubeObject } from '../contracts.js';
import {
  celRulesAt,
  defaultCustomResource,
  pruneCustomResource,
  validateCustomResource,
} from './crd-schema.js';
import { defaultCrd, schemasOf, storageVersionOf, validateCrd } from './crd-validation.js';
import { invalidObject } from './field-errors.js';
import type { ResourceInfo } from './resources.js';
import { KubeApiError } from './status.js';

const CRD_GROUP = 'apiextensions.k8s.io';

function isCrd(info: ResourceInfo): boolean {
  return info.resource === 'customresourcedefinitions';
}

/** The custom resource's pruning for field-pruning.ts, or undefined for a built-in kind. */
export function customPruner(info: ResourceInfo): ((object: KubeObject) => string[]) | undefined {
  const schema = info.custom?.schema;
  if (schema === undefined) return undefined;
  return (object) => pruneCustomResource(object, schema);
}

/** Defaults of a decoded body (after pruning): the schema's defaults, or the CRD's own. */
export function defaultDecoded(info: ResourceInfo, object: KubeObject): void {
  if (info.custom) defaultCustomResource(object, info.custom.schema);
  else if (isCrd(info)) defaultCrd(object);
}

/** A custom resource read back: defaults applied, as the API server applies them to what it reads. */
export function defaultRead(info: ResourceInfo, object: KubeObject): KubeObject {
  if (!info.custom) return object;
  const copy = structuredClone(object);
  defaultCustomResource(copy, info.custom.schema);
  return copy;
}

/** Whether the main endpoint of a custom resource (or a CRD) ignores status. */
export function customStatusSubresource(info: ResourceInfo): boolean {
  return info.custom?.statusSubresource === true || isCrd(info);
}

/** `PrepareForCreate`: generation 1, a status the client may not set dropped (or the CRD's reset). */
export function prepareCreate(info: ResourceInfo, object: KubeObject): void {
  if (info.custom) {
    if (info.custom.statusSubresource) delete object.status;
    object.metadata.generation = 1;
  } else if (isCrd(info)) {
    const storage = storageVersionOf(object);
    object.status = {
      acceptedNames: { kind: '', plural: '' },
      ...(storage === undefined ? {} : { storedVersions: [storage] }),
    };
    object.metadata.generation = 1;
  }
}

/** What counts for the generation: everything but metadata (and the apiVersion it was written in). */
function withoutMetadata(object: KubeObject): string {
  const { metadata: _metadata, apiVersion: _apiVersion, ...rest } = object;
  return JSON.stringify(rest);
}

/** `PrepareForUpdate` on the main endpoint (`next` already has the old status where it must). */
export function prepareUpdate(info: ResourceInfo, existing: KubeObject, next: KubeObject): void {
  if (info.custom) {
    const generation = existing.metadata.generation ?? 1;
    next.metadata.generation =
      withoutMetadata(next) === withoutMetadata(existing) ? generation : generation + 1;
  } else if (isCrd(info)) {
    const storage = storageVersionOf(next);
    const status = { ...(next.status as Record<string, unknown> | undefined) };
    const stored = Array.isArray(status.storedVersions) ? (status.storedVersions as string[]) : [];
    if (storage !== undefined && !stored.includes(storage)) {
      next.status = { ...status, storedVersions: [...stored, storage] };
    }
  }
}

/** Validation before the write is stored: 422 with every field error. */
export function validateCustomWrite(info: ResourceInfo, object: KubeObject, existing?: KubeObject): void {
  if (info.custom) {
    const errors = validateCustomResource(object, info.custom.schema);
    if (errors.length > 0) throw invalidObject(info.kind, info.group, object.metadata.name, errors);
  } else if (isCrd(info)) {
    const errors = validateCrd(object, existing);
    if (errors.length > 0)
      throw invalidObject('CustomResourceDefinition', CRD_GROUP, object.metadata.name, errors);
  }
}

/**
 * The simulator's own `Warning` for a CRD whose schema carries `x-kubernetes-validations`: the rules
 * are accepted but not evaluated (sim/README.md), so a test relying on them learns it here.
 */
export function customWriteWarnings(info: ResourceInfo, object: KubeObject): Record<string, string> {
  if (!isCrd(info)) return {};
  const paths: string[] = [];
  for (const { path, schema } of schemasOf(object)) celRulesAt(schema, path, paths);
  if (paths.length === 0) return {};
  const message = `the simulated API server does not evaluate x-kubernetes-validations (CEL) rules: ${paths.join(', ')}`;
  return { Warning: `299 - ${JSON.stringify(message)}` };
}

/** Custom resources take JSON and merge patches and apply, not strategic merge patches (415). */
export function refuseStrategicPatch(info: ResourceInfo, mediaType: string): void {
  if (info.custom && mediaType === 'application/strategic-merge-patch+json') {
    throw new KubeApiError(
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  }
}
