import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  admissionJitterSeconds,
  admissionShape,
  clustersBySubscription,
} from '../../../shared/domain/admission.js';

void describe('admissionShape', () => {
  const cases: [
    perSubscription: number,
    perCluster: number,
    clustersAtOnce: number,
    poolsPerCluster: number,
  ][] = [
    [8, 4, 2, 4],
    [3, 4, 1, 3],
    [4, 4, 1, 4],
    [10, 4, 2, 4],
    [1, 20, 1, 1],
    [100, 1, 100, 1],
    [0, 0, 1, 1],
  ];
  for (const [perSubscription, perCluster, clustersAtOnce, poolsPerCluster] of cases) {
    void it(`${perSubscription} per subscription, ${perCluster} per cluster → ${clustersAtOnce} × ${poolsPerCluster}`, () => {
      const shape = admissionShape(perSubscription, perCluster);
      assert.deepEqual(shape, { clustersAtOnce, poolsPerCluster });
      assert.ok(
        shape.clustersAtOnce * shape.poolsPerCluster <= Math.max(1, perSubscription),
        'never above the cap',
      );
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
