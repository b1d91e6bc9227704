/**
 * The real-engine tier, file 4 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a live
 * capture, with a cluster run started over the running pool; then the reaper after a dead run (on the
 * cluster's own entry); then the engine's own patterns (#574, a sub-orchestration over a running id),
 * moved here from file 1 to keep each file well under the 3-minute budget. One engine and one world per
 * host for the file's scenarios, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createDurableRunner, createMemoryStore, createSystemClock } from '../../cli/runner/index.js';
import { ORCHESTRATION, poolInstanceId } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, ReapClusterResult } from '../../shared/application/refresh-contracts.js';
import { POOL1 } from '../e2e/harness.js';
import {
  overRunning,
  parentOverRunning,
  SEEDED_574,
  SEEDED_ACTIVITY,
  SEEDED_CHILD,
  SEEDED_PARENT,
  seeded574,
  seededActivity,
  waitingChild,
} from './seeded.js';
import {
  CLUSTER,
  differential,
  engineOf,
  LIVE_CLUSTER,
  type Observed,
  refreshed,
  skip,
  theEngine,
  useRealEngine,
} from './tier.js';
import { ageHeldLeases, nodesOf, patchAndReboot, terminateAtCordon } from './world-steps.js';

useRealEngine();

/** The fault that keeps the dead run from writing its scale set. */
const RECORD_FAILS = 'real-engine-dead-run-scale-set-write';

void describe('the real Durable engine (4 of 4)', { skip, concurrency: false }, () => {
  void it('captures live; a cluster run started over the running pool leaves it alone', async () => {
    const poolRun = poolInstanceId(LIVE_CLUSTER, POOL1);
    const clusterRuns: Record<string, Observed['ended']> = {};
    await differential(
      'live capture, a cluster run over it',
      poolRun,
      async (side) => {
        const input = { cluster: LIVE_CLUSTER, pool: POOL1, trigger: 'real-engine' };
        await side.start(ORCHESTRATION.refreshPool, input, poolRun);
        const clusterRun = `cluster-${LIVE_CLUSTER}`;
        await side.start(
          ORCHESTRATION.refreshCluster,
          { cluster: LIVE_CLUSTER, trigger: 'real-engine' },
          clusterRun,
        );
        clusterRuns[side.name] = await side.settle(clusterRun);
      },
      (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        assert.equal(result.captureMode, 'live', `${side.name}: captured live`);
        assert.equal(result.donorOutOfServiceSeconds, 0, `${side.name}: the donor kept serving`);
        const clusterRun = clusterRuns[side.name];
        assert.equal(clusterRun?.runtimeStatus, 'Completed', clusterRun?.failure);
        const pools = (clusterRun.output as ClusterRefreshResult).pools;
        assert.equal(pools.length, 1, `${side.name}: ${JSON.stringify(pools)}`);
        assert.equal(pools[0]?.outcome, 'skipped', `${side.name}: ${JSON.stringify(pools)}`);
        assert.match(pools[0]?.reason ?? '', /already refreshing/);
      },
    );
  });

  void it('reaps a dead run: the node a terminated run held is given back', async () => {
    const donors: Record<string, string> = {};
    await differential(
      'reaper after a dead run',
      'reap-prod',
      (side) =>
        side.start(ORCHESTRATION.reapCluster, { cluster: CLUSTER, trigger: 'real-engine' }, 'reap-prod'),
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Completed', ended.failure);
        const result = ended.output as ReapClusterResult;
        const pool = result.pools.find((entry) => entry.pool === POOL1);
        assert.equal(pool?.outcome, 'released', `${side.name}: ${JSON.stringify(result.pools)}`);
        const donor = nodesOf(side, CLUSTER, POOL1).find((node) => node.metadata.name === donors[side.name]);
        assert.ok(donor, `${side.name}: the dead run's donor is still a node`);
        assert.notEqual(donor.spec?.unschedulable, true, `${side.name}: the donor is uncordoned`);
        assert.deepEqual(
          Object.keys(donor.metadata.annotations ?? {}).filter((key) => key.startsWith('vmss-prototype')),
          [],
          `${side.name}: none of our annotations left`,
        );
      },
      {
        // A refresh dies once it cordoned its donor (terminated, as an operator or a lost host ends it)
        // and its lease is left to expire: what it held is the reaper's to give back.
        setup: async (side) => {
          await patchAndReboot(side, CLUSTER, [POOL1]);
          // The scale set cannot be written until the dead run is over (ARM answers 503): the engine acts
          // on the terminate a moment after the cordon, and a run that got on to record its donor's stop
          // in the meantime (its drain has nothing to evict on a node kured just drained) would leave the
          // reaper one more thing to give back than the runner's, terminated at the cordon itself.
          const faults = side.sim.running.faults;
          faults.add({
            id: RECORD_FAILS,
            api: 'arm',
            operation: 'Microsoft.Compute/virtualMachineScaleSets/write',
            status: 503,
            code: 'ServiceUnavailable',
            message: 'The service is temporarily unavailable.',
          });
          donors[side.name] = await terminateAtCordon(
            side,
            { cluster: CLUSTER, pool: POOL1, instanceId: 'dead-pool1' },
            () =>
              side.start(
                ORCHESTRATION.refreshPool,
                { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' },
                'dead-pool1',
              ),
          );
          await side.quiet();
          faults.remove(RECORD_FAILS);
          assert.equal(ageHeldLeases(side, CLUSTER).length, 1, `${side.name}: the dead run's lease`);
        },
      },
    );
  });

  // The canary of the tier: the #574 pattern must go wrong here as it does on Azure. The engine schedules
  // the re-sent activity again under a new id, and from there completions reach the wrong SDK tasks: the
  // run ends without the second activity's result. A correct host would return 'second'.

  void it('gets the seeded #574 pattern wrong, as the Functions host does', async () => {
    const started = Date.now();
    await theEngine().client.startNew(SEEDED_574, { instanceId: 'seeded-574' });
    const status = await engineOf().settle('seeded-574');
    const rows = await engineOf().history('seeded-574');
    console.log(
      `real-engine: seeded #574 (${((Date.now() - started) / 1000).toFixed(1)} s): ` +
        `${status.runtimeStatus} ${JSON.stringify(status.output ?? status.failure)}; history ${rows.join(' ')}`,
    );
    assert.equal(
      rows.filter((type) => type === 'TaskScheduled').length,
      3,
      'the pending activity scheduled twice, then the second one',
    );
    assert.notDeepEqual(
      { status: status.runtimeStatus, output: status.output },
      { status: 'Completed', output: 'second' },
      '#574: the re-yielded task must break the run on the engine',
    );
    // The local runner numbers actions as the extension does (cli/runner/extension-shim.ts), so the pattern
    // goes wrong there the same way; the runner before c1fd712 took ids from the SDK's open tasks and
    // returned 'second', hiding #574 until the real host ran it.
    const runner = createDurableRunner({
      orchestrators: { [SEEDED_574]: seeded574 },
      activities: { [SEEDED_ACTIVITY]: seededActivity },
      store: createMemoryStore(),
      clock: createSystemClock(),
    });
    const local = await runner.startOrchestration(SEEDED_574, null, 'seeded-574');
    console.log(
      `real-engine: seeded #574 on the local runner: ${local.runtimeStatus} ${JSON.stringify(local.output)}`,
    );
    assert.deepEqual(
      { status: local.runtimeStatus, output: local.output ?? null },
      { status: status.runtimeStatus, output: status.output ?? null },
      '#574: the local runner must go wrong as the engine does',
    );
  });
  // What the engine does with a sub-orchestration started under a running instance's id, which the local
  // runner models as a second execution over it (cli/runner/children.ts) and the product never relies on
  // (functions/orchestrations/pool-runs.ts looks at the id first): the two must agree.

  void it('starts a sub-orchestration over a running id as the local runner models it', async () => {
    const runner = createDurableRunner({
      orchestrators: { [SEEDED_PARENT]: parentOverRunning, [SEEDED_CHILD]: waitingChild },
      activities: {},
      store: createMemoryStore(),
      clock: createSystemClock(),
    });
    const engineSeen = await overRunning({
      start: async (name, input, instanceId) => {
        await theEngine().client.startNew(name, { instanceId, input });
      },
      status: async (instanceId) => {
        const status = await theEngine().client.getStatus(instanceId);
        return { runtimeStatus: String(status.runtimeStatus), output: status.output ?? null };
      },
      raise: (instanceId, data) => theEngine().client.raiseEvent(instanceId, 'go', data),
    });
    const runnerSeen = await overRunning({
      start: async (name, input, instanceId) => {
        void runner.startOrchestration(name, input, instanceId);
        await new Promise((done) => setImmediate(done));
      },
      status: async (instanceId) => {
        const status = await runner.getStatus(instanceId);
        return { runtimeStatus: String(status?.runtimeStatus), output: status?.output ?? null };
      },
      raise: async (instanceId, data) => {
        await runner.raiseEvent(instanceId, 'go', data);
      },
    });
    console.log(
      `real-engine: a sub-orchestration over a running id\n  engine: ${JSON.stringify(engineSeen)}\n` +
        `  runner: ${JSON.stringify(runnerSeen)}`,
    );
    assert.deepEqual(runnerSeen, engineSeen, 'the runner models the engine');
  });
});
