import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  describeCapzRollout,
  judgeRollout,
  resolveRollout,
  scaledCount,
} from '../../../shared/domain/capz-rollout.js';
import type { MachinePoolMachine, MachinePoolView } from '../../../shared/domain/cluster-api.js';

function aPool(overrides: Partial<MachinePoolView> = {}): MachinePoolView {
  return {
    namespace: 'default',
    name: 'capz-lab-mp-0',
    azureMachinePool: 'capz-lab-mp-0',
    clusterName: 'capz-lab',
    replicas: 12,
    autoscaled: false,
    resourceVersion: '7',
    ...overrides,
  };
}

void describe('scaledCount', () => {
  const cases: { value: number | string; replicas: number; roundUp: boolean; expected: number }[] = [
    { value: 1, replicas: 12, roundUp: true, expected: 1 },
    { value: '25%', replicas: 12, roundUp: true, expected: 3 },
    { value: '25%', replicas: 10, roundUp: true, expected: 3 },
    { value: '25%', replicas: 10, roundUp: false, expected: 2 },
    { value: '0%', replicas: 10, roundUp: true, expected: 0 },
    { value: '100%', replicas: 3, roundUp: false, expected: 3 },
    { value: '2', replicas: 3, roundUp: false, expected: 2 },
    { value: 'a lot', replicas: 3, roundUp: false, expected: 0 },
  ];
  for (const { value, replicas, roundUp, expected } of cases) {
    void it(`${String(value)} of ${replicas} rounded ${roundUp ? 'up' : 'down'} is ${expected}`, () => {
      assert.equal(scaledCount(value, replicas, roundUp), expected);
    });
  }
});

void describe('resolveRollout', () => {
  void it("takes CAPZ's defaults when the strategy is absent: surge 1, none unavailable, oldest first", () => {
    assert.deepEqual(resolveRollout(aPool()), {
      replicas: 12,
      surge: 1,
      unavailable: 0,
      deletePolicy: 'Oldest',
    });
  });
  void it('resolves percentages against replicas (surge up, unavailable down)', () => {
    const pool = aPool({
      replicas: 10,
      strategy: { maxSurge: '25%', maxUnavailable: '25%', deletePolicy: 'Newest' },
    });
    assert.deepEqual(resolveRollout(pool), {
      replicas: 10,
      surge: 3,
      unavailable: 2,
      deletePolicy: 'Newest',
    });
  });
  void it('lets one machine be unavailable when both resolve to zero (the rollout could not move)', () => {
    const pool = aPool({
      replicas: 2,
      strategy: { maxSurge: '0%', maxUnavailable: '10%', deletePolicy: 'Oldest' },
    });
    assert.equal(resolveRollout(pool).unavailable, 1);
  });
});

void describe('describeCapzRollout', () => {
  void it('says what CAPZ will do, word for word', () => {
    assert.equal(
      describeCapzRollout(
        aPool({ strategy: { maxSurge: '25%', maxUnavailable: 1, deletePolicy: 'Oldest' } }),
      ),
      'CAPZ will replace 12 machines of MachinePool default/capz-lab-mp-0, 1 unavailable at a time, ' +
        'surge 3 machines (25 %), oldest first',
    );
  });
  void it('says when no machine may be unavailable, and that the autoscaler owns the count', () => {
    assert.equal(
      describeCapzRollout(aPool({ replicas: 3, autoscaled: true })),
      'CAPZ will replace 3 machines (today’s count; the cluster-autoscaler owns replicas) of MachinePool ' +
        'default/capz-lab-mp-0, none unavailable (a new machine is Ready before an old one goes), surge 1 ' +
        'machine, oldest first',
    );
  });
});

void describe('judgeRollout', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  const machine = (name: string, overrides: Partial<MachinePoolMachine> = {}): MachinePoolMachine => ({
    name,
    instanceId: name.slice(-1),
    ready: true,
    latestModelApplied: true,
    provisioningState: 'Succeeded',
    createdAt: '2026-11-27T11:50:00Z',
    deleting: false,
    ...overrides,
  });
  const cases: { name: string; machines: MachinePoolMachine[]; expected: string; reason?: RegExp }[] = [
    { name: 'every machine new and Ready', machines: [machine('m-1'), machine('m-2')], expected: 'done' },
    {
      name: 'an old machine left',
      machines: [machine('m-1'), machine('m-2', { latestModelApplied: false })],
      expected: 'rolling',
    },
    {
      name: 'an old machine being deleted',
      machines: [machine('m-1'), machine('m-2'), machine('m-3', { deleting: true })],
      expected: 'rolling',
    },
    { name: 'fewer machines than replicas', machines: [machine('m-1')], expected: 'rolling' },
    {
      name: 'a new machine joining within the limit',
      machines: [machine('m-1'), machine('m-2', { ready: false })],
      expected: 'rolling',
    },
    {
      name: 'a new machine not Ready past the limit',
      machines: [machine('m-1'), machine('m-2', { ready: false, createdAt: '2026-11-27T11:30:00Z' })],
      expected: 'failed',
      reason:
        /machine m-2 built from the new image was not Ready 1800 s after it was created \(limit 1200 s\)/,
    },
    {
      name: 'a new machine that failed to provision',
      machines: [machine('m-1'), machine('m-2', { ready: false, provisioningState: 'Failed' })],
      expected: 'failed',
      reason: /machine m-2 built from the new image failed to provision/,
    },
  ];
  for (const { name, machines, expected, reason } of cases) {
    void it(name, () => {
      const verdict = judgeRollout(machines, 2, 1200, now);
      assert.equal(verdict.kind, expected);
      if (reason !== undefined) assert.match(verdict.kind === 'failed' ? verdict.reason : '', reason);
    });
  }
});
