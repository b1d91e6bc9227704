/** Tests for fault rules (matching, counts, windows, probability) and the request log. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createClock } from '../../../sim/world/clock.js';
import {
  arm429Storm,
  createFaultInjector,
  type FaultRuleSpec,
  globToRegExp,
  imageVersionLroFailure,
  kubeApiDown,
  seededRandom,
} from '../../../sim/world/faults.js';
import { createRequestLog } from '../../../sim/world/request-log.js';

const START = Date.parse('2026-11-22T12:00:00Z');

void describe('globToRegExp', () => {
  const cases: { glob: string; operation: string; matches: boolean }[] = [
    {
      glob: 'Microsoft.Compute/snapshots/write',
      operation: 'Microsoft.Compute/snapshots/write',
      matches: true,
    },
    {
      glob: 'Microsoft.Compute/snapshots/write',
      operation: 'microsoft.compute/SNAPSHOTS/write',
      matches: true,
    },
    {
      glob: 'Microsoft.Compute/*',
      operation: 'Microsoft.Compute/galleries/images/versions/write',
      matches: true,
    },
    { glob: 'Microsoft.Compute/*/read', operation: 'Microsoft.Compute/disks/write', matches: false },
    { glob: 'pods/eviction:create', operation: 'pods/eviction:create', matches: true },
    { glob: 'pods/evictio?:create', operation: 'pods/eviction:create', matches: true },
    { glob: 'pods', operation: 'pods/eviction:create', matches: false },
    { glob: '*', operation: 'anything at all', matches: true },
    { glob: 'a.b', operation: 'axb', matches: false },
  ];
  for (const { glob, operation, matches } of cases) {
    void it(`${glob} ${matches ? 'matches' : 'does not match'} ${operation}`, () => {
      assert.equal(globToRegExp(glob).test(operation), matches);
    });
  }
});

function base(overrides: Partial<FaultRuleSpec> = {}): FaultRuleSpec {
  return {
    api: 'arm',
    operation: 'Microsoft.Compute/snapshots/write',
    status: 409,
    code: 'OperationNotAllowed',
    message: 'quota',
    ...overrides,
  };
}

void describe('fault injector', () => {
  void it('fails only matching requests of the right API', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const faults = createFaultInjector({ clock });
    faults.add(base());
    assert.equal(faults.check('kube', 'Microsoft.Compute/snapshots/write'), undefined);
    assert.equal(faults.check('arm', 'Microsoft.Compute/disks/read'), undefined);
    assert.deepEqual(faults.check('arm', 'Microsoft.Compute/snapshots/write'), {
      status: 409,
      code: 'OperationNotAllowed',
      message: 'quota',
    });
  });

  void it('retires a counted rule after `times` failures', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const faults = createFaultInjector({ clock });
    faults.add(base({ times: 2, retryAfterSeconds: 3 }));
    assert.equal(faults.check('arm', 'Microsoft.Compute/snapshots/write')?.retryAfterSeconds, 3);
    assert.ok(faults.check('arm', 'Microsoft.Compute/snapshots/write'));
    assert.equal(faults.check('arm', 'Microsoft.Compute/snapshots/write'), undefined);
    assert.equal(faults.rules()[0]?.fired, 2);
  });

  void it('applies a rule only inside its simulated time window', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const faults = createFaultInjector({ clock });
    faults.add(base({ fromMs: START + 60_000, untilMs: START + 120_000 }));
    assert.equal(faults.check('arm', 'Microsoft.Compute/snapshots/write'), undefined);
    clock.advanceBy(60);
    assert.ok(faults.check('arm', 'Microsoft.Compute/snapshots/write'));
    clock.advanceBy(60);
    assert.equal(faults.check('arm', 'Microsoft.Compute/snapshots/write'), undefined);
  });

  void it('fails a seeded share of requests, the same ones on every run', () => {
    const outcomes = (): boolean[] => {
      const clock = createClock({ mode: 'manual', startMs: START });
      const faults = createFaultInjector({ clock, seed: 42 });
      faults.add(base({ probability: 0.3 }));
      return Array.from(
        { length: 200 },
        () => faults.check('arm', 'Microsoft.Compute/snapshots/write') !== undefined,
      );
    };
    const first = outcomes();
    assert.deepEqual(outcomes(), first);
    const failed = first.filter(Boolean).length;
    assert.ok(failed > 30 && failed < 90, `expected about 60 failures, got ${failed}`);
  });

  void it('removes and clears rules and refuses invalid ones', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const faults = createFaultInjector({ clock });
    const rule = faults.add(base({ id: 'quota' }));
    assert.throws(() => faults.add(base({ id: 'quota' })), /id is taken/);
    assert.throws(() => faults.add(base({ status: 200 })), /400–599/);
    assert.throws(() => faults.add(base({ times: 0 })), /positive integer/);
    assert.throws(() => faults.add(base({ probability: 1.5 })), /probability/);
    assert.throws(() => faults.add(base({ fromMs: 10, untilMs: 5 })), /ends before it starts/);
    assert.equal(faults.remove(rule.id), true);
    assert.equal(faults.remove(rule.id), false);
    faults.add(base());
    faults.clear();
    assert.deepEqual(faults.rules(), []);
  });

  void it('presets: a 429 storm with Retry-After, an outage window, an LRO failure on the #lro operation', () => {
    const clock = createClock({ mode: 'manual', startMs: START });
    const faults = createFaultInjector({ clock });
    faults.add(arm429Storm(clock, { seconds: 30, retryAfterSeconds: 7 }));
    faults.add(kubeApiDown(clock, { seconds: 10, startInSeconds: 5 }));
    faults.add(imageVersionLroFailure());
    assert.deepEqual(
      [
        faults.check('arm', 'Microsoft.Compute/virtualMachineScaleSets/read')?.status,
        faults.check('kube', 'nodes:list'),
      ],
      [429, undefined],
    );
    assert.equal(faults.check('arm', 'x')?.retryAfterSeconds, 7);
    clock.advanceBy(6);
    assert.equal(faults.check('kube', 'nodes:list')?.status, 503);
    clock.advanceBy(30);
    assert.equal(faults.check('arm', 'Microsoft.Compute/virtualMachineScaleSets/read'), undefined);
    assert.equal(
      faults.check('arm', 'Microsoft.Compute/galleries/images/versions/write#lro')?.code,
      'ReplicationJobsNotCompleted',
    );
    assert.equal(faults.check('arm', 'Microsoft.Compute/galleries/images/versions/write#lro'), undefined);
  });

  void it('seededRandom is deterministic and within [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    for (let index = 0; index < 100; index++) {
      const value = a();
      assert.equal(value, b());
      assert.ok(value >= 0 && value < 1);
    }
  });
});

void describe('request log', () => {
  void it('counts per api, operation and status, with totals, snapshot and reset', () => {
    const log = createRequestLog();
    log.record('arm', 'Microsoft.Compute/snapshots/write', 201);
    log.record('arm', 'Microsoft.Compute/snapshots/write', 429);
    log.record('arm', 'Microsoft.Compute/snapshots/write', 201);
    log.record('kube', 'nodes:list', 200);
    assert.equal(log.total(), 4);
    assert.equal(log.count({ api: 'arm' }), 3);
    assert.equal(log.count({ status: 201 }), 2);
    assert.equal(log.count({ api: 'kube', operation: 'nodes:list' }), 1);
    const snapshot = log.snapshot();
    assert.deepEqual(snapshot.byApi, { arm: 3, kube: 1 });
    assert.deepEqual(snapshot.entries[0], {
      api: 'arm',
      operation: 'Microsoft.Compute/snapshots/write',
      status: 201,
      count: 2,
    });
    log.reset();
    assert.equal(log.total(), 0);
  });
});
