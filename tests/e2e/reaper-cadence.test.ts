/**
 * The reaper on its own timer, end to end on the simulator with a manual clock: a refresh in
 * its own process is SIGKILLed while it holds its donor (cordoned, marked, VM stopped for the snapshot)
 * and is never resumed. Only the reaper runs after that: `reapCluster` every 5 simulated minutes, on the
 * minutes NCRONTAB `0 *\/5 * * * *` fires at. While the dead run's lease is live the reaper leaves the pool
 * alone; the first tick after it expired gives everything back. Give-back time is simulated minutes from
 * the death to the end of the tick that gave the node back (the manual clock moves only on durable timers
 * and these ticks, so the figure does not depend on the machine's speed; the ticks' phase follows the
 * wall-clock minute the world started at, so it lies between expiry + ~1 and expiry + 5 + ~1 minutes).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { connectionOf } from '../../cli/sim-session.js';
import { ORCHESTRATION, reapInstanceId } from '../../shared/application/orchestration-ids.js';
import { poolScope } from '../../shared/application/pool-holdings.js';
import type { ReapClusterResult } from '../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION } from '../../shared/domain/cluster-node.js';
import { LEASE_DURATION_SECONDS, leaseState } from '../../shared/domain/ownership.js';
import { writeConnectionFile } from '../../sim/connection.js';
import type { RunningSimulator } from '../../sim/index.js';
import { checkInvariants, takeBefore } from '../chaos/invariants.js';
import { runChild } from './fixtures/crash-sweep.js';
import { POOL2, startHarness } from './harness.js';

const MINUTE_MS = 60_000;
/** VMSSP_REAPER_SCHEDULE's default, `0 *\/5 * * * *`: at every fifth minute. */
const PERIOD_MS = 5 * MINUTE_MS;
const NO_CANARY = JSON.stringify({ canary: { enabled: false } });

interface HeldDonor {
  readonly node: string;
  readonly cordoned: boolean;
  readonly vm: string;
}

/** The nodes of pool 2 that carry a run's marker, with their VM's power state. */
function heldDonors(running: RunningSimulator): HeldDonor[] {
  const compute = running.world.compute;
  const scaleSet = compute.listScaleSets().find((candidate) => candidate.name === POOL2);
  assert.ok(scaleSet, `scale set ${POOL2} exists`);
  const held: HeldDonor[] = [];
  for (const handle of running.world.clusters.values()) {
    for (const object of handle.world.store.list('nodes')) {
      const node = object as unknown as {
        metadata: { name: string; annotations?: Record<string, string> };
        spec?: { unschedulable?: boolean; providerID?: string };
      };
      if (node.metadata.annotations?.[CAPTURE_RUN_ANNOTATION] === undefined) continue;
      const instanceId = node.spec?.providerID?.split('/').at(-1) ?? '';
      const vm = compute.listInstances(scaleSet.id).find((candidate) => candidate.instanceId === instanceId);
      held.push({
        node: node.metadata.name,
        cordoned: node.spec?.unschedulable === true,
        vm: vm?.powerState ?? 'gone',
      });
    }
  }
  return held;
}

void describe('the reaper timer gives back a dead run’s node', { timeout: 10 * 60_000 }, () => {
  void it('within the lease’s expiry plus one reaper period of the death', async (t) => {
    const harness = await startHarness({ clock: 'manual' });
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-reaper-'));
    try {
      const running = harness.sim.running;
      const before = takeBefore(running);
      const connection = join(dir, 'connection.json');
      await writeConnectionFile(connection, connectionOf(running));

      // The refresh dies while its donor's VM is stopped for the snapshot; its state dir is never used again.
      const killed = await runChild([
        connection,
        join(dir, 'state'),
        `refresh:prod:${POOL2}`,
        'step:snapshotting',
        POOL2,
        NO_CANARY,
        'drain-and-stop',
      ]);
      assert.equal(killed.signal, 'SIGKILL', `the run died (${killed.stderr})`);
      const deathMs = running.clock.nowMs();
      const [donor, ...others] = heldDonors(running);
      assert.ok(donor !== undefined && others.length === 0, 'the dead run holds one donor');
      assert.equal(donor.cordoned, true, 'the donor is cordoned');
      assert.match(donor.vm, /^(stopped|deallocated)$/, `the donor's VM is off (${donor.vm})`);
      const handle = await harness.composition.dependencies.cluster('prod');
      const { lease: ref } = await poolScope(handle, POOL2);
      const lease = leaseState(await handle.kube.leases.get(ref.namespace, ref.name), new Date(deathMs));
      assert.ok(lease.kind === 'held' && lease.live, 'the dead run still holds a live lease');
      const expiresMinutes = (Date.parse(lease.expiresAt) - deathMs) / MINUTE_MS;

      const ticks: { atMinute: number; outcome: string }[] = [];
      let backMs: number | undefined;
      let tickMs = Math.floor(deathMs / PERIOD_MS) * PERIOD_MS;
      while (backMs === undefined) {
        tickMs += PERIOD_MS;
        assert.ok(
          tickMs - deathMs <= 30 * MINUTE_MS,
          `given back within 30 minutes (ticks: ${JSON.stringify(ticks)})`,
        );
        running.clock.advanceTo(tickMs);
        const status = await harness.run(
          ORCHESTRATION.reapCluster,
          { cluster: 'prod', trigger: 'reaper-timer', runSeed: `tick-${tickMs}` },
          reapInstanceId('prod'),
        );
        assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
        const pool = (status.output as ReapClusterResult).pools.find((result) => result.pool === POOL2);
        ticks.push({ atMinute: (tickMs - deathMs) / MINUTE_MS, outcome: pool?.outcome ?? 'absent' });
        if (heldDonors(running).length === 0) backMs = running.clock.nowMs();
        else assert.equal(pool?.outcome, 'held', 'a live lease is left alone');
      }

      const minutes = (backMs - deathMs) / MINUTE_MS;
      const line =
        `reaper cadence: the dead run's node was back ${minutes.toFixed(1)} simulated minutes after the death ` +
        `(its lease expired at +${expiresMinutes.toFixed(1)}m; ticks at ` +
        `+${ticks.map((tick) => `${tick.atMinute.toFixed(1)}m ${tick.outcome}`).join(', +')})`;
      t.diagnostic(line);
      console.log(line);
      assert.equal(ticks.at(-1)?.outcome, 'released');
      // The first tick after the lease expired gave it back: within the expiry plus one period of the death
      // (at most 15 + 5 minutes; where in that window depends on the wall-clock minute the world started).
      const lastTickMinutes = ticks.at(-1)?.atMinute ?? Infinity;
      assert.ok(expiresMinutes <= LEASE_DURATION_SECONDS / 60);
      assert.ok(lastTickMinutes >= expiresMinutes, 'nothing was taken before the lease expired');
      assert.ok(
        lastTickMinutes <= expiresMinutes + PERIOD_MS / MINUTE_MS,
        `the giving tick started ${lastTickMinutes} minutes after the death`,
      );
      // Giving back itself (start the VM, uncordon, delete the snapshot) takes about a minute.
      assert.ok(
        minutes - lastTickMinutes <= 2,
        `given back in ${(minutes - lastTickMinutes).toFixed(1)} minutes`,
      );
      // Everything the dead run held is given back: node as before, VM running, snapshot and pod gone.
      const broken = checkInvariants(running, before).filter((check) => !check.ok);
      assert.deepEqual(broken, [], 'the world is as before the run');
    } finally {
      await harness.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
