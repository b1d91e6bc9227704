import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from '../../../sim/kube/patch.js';
import { KubeApiError } from '../../../sim/kube/status.js';

void describe('JSON merge patch (RFC 7386)', () => {
  const cases: { name: string; target: unknown; patch: unknown; expected: unknown }[] = [
    {
      name: 'adds and replaces keys',
      target: { a: 1, b: { c: 2 } },
      patch: { b: { d: 3 } },
      expected: { a: 1, b: { c: 2, d: 3 } },
    },
    { name: 'null deletes a key', target: { a: 1, b: 2 }, patch: { a: null }, expected: { b: 2 } },
    { name: 'arrays replace whole', target: { a: [1, 2] }, patch: { a: [3] }, expected: { a: [3] } },
    { name: 'scalar replaces object', target: { a: { b: 1 } }, patch: { a: 'x' }, expected: { a: 'x' } },
  ];
  for (const { name, target, patch, expected } of cases) {
    void it(name, () => {
      assert.deepEqual(applyMergePatch(target, patch), expected);
    });
  }
});

void describe('strategic merge patch', () => {
  const node = {
    metadata: { labels: { a: '1' }, finalizers: ['x'], ownerReferences: [{ uid: 'u1', name: 'one' }] },
    spec: { unschedulable: true, taints: [{ key: 'k1', effect: 'NoSchedule' }] },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'DiskPressure', status: 'False' },
      ],
    },
  };
  const cases: {
    name: string;
    patch: unknown;
    check: (result: typeof node) => unknown;
    expected: unknown;
  }[] = [
    {
      name: 'null removes spec.unschedulable (kubectl uncordon)',
      patch: { spec: { unschedulable: null } },
      check: (r) => r.spec.unschedulable,
      expected: undefined,
    },
    {
      name: 'taints are atomic: the patch list replaces the old one',
      patch: { spec: { taints: [{ key: 'k2', effect: 'NoExecute' }] } },
      check: (r) => r.spec.taints.map((t) => t.key),
      expected: ['k2'],
    },
    {
      name: 'conditions merge by type',
      patch: { status: { conditions: [{ type: 'Ready', status: 'False' }] } },
      check: (r) => r.status.conditions.map((c) => `${c.type}=${c.status}`),
      expected: ['Ready=False', 'DiskPressure=False'],
    },
    {
      name: '$patch: delete removes a keyed list item',
      patch: { status: { conditions: [{ type: 'DiskPressure', $patch: 'delete' }] } },
      check: (r) => r.status.conditions.map((c) => c.type),
      expected: ['Ready'],
    },
    {
      name: 'ownerReferences merge by uid',
      patch: { metadata: { ownerReferences: [{ uid: 'u2', name: 'two' }] } },
      check: (r) => r.metadata.ownerReferences.map((o) => o.name),
      expected: ['one', 'two'],
    },
    {
      name: 'finalizers merge as a set',
      patch: { metadata: { finalizers: ['x', 'y'] } },
      check: (r) => r.metadata.finalizers,
      expected: ['x', 'y'],
    },
    {
      name: '$deleteFromPrimitiveList removes finalizers',
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } },
      check: (r) => r.metadata.finalizers,
      expected: [],
    },
    {
      name: 'label maps merge and null deletes',
      patch: { metadata: { labels: { a: null, b: '2' } } },
      check: (r) => r.metadata.labels,
      expected: { b: '2' },
    },
  ];
  for (const { name, patch, check, expected } of cases) {
    void it(name, () => {
      assert.deepEqual(check(applyStrategicMergePatch(node, patch) as typeof node), expected);
    });
  }
});

void describe('JSON patch (RFC 6902)', () => {
  const target = { metadata: { annotations: { 'a/b': '1', 'c~d': '2' } }, list: [1, 2, 3] };
  const cases: { name: string; patch: unknown; expected: unknown }[] = [
    {
      name: 'remove with ~1 and ~0 escapes',
      patch: [
        { op: 'remove', path: '/metadata/annotations/a~1b' },
        { op: 'remove', path: '/metadata/annotations/c~0d' },
      ],
      expected: { metadata: { annotations: {} }, list: [1, 2, 3] },
    },
    {
      name: 'add to the end of a list with -',
      patch: [{ op: 'add', path: '/list/-', value: 4 }],
      expected: { metadata: target.metadata, list: [1, 2, 3, 4] },
    },
    {
      name: 'replace, move and copy',
      patch: [
        { op: 'replace', path: '/list/0', value: 9 },
        { op: 'copy', from: '/list/0', path: '/first' },
        { op: 'move', from: '/first', path: '/moved' },
      ],
      expected: { metadata: target.metadata, list: [9, 2, 3], moved: 9 },
    },
    {
      name: 'a passing test op changes nothing',
      patch: [{ op: 'test', path: '/metadata/annotations/a~1b', value: '1' }],
      expected: target,
    },
  ];
  for (const { name, patch, expected } of cases) {
    void it(name, () => {
      assert.deepEqual(applyJsonPatch(target, patch), expected);
    });
  }

  const failures: { name: string; patch: unknown; code: number }[] = [
    { name: 'a failing test op is 422', patch: [{ op: 'test', path: '/list/0', value: 7 }], code: 422 },
    {
      name: 'removing a missing key is 422',
      patch: [{ op: 'remove', path: '/metadata/labels/x' }],
      code: 422,
    },
    {
      name: 'replacing a missing key is 422',
      patch: [{ op: 'replace', path: '/metadata/annotations/zzz', value: 'v' }],
      code: 422,
    },
    { name: 'an object instead of an operation list is 400', patch: { op: 'add' }, code: 400 },
  ];
  for (const { name, patch, code } of failures) {
    void it(name, () => {
      assert.throws(
        () => applyJsonPatch(target, patch),
        (error: unknown) => error instanceof KubeApiError && error.code === code,
      );
    });
  }
});
