import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  admissionJitterSeconds,
  admissionShape,
  clustersBySubscription,
  nextAdmissionCheckMs,
  nextAdmittedPool,
} from '../../../shared/domain/admission.js';

void describe('admissionShape', () => {
  const cases: [perSubscription: number, perCluster: number, poolsAtOnce: number, poolsPerCluster: number][] =
    [
      [8, 4, 8, 4],
      [3, 4, 3, 3],
      [10, 4, 10, 4],
      [1, 20, 1, 1],
      [100, 1, 100, 1],
      [0, 0, 1, 1],
    ];
  for (const [perSubscription, perCluster, poolsAtOnce, poolsPerCluster] of cases) {
    void it(`${perSubscription} per subscription, ${perCluster} per cluster → ${poolsAtOnce}, ${poolsPerCluster} per cluster`, () => {
      assert.deepEqual(admissionShape(perSubscription, perCluster), { poolsAtOnce, poolsPerCluster });
    });
  }
});

void describe('nextAdmittedPool', () => {
  const shape = { poolsAtOnce: 3, poolsPerCluster: 2 };
  const queue = [
    { cluster: 'a', pool: 'p1', notBeforeMs: 0 },
    { cluster: 'a', pool: 'p2', notBeforeMs: 50 },
    { cluster: 'b', pool: 'p1', notBeforeMs: 10 },
  ];
  const cases: [name: string, running: Record<string, number>, nowMs: number, expected: number][] = [
    ['the first whose jitter ended', {}, 100, 0],
    ['not before its jitter ends', {}, 5, 0],
    ['a later one when the first waits for its jitter', { a: 0 }, 20, 0],
    ['the next cluster when the first cluster is full', { a: 2 }, 100, 2],
    ['none while the subscription is full', { a: 2, b: 1 }, 100, -1],
    ['none whose jitter ended in a cluster with room', { a: 2 }, 5, -1],
  ];
  for (const [name, running, nowMs, expected] of cases) {
    void it(name, () => {
      assert.equal(nextAdmittedPool(queue, new Map(Object.entries(running)), shape, nowMs), expected);
    });
  }
  void it('the order of the queue among those that may start', () => {
    assert.equal(nextAdmittedPool(queue.slice(1), new Map(), shape, 20), 1);
    assert.equal(nextAdmittedPool(queue.slice(1), new Map(), shape, 60), 0);
  });
});

void describe('nextAdmissionCheckMs', () => {
  const queue = [
    { cluster: 'a', pool: 'p1', notBeforeMs: 30_000 },
    { cluster: 'b', pool: 'p1', notBeforeMs: 90_000 },
  ];
  const cases: [
    name: string,
    queued: typeof queue,
    slotFree: boolean,
    nowMs: number,
    expected: number | undefined,
  ][] = [
    ['nothing queued: no wake', [], true, 0, undefined],
    ['a slot free: when the earliest jitter ends', queue, true, 0, 30_000],
    ['a jitter ended: a second from now at the soonest', queue, true, 40_000, 41_000],
    ['no slot free: at the next check', queue, false, 0, 60_000],
    ['the check when it comes before the jitter', queue.slice(1), true, 0, 60_000],
  ];
  for (const [name, queued, slotFree, nowMs, expected] of cases) {
    void it(name, () => {
      assert.equal(nextAdmissionCheckMs(queued, slotFree, nowMs, 60_000), expected);
    });
  }
});

void describe('clustersBySubscription', () => {
  void it('groups without case, subscriptions and clusters in name order', () => {
    assert.deepEqual(
      clustersBySubscription([
        { name: 'west', subscriptionId: 'BBBB' },
        { name: 'east', subscriptionId: 'aaaa' },
        { name: 'central', subscriptionId: 'bbbb' },
      ]),
      [
        { subscriptionId: 'aaaa', clusters: ['east'] },
        { subscriptionId: 'bbbb', clusters: ['central', 'west'] },
      ],
    );
  });
});

void describe('admissionJitterSeconds', () => {
  void it('is the same for the same key and within the window', () => {
    const keys = Array.from({ length: 200 }, (_, index) => `refresh-subscription:s|c${index}`);
    const delays = keys.map((key) => admissionJitterSeconds(key, 120));
    assert.deepEqual(
      keys.map((key) => admissionJitterSeconds(key, 120)),
      delays,
    );
    assert.ok(delays.every((delay) => Number.isInteger(delay) && delay >= 0 && delay < 120));
    // Spread: 200 keys fall into more than half of the twelve 10-second slices.
    assert.ok(new Set(delays.map((delay) => Math.floor(delay / 10))).size > 6);
  });

  void it('is 0 without a window', () => {
    assert.equal(admissionJitterSeconds('any', 0), 0);
  });
});
