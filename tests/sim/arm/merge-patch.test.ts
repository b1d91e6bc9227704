/** Table tests of ARM PATCH merge semantics. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { JsonObject } from '../../../sim/arm/compute-state.js';
import { mergePatch } from '../../../sim/arm/merge-patch.js';

const cases: { name: string; target: JsonObject; patch: JsonObject; expected: JsonObject }[] = [
  { name: 'adds a property', target: { a: 1 }, patch: { b: 2 }, expected: { a: 1, b: 2 } },
  { name: 'replaces a scalar', target: { a: 1 }, patch: { a: 'x' }, expected: { a: 'x' } },
  { name: 'null removes a property', target: { a: 1, b: 2 }, patch: { a: null }, expected: { b: 2 } },
  { name: 'null on an absent property is a no-op', target: { a: 1 }, patch: { z: null }, expected: { a: 1 } },
  {
    name: 'objects merge recursively',
    target: { profile: { os: { prefix: 'p', user: 'u' }, disk: 128 } },
    patch: { profile: { os: { user: 'v' } } },
    expected: { profile: { os: { prefix: 'p', user: 'v' }, disk: 128 } },
  },
  {
    name: 'arrays replace, they never merge',
    target: { extensions: [{ name: 'a' }, { name: 'b' }] },
    patch: { extensions: [{ name: 'c' }] },
    expected: { extensions: [{ name: 'c' }] },
  },
  {
    name: 'imageReference switches to a gallery id with nulls',
    target: { imageReference: { publisher: 'Canonical', offer: 'ubuntu', sku: 'server', version: 'latest' } },
    patch: { imageReference: { id: '/g/images/i', publisher: null, offer: null, sku: null, version: null } },
    expected: { imageReference: { id: '/g/images/i' } },
  },
  {
    name: 'an object replaces a scalar',
    target: { a: 1 },
    patch: { a: { b: 2 } },
    expected: { a: { b: 2 } },
  },
];

describe('mergePatch', () => {
  for (const testCase of cases) {
    it(testCase.name, () => {
      const target = structuredClone(testCase.target);

      const merged = mergePatch(target, testCase.patch);

      assert.deepEqual(merged, testCase.expected);
      assert.deepEqual(target, testCase.target, 'the target is not modified');
    });
  }
});
