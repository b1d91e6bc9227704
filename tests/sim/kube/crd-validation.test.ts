// The API server's validation of a CustomResourceDefinition itself: each rule with its wording.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { defaultCrd, validateCrd } from '../../../sim/kube/crd-validation.js';
import { errorText } from '../../../sim/kube/field-errors.js';
import { poolImagePolicyCrd } from './crd-fixtures.js';

type Spec = Record<string, unknown> & {
  names: Record<string, unknown>;
  versions: Record<string, unknown>[];
};

function crd(change: (spec: Spec, crd: KubeObject) => void): KubeObject {
  const object = poolImagePolicyCrd();
  change(object.spec as Spec, object);
  defaultCrd(object);
  return object;
}

function schemaOf(spec: Spec): Record<string, unknown> {
  return (spec.versions[0]?.schema as { openAPIV3Schema: Record<string, unknown> }).openAPIV3Schema;
}

void describe('validating a CustomResourceDefinition', () => {
  const cases: [string, (spec: Spec, object: KubeObject) => void, string[]][] = [
    ['accepts the test CRD', () => undefined, []],
    [
      'requires the name to be plural.group',
      (_spec, object) => (object.metadata.name = 'policies.sim.test'),
      ['metadata.name: Invalid value: "policies.sim.test": must be spec.names.plural+"."+spec.group'],
    ],
    [
      'requires a group with a dot',
      (spec, object) => {
        spec.group = 'policies';
        object.metadata.name = 'poolimagepolicies.policies';
      },
      ['spec.group: Invalid value: "policies": should be a domain with at least one dot'],
    ],
    [
      'asks approval for a protected group',
      (spec, object) => {
        spec.group = 'policies.k8s.io';
        object.metadata.name = 'poolimagepolicies.policies.k8s.io';
      },
      [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
      ],
    ],
    [
      'checks the scope',
      (spec) => (spec.scope = 'Global'),
      ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ],
    [
      'checks the names',
      (spec) =>
        (spec.names = {
          plural: 'poolimagepolicies',
          singular: 'poolpolicy',
          kind: 'Pool_Policy',
          listKind: 'Pool_Policy',
        }),
      [
        "spec.names.kind: Invalid value: \"Pool_Policy\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.names.listKind: Invalid value: \"Pool_Policy\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.names.listKind: Invalid value: "Pool_Policy": kind and listKind may not be the same',
      ],
    ],
    [
      'requires exactly one storage version',
      (spec) => spec.versions.push({ ...spec.versions[0], name: 'v1beta1' }),
      [
        `spec.versions: Invalid value: ${JSON.stringify([poolImagePolicyCrd().spec].map((s) => (s as Spec).versions[0]).flatMap((v) => [v, { ...v, name: 'v1beta1' }]))}: must have exactly one version marked as storage version`,
      ],
    ],
    [
      'requires a schema',
      (spec) => delete spec.versions[0]?.schema,
      ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ],
    [
      'requires a structural schema',
      (spec) => {
        const schema = schemaOf(spec);
        schema.additionalProperties = { type: 'string' };
        schema.properties = {
          spec: { properties: { list: { type: 'array' } } },
          metadata: { type: 'object', description: 'x' },
        };
      },
      [
        'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].items: Required value: must be specified',
        'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
        'spec.versions[0].schema.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root',
        'spec.versions[0].schema.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive',
        'spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
      ],
    ],
    [
      'requires defaults that validate',
      (spec) => {
        const specSchema = (
          schemaOf(spec).properties as Record<string, { properties: Record<string, unknown> }>
        ).spec;
        if (specSchema) specSchema.properties.keepGenerations = { type: 'integer', default: 'three' };
      },
      [
        'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[keepGenerations].default: Invalid value: "string": spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[keepGenerations].default in body must be of type integer: "string"',
      ],
    ],
    [
      'checks printer columns',
      (spec) =>
        (spec.versions[0]!.additionalPrinterColumns = [{ name: 'X', type: 'text', jsonPath: 'spec.x' }]),
      [
        'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "text": supported values: "boolean", "date", "integer", "number", "string"',
        'spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "spec.x": must be a simple json path starting with .',
      ],
    ],
  ];
  for (const [name, change, expected] of cases) {
    void it(name, () => assert.deepEqual(validateCrd(crd(change)).map(errorText), expected));
  }

  void it('defaults singular, listKind and conversion', () => {
    const object = crd((spec) => (spec.names = { plural: 'poolimagepolicies', kind: 'PoolImagePolicy' }));
    const spec = object.spec as Spec;
    assert.deepEqual(
      [spec.names.singular, spec.names.listKind, spec.conversion],
      ['poolimagepolicy', 'PoolImagePolicyList', { strategy: 'None' }],
    );
  });

  void it('keeps the group, plural, and once established the scope and kind, and every stored version', () => {
    const old = crd(() => undefined);
    old.status = { conditions: [{ type: 'Established', status: 'True' }], storedVersions: ['v1alpha1'] };
    const next = crd((spec) => {
      spec.group = 'other.sim.test';
      spec.scope = 'Namespaced';
      spec.names = { plural: 'others', kind: 'Other' };
      spec.versions[0]!.name = 'v1';
    });
    next.metadata.name = 'poolimagepolicies.policies.sim.test';
    next.status = old.status;

    assert.deepEqual(validateCrd(next, old).map(errorText), [
      'metadata.name: Invalid value: "poolimagepolicies.policies.sim.test": must be spec.names.plural+"."+spec.group',
      'spec.group: Invalid value: "other.sim.test": field is immutable',
      'spec.names.plural: Invalid value: "others": field is immutable',
      'spec.scope: Invalid value: "Namespaced": field is immutable',
      'spec.names.kind: Invalid value: "Other": field is immutable',
      'status.storedVersions[0]: Invalid value: "v1alpha1": must appear in spec.versions',
    ]);
  });
});
