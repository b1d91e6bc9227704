/**
 * Kubernetes and donor faults during a pool refresh: the API server down while draining or restoring,
 * a PodDisruptionBudget that never allows, the donor deleted by the autoscaler, a donor VM that does
 * not start again. Each scenario asserts the outcome and every invariant.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult, ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { kubeApiDown } from '../../sim/world/faults.js';
import { nodeOf, POOL2, withUndrainablePod } from '../e2e/harness.js';
import { assertInvariants, failureOf, startChaos, summaryTable } from './chaos-harness.js';

const DONOR = nodeOf(POOL2, 1);

function outcomeOf(status: {
  runtimeStatus: string;
  failure?: { ErrorMessage?: string } | undefined;
}): string {
  return status.runtimeStatus === 'Completed'
    ? 'refreshed'
    : `failed at ${(status.failure?.ErrorMessage ?? '').split(':')[0] ?? ''}`;
}

void describe('Kubernetes and donor faults during a refresh', { concurrency: false }, () => {
  after(() => {
    console.log(summaryTable('chaos: Kubernetes and donor faults'));
  });

  void it('the API server down for 30 s while draining: retried, the run succeeds', async () => {
    const chaos = await startChaos();
    try {
      const running = chaos.harness.sim.running;
      chaos.onStep('draining', () => running.faults.add(kubeApiDown(running.clock, { seconds: 30 })));
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.ok(
        running.faults.rules().some((rule) => rule.fired > 0),
        'the outage hit the run',
      );
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed');
      assertInvariants(chaos, 'kube API down 30 s while draining', 'refreshed', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('the API server down for 10 min while draining: the node is restored once it is back', async () => {
    const chaos = await startChaos();
    try {
      const running = chaos.harness.sim.running;
      chaos.onStep('draining', () => running.faults.add(kubeApiDown(running.clock, { seconds: 600 })));
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(failureOf(status), /^draining: /);
      assertInvariants(chaos, 'kube API down 10 min while draining', outcomeOf(status), {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('the API server down for 45 min while the node is held: given back once it answers, and the failure says so', async () => {
    const chaos = await startChaos();
    try {
      const running = chaos.harness.sim.running;
      let downFrom = 0;
      chaos.onStep('draining', () => {
        downFrom = running.clock.nowMs();
        running.faults.add(kubeApiDown(running.clock, { seconds: 45 * 60 }));
      });
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.equal(status.runtimeStatus, 'Failed');
      const message = failureOf(status);
      assert.match(message, /^draining: /);
      assert.match(
        message,
        new RegExp(`node ${DONOR} was given back at (\\S+), once the cluster's API server answered again`),
      );
      const givenBackAt = Date.parse(/given back at (\S+),/.exec(message)?.[1] ?? '');
      assert.ok(givenBackAt >= downFrom + 45 * 60_000, 'given back after the outage ended');
      assert.ok(
        chaos
          .statusDetails()
          .some((detail) =>
            /^waiting to give node .* back \(attempt \d+ failed: .*\); next attempt at .*, trying until /.test(
              detail,
            ),
          ),
        'the custom status said what the run waited for',
      );
      assertInvariants(chaos, 'kube API down 45 min while the node is held', outcomeOf(status), {
        message,
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('the API server down for 30 s while restoring: retried, the run succeeds', async () => {
    const chaos = await startChaos();
    try {
      const running = chaos.harness.sim.running;
      chaos.onStep('restoring-node', () => running.faults.add(kubeApiDown(running.clock, { seconds: 30 })));
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.ok(
        running.faults.rules().some((rule) => rule.fired > 0),
        'the outage hit the run',
      );
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assertInvariants(chaos, 'kube API down 30 s while restoring', 'refreshed', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('the API server down for 10 min while restoring: the node is restored once it is back', async () => {
    const chaos = await startChaos();
    try {
      const running = chaos.harness.sim.running;
      chaos.onStep('restoring-node', () => running.faults.add(kubeApiDown(running.clock, { seconds: 600 })));
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assertInvariants(chaos, 'kube API down 10 min while restoring', outcomeOf(status), {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  // The API server away while the donor's VM is stopped. The run's start of the VM
  // is fenced by the pool's lease, which lives in the cluster: it must wait for the API server as long as
  // the node's own restore does, and never leave the VM stopped once the node is given back.
  for (const minutes of [5, 20, 45]) {
    void it(`the API server down for ${minutes} min while the VM is stopped: the VM runs again`, async () => {
      const chaos = await startChaos();
      try {
        const running = chaos.harness.sim.running;
        chaos.onStep('snapshotting', () =>
          running.faults.add(kubeApiDown(running.clock, { seconds: minutes * 60 })),
        );
        const status = await chaos.refreshPool(POOL2, { node: DONOR });
        assert.ok(
          running.faults.rules().some((rule) => rule.fired > 0),
          'the outage hit the run',
        );
        assertInvariants(chaos, `kube API down ${minutes} min while the VM is stopped`, outcomeOf(status), {
          message: failureOf(status),
        });
      } finally {
        await chaos.stop();
      }
    });
  }

  void it('eviction blocked forever by a PodDisruptionBudget: drain timeout, clean failure', async () => {
    const chaos = await startChaos({
      scenario: withUndrainablePod(DONOR),
      settings: (cluster) => {
        cluster.capture = { ...cluster.capture, drainTimeout: '3m' };
      },
    });
    try {
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.equal(status.runtimeStatus, 'Failed');
      const message = failureOf(status);
      assert.match(message, /^draining: timed out after \d+ s: 1 pods left: default\/singleton-db-/);
      assert.match(message, /disruption budget/i);
      assertInvariants(chaos, 'PDB blocks eviction forever', 'failed at draining (timeout)', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('the donor deleted by the autoscaler mid-run: clean failure, nothing left', async () => {
    const chaos = await startChaos();
    try {
      const world = chaos.harness.sim.running.world;
      chaos.onStep('waiting-for-power-off', () => world.deleteNode(DONOR));
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(failureOf(status), new RegExp(`${DONOR}|instance 1`));
      assertInvariants(chaos, 'donor deleted mid-run', outcomeOf(status), { message: failureOf(status) });
    } finally {
      await chaos.stop();
    }
  });

  void it('the donor VM fails to start again: the node stays marked, and the reaper gives both back', async () => {
    const chaos = await startChaos();
    try {
      const running = chaos.harness.sim.running;
      const allocation = running.faults.add({
        api: 'arm',
        operation: 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/start/action#lro',
        status: 500,
        code: 'AllocationFailed',
        message:
          'Allocation failed. We do not have sufficient capacity for the requested VM size in this region.',
      });
      const status = await chaos.refreshPool(POOL2, { node: DONOR });
      assert.equal(status.runtimeStatus, 'Failed');
      const message = failureOf(status);
      assert.match(message, /starting-instance|restoring-node/);
      assert.match(message, new RegExp(`node ${DONOR} is kept cordoned and marked`));
      // The marks are the record of the stopped VM: the node is not given back while its VM is stopped.
      assert.ok(
        chaos.invariants().some((check) => !check.ok && /annotated/.test(check.name)),
        'the node keeps our marks',
      );

      // Capacity is back; the next timer tick's reaper (no operator command) starts the VM and gives
      // the node back.
      running.faults.remove(allocation.id);
      const reaped = await chaos.runner.startOrchestration(
        ORCHESTRATION.releasePool,
        { cluster: 'prod', pool: POOL2, trigger: 'timer' },
        'reap-after-failed-start',
      );
      assert.equal(reaped.runtimeStatus, 'Completed', failureOf(reaped));
      assert.equal((reaped.output as ReleasePoolResult).outcome, 'released');
      assertInvariants(chaos, 'donor VM fails to start, then reaped', 'failed, then released', {
        message,
      });
    } finally {
      await chaos.stop();
    }
  });
});
