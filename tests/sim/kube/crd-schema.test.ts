// Structural pruning, defaulting and validation of custom resources against a CRD schema, table by
// table, with the API server's wording.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  defaultCustomResource,
  pruneCustomResource,
  validateCustomResource,
} from '../../../sim/kube/crd-schema.js';
import { errorText } from '../../../sim/kube/field-errors.js';

const SCHEMA = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } },
    spec: {
      type: 'object',
      required: ['pool'],
      properties: {
        pool: { type: 'string', minLength: 2, maxLength: 8, pattern: '^[a-z]+$' },
        mode: { type: 'string', enum: ['live', 'offline'], default: 'offline' },
        keep: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
        note: { type: 'string', nullable: true },
        size: { 'x-kubernetes-int-or-string': true },
        canary: { type: 'object', properties: { nodes: { type: 'integer', default: 1 } } },
        zones: {
          type: 'array',
          maxItems: 2,
          minItems: 1,
          'x-kubernetes-list-type': 'set',
          items: { type: 'string' },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 2 },
        gates: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, on: { type: 'boolean', default: true } },
          },
        },
        either: { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] },
        raw: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { kept: { type: 'object', properties: { x: { type: 'string' } } } },
        },
        embedded: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object' } },
        },
      },
    },
    status: { type: 'object', properties: { version: { type: 'string' } } },
  },
};

function object(spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'policies.sim.test/v1alpha1',
    kind: 'PoolImagePolicy',
    metadata: { name: 'p' },
    spec,
    ...extra,
  };
}

void describe('pruning a custom resource', () => {
  void it('drops what the schema does not specify and names each path', () => {
    const value = object(
      {
        pool: 'a',
        colour: 'blue',
        labels: { any: 'kept' },
        gates: [{ name: 'g', extra: 1 }],
        raw: { anything: 1, kept: { x: 'y', dropped: 2 } },
        embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', bogus: 1 }, spec: {}, other: 1 },
      },
      { top: 1, metadata: { name: 'p', weird: true } },
    );

    const pruned = pruneCustomResource(value, SCHEMA);

    assert.deepEqual(pruned, [
      'metadata.weird',
      'spec.colour',
      'spec.gates[0].extra',
      'spec.raw.kept.dropped',
      'spec.embedded.metadata.bogus',
      'spec.embedded.other',
      'top',
    ]);
    assert.deepEqual(value.spec, {
      pool: 'a',
      labels: { any: 'kept' },
      gates: [{ name: 'g' }],
      raw: { anything: 1, kept: { x: 'y' } },
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: {} },
    });
  });
});

void describe('defaulting a custom resource', () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['fills missing fields', { pool: 'a' }, { pool: 'a', mode: 'offline', keep: 3 }],
    ['keeps given values', { pool: 'a', mode: 'live', keep: 5 }, { pool: 'a', mode: 'live', keep: 5 }],
    [
      'defaults a null that may not be null',
      { pool: 'a', keep: null },
      { pool: 'a', keep: 3, mode: 'offline' },
    ],
    ['drops a null without default', { pool: 'a', ratio: null }, { pool: 'a', mode: 'offline', keep: 3 }],
    ['keeps a nullable null', { pool: 'a', note: null }, { pool: 'a', note: null, mode: 'offline', keep: 3 }],
    [
      'defaults inside present objects only',
      { pool: 'a', canary: {} },
      { pool: 'a', canary: { nodes: 1 }, mode: 'offline', keep: 3 },
    ],
    [
      'defaults list items',
      { pool: 'a', gates: [{ name: 'g' }] },
      { pool: 'a', gates: [{ name: 'g', on: true }], mode: 'offline', keep: 3 },
    ],
  ];
  for (const [name, spec, expected] of cases) {
    void it(name, () => {
      const value = object(spec);
      defaultCustomResource(value, SCHEMA);
      assert.deepEqual(value.spec, expected);
    });
  }
});

void describe('validating a custom resource', () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['accepts a valid object', { pool: 'abc', keep: 2, size: '10%', zones: ['1'], either: 'beta' }, []],
    ['requires fields', {}, ['spec.pool: Required value']],
    [
      'checks types',
      { pool: 'abc', keep: '3' },
      ['spec.keep: Invalid value: "string": spec.keep in body must be of type integer: "string"'],
    ],
    [
      'checks integers',
      { pool: 'abc', keep: 2.5 },
      ['spec.keep: Invalid value: "number": spec.keep in body must be of type integer: "number"'],
    ],
    [
      'checks enums',
      { pool: 'abc', mode: 'x' },
      ['spec.mode: Unsupported value: "x": supported values: "live", "offline"'],
    ],
    [
      'checks minimum and maximum',
      { pool: 'abc', keep: 11 },
      ['spec.keep: Invalid value: 11: spec.keep in body should be less than or equal to 10'],
    ],
    [
      'checks exclusive bounds',
      { pool: 'abc', ratio: 0 },
      ['spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0'],
    ],
    ['checks maxLength', { pool: 'abcdefghij' }, ['spec.pool: Too long: may not be longer than 8']],
    [
      'checks minLength',
      { pool: 'a' },
      ['spec.pool: Invalid value: "a": spec.pool in body should be at least 2 chars long'],
    ],
    [
      'checks patterns',
      { pool: 'AB' },
      ['spec.pool: Invalid value: "AB": spec.pool in body should match \'^[a-z]+$\''],
    ],
    [
      'checks maxItems',
      { pool: 'abc', zones: ['1', '2', '3'] },
      ['spec.zones: Too many: 3: must have at most 2 items'],
    ],
    [
      'checks minItems',
      { pool: 'abc', zones: [] },
      ['spec.zones: Invalid value: []: spec.zones in body should have at least 1 items'],
    ],
    ['checks set duplicates', { pool: 'abc', zones: ['1', '1'] }, ['spec.zones[1]: Duplicate value: "1"']],
    [
      'checks map-list keys',
      { pool: 'abc', gates: [{ name: 'g' }, { name: 'g' }] },
      ['spec.gates[1]: Duplicate value: {"name":"g"}'],
    ],
    [
      'checks maxProperties',
      { pool: 'abc', labels: { a: '1', b: '2', c: '3' } },
      ['spec.labels: Too many: 3: must have at most 2 items'],
    ],
    [
      'checks map values',
      { pool: 'abc', labels: { a: 1 } },
      ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'],
    ],
    [
      'checks int-or-string',
      { pool: 'abc', size: true },
      ['spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"'],
    ],
    [
      'checks anyOf',
      { pool: 'abc', either: 'c' },
      ['spec.either: Invalid value: "c": must validate at least one schema (anyOf)'],
    ],
    ['allows a nullable null', { pool: 'abc', note: null }, []],
  ];
  for (const [name, spec, expected] of cases) {
    void it(name, () => {
      assert.deepEqual(validateCustomResource(object(spec), SCHEMA).map(errorText), expected);
    });
  }

  void it('checks the metadata.name restriction of the schema', () => {
    const value = object({ pool: 'abc' }, { metadata: { name: 'a-very-long-name' } });
    assert.deepEqual(validateCustomResource(value, SCHEMA).map(errorText), [
      'metadata.name: Too long: may not be longer than 10',
    ]);
  });
});
