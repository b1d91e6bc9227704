/** The timing model's jitter: seeded, within each operation's spread, and what a jittered world runs on. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { durationOf, KAMINO_OBSERVED, type TimedOperation } from '../../../sim/contracts.js';
import { parseScenario } from '../../../sim/world/scenario.js';
import { SPREADS, triangularFactor, withJitter } from '../../../sim/world/timing.js';
import { createWorld } from '../../../sim/world/world.js';

const OPERATIONS = Object.keys(SPREADS) as TimedOperation[];

function draws(seed: number, operation: TimedOperation, count: number): number[] {
  const profile = withJitter(KAMINO_OBSERVED, seed);
  return Array.from({ length: count }, () => durationOf(profile, operation));
}

void describe('triangularFactor', () => {
  const spread = { low: 0.8, high: 1.3 };
  const cases: readonly [string, number, number][] = [
    ['the lowest quantile is the low bound', 0, 0.8],
    ['the mode (1) sits at its share of the width', 0.2 / 0.5, 1],
    ['the top quantile approaches the high bound', 1, 1.3],
  ];
  for (const [name, u, factor] of cases) {
    void it(name, () => assert.ok(Math.abs(triangularFactor(spread, u) - factor) < 1e-9));
  }

  void it('a spread without width gives its one value', () => {
    assert.equal(triangularFactor({ low: 1, high: 1 }, 0.7), 1);
  });
});

void describe('withJitter', () => {
  void it('gives every operation of the profile a spread around 1', () => {
    for (const operation of OPERATIONS) {
      const { low, high } = SPREADS[operation];
      assert.ok(low > 0 && low <= 1 && high >= 1, `${operation}: [${low}, ${high}]`);
    }
  });

  void it('draws the same durations for the same seed, others for another', () => {
    assert.deepEqual(draws(3, 'instanceStartSeconds', 20), draws(3, 'instanceStartSeconds', 20));
    assert.notDeepEqual(draws(3, 'instanceStartSeconds', 20), draws(4, 'instanceStartSeconds', 20));
  });

  void it('keeps each draw within the spread, and not all at the figure', () => {
    for (const operation of OPERATIONS) {
      const figure = KAMINO_OBSERVED[operation];
      const { low, high } = SPREADS[operation];
      const values = draws(11, operation, 50);
      for (const value of values) {
        assert.ok(
          value >= Math.floor(figure * low) && value <= Math.ceil(figure * high),
          `${operation}: ${value}`,
        );
      }
      if (figure >= 10) assert.ok(new Set(values).size > 1, `${operation} varies`);
    }
  });

  void it('keeps one operation’s stream apart from how often another one happens', () => {
    const profile = withJitter(KAMINO_OBSERVED, 5);
    durationOf(profile, 'snapshotCreateSeconds');
    durationOf(profile, 'snapshotCreateSeconds');
    assert.deepEqual(
      [durationOf(profile, 'instanceStartSeconds'), durationOf(profile, 'instanceStartSeconds')],
      draws(5, 'instanceStartSeconds', 2),
    );
  });
});

void describe('a world with jitter', () => {
  function startSeconds(jitter: boolean, seed: number): number[] {
    const world = createWorld({
      scenario: parseScenario({
        subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
        location: 'westeurope',
        start: '2026-11-22T12:00:00Z',
        seed,
        latency: { profile: 'kamino-observed', jitter },
        clusters: [
          {
            name: 'prod',
            resourceGroup: 'rg-K8s-Prod',
            scaleSets: [{ name: 'k8s-pool1-12345678-vmss', capacity: 4 }],
          },
        ],
      }),
    });
    try {
      const [scaleSet] = world.compute.listScaleSets();
      assert.ok(scaleSet);
      const instances = world.compute.listInstances(scaleSet.id);
      const seconds: number[] = [];
      for (const instance of instances) {
        world.compute.powerOffInstance(instance.id, { skipShutdown: true });
        world.clock.advanceBy(KAMINO_OBSERVED.instanceStopSeconds * 2);
        world.compute.startInstance(instance.id);
        let waited = 0;
        while (world.compute.getInstance(instance.id)?.powerState !== 'running' && waited < 120) {
          world.clock.advanceBy(1);
          waited += 1;
        }
        seconds.push(waited);
      }
      return seconds;
    } finally {
      world.stop();
    }
  }

  void it('starts its instances in drawn times within the spread; without, in the figure', () => {
    const figure = KAMINO_OBSERVED.instanceStartSeconds;
    assert.deepEqual(startSeconds(false, 1), [figure, figure, figure, figure]);
    const jittered = [...startSeconds(true, 1), ...startSeconds(true, 2)];
    assert.ok(new Set(jittered).size > 1, `start times ${jittered.join(', ')}`);
    const { low, high } = SPREADS.instanceStartSeconds;
    for (const value of jittered)
      assert.ok(value >= Math.floor(figure * low) && value <= Math.ceil(figure * high));
    assert.deepEqual(startSeconds(true, 1), startSeconds(true, 1), 'the same seed, the same times');
  });
});
