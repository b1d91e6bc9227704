/** Tests for the simulator's deep copy of stored JSON values (sim/deep-copy.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { deepCopy } from '../../sim/deep-copy.js';

void describe('deepCopy', () => {
  void it('copies JSON-shaped values as structuredClone does, sharing nothing with the source', () => {
    const source = {
      kind: 'Node',
      metadata: { name: 'n', labels: { a: 'b' }, finalizers: ['x'] },
      spec: { taints: [{ key: 'k', effect: 'NoSchedule' }], unset: undefined },
      status: { conditions: [[1, null, true, 'x']], count: 0 },
    };
    const copied = deepCopy(source);
    assert.deepEqual(copied, structuredClone(source));
    assert.ok('unset' in copied.spec, 'an undefined property stays');
    copied.metadata.labels.a = 'changed';
    copied.spec.taints[0]!.key = 'changed';
    copied.metadata.finalizers.push('y');
    assert.equal(source.metadata.labels.a, 'b');
    assert.equal(source.spec.taints[0]?.key, 'k');
    assert.deepEqual(source.metadata.finalizers, ['x']);
  });

  void it('keeps an own __proto__ key a key, and copies other kinds of object with structuredClone', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copied = deepCopy(parsed);
    assert.equal(Object.getPrototypeOf(copied), Object.prototype);
    assert.deepEqual(Object.keys(copied), ['__proto__', 'a']);
    assert.equal((copied as { polluted?: boolean }).polluted, undefined);

    const when = new Date('2026-11-22T12:00:00Z');
    const sparse: number[] = [1];
    sparse[2] = 3;
    const other = { when, map: new Map([['k', { v: 1 }]]), sparse };
    const otherCopy = deepCopy(other);
    assert.deepEqual(otherCopy, structuredClone(other));
    assert.notEqual(otherCopy.when, when);
    assert.ok(otherCopy.when instanceof Date);
    assert.notEqual(otherCopy.map.get('k'), other.map.get('k'));
    assert.equal(1 in otherCopy.sparse, false, 'a hole stays a hole');

    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: { b: 1 } });
    const bareCopy = deepCopy(bare);
    assert.deepEqual({ ...bareCopy }, { a: { b: 1 } });
    assert.notEqual(bareCopy['a'], bare['a']);
  });
});
