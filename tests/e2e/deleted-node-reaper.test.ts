/**
 * A dead run's donor whose Node object is deleted (`kubectl delete node`) while its VM is stopped, healed
 * by the reaper alone (issue 50, finding 1): a refresh in its own process is SIGKILLed while the donor's
 * VM is stopped for the snapshot, the Node is deleted, and only `reapCluster` runs after that, every 5
 * simulated minutes. The node's marker went with the Node: the reaper finds the VM by the record the run
 * wrote on the scale set before the power-off (domain/stop-record.ts), starts it, removes the record, and
 * the kubelet registers the node again. The time is simulated minutes from the death to the tick after
 * which the node is registered and Ready-bound (manual clock: not the machine's speed).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { connectionOf } from '../../cli/sim-session.js';
import { ORCHESTRATION, reapInstanceId } from '../../shared/application/orchestration-ids.js';
import { CAPTURE_RUN_ANNOTATION } from '../../shared/domain/cluster-node.js';
import { STOP_TAG_PREFIX } from '../../shared/domain/stop-record.js';
import { writeConnectionFile } from '../../sim/connection.js';
import type { RunningSimulator } from '../../sim/index.js';
import { runChild } from './fixtures/crash-sweep.js';
import { POOL2, startHarness } from './harness.js';

const MINUTE_MS = 60_000;
const PERIOD_MS = 5 * MINUTE_MS;
const NO_CANARY = JSON.stringify({ canary: { enabled: false } });

interface NodeObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { providerID?: string };
}

function nodes(running: RunningSimulator): NodeObject[] {
  return [...running.world.clusters.values()].flatMap((handle) =>
    handle.world.store.list('nodes').map((object) => object as unknown as NodeObject),
  );
}

function pool2(running: RunningSimulator) {
  const scaleSet = running.world.compute.listScaleSets().find((candidate) => candidate.name === POOL2);
  assert.ok(scaleSet, `scale set ${POOL2} exists`);
  return scaleSet;
}

void describe('a dead run’s donor whose node object was deleted', { timeout: 10 * 60_000 }, () => {
  void it('is started and registered again by the reaper alone', async (t) => {
    const harness = await startHarness({ clock: 'manual' });
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-deleted-node-'));
    try {
      const running = harness.sim.running;
      const connection = join(dir, 'connection.json');
      await writeConnectionFile(connection, connectionOf(running));
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

      // `kubectl delete node` on the donor: its marker (the other record of the stopped VM) goes with it.
      const [donor, ...others] = nodes(running).filter(
        (node) => node.metadata.annotations?.[CAPTURE_RUN_ANNOTATION] !== undefined,
      );
      assert.ok(donor !== undefined && others.length === 0, 'the dead run holds one donor');
      const instanceId = donor.spec?.providerID?.split('/').at(-1) ?? '';
      const vm = () =>
        running.world.compute.listInstances(pool2(running).id).find((i) => i.instanceId === instanceId);
      assert.match(vm()?.powerState ?? 'gone', /^(stopped|deallocated)$/, 'the donor’s VM is off');
      assert.deepEqual(
        Object.keys(pool2(running).tags).filter((key) => key.startsWith(STOP_TAG_PREFIX)),
        [`${STOP_TAG_PREFIX}${instanceId}`],
        'the run recorded the stop on the scale set before the power-off',
      );
      for (const handle of running.world.clusters.values()) {
        if (handle.world.store.get('nodes', undefined, donor.metadata.name) !== undefined)
          handle.world.store.remove('nodes', undefined, donor.metadata.name);
      }

      let healedMs: number | undefined;
      let startedAtMinute: number | undefined;
      let tickMs = Math.floor(deathMs / PERIOD_MS) * PERIOD_MS;
      while (healedMs === undefined) {
        tickMs += PERIOD_MS;
        assert.ok(tickMs - deathMs <= 40 * MINUTE_MS, 'healed within 40 minutes');
        running.clock.advanceTo(tickMs);
        const status = await harness.run(
          ORCHESTRATION.reapCluster,
          { cluster: 'prod', trigger: 'reaper-timer', runSeed: `tick-${tickMs}` },
          reapInstanceId('prod'),
        );
        assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
        if (vm()?.powerState !== 'running') continue;
        startedAtMinute = (running.clock.nowMs() - deathMs) / MINUTE_MS;
        // The VM runs: its kubelet registers the node once it booted (watched every 10 s).
        const registered = () => nodes(running).some((node) => node.metadata.name === donor.metadata.name);
        while (!registered() && running.clock.nowMs() - tickMs < PERIOD_MS) running.clock.advanceBy(10);
        assert.ok(registered(), 'the kubelet registered the node again');
        healedMs = running.clock.nowMs();
      }

      const minutes = (healedMs - deathMs) / MINUTE_MS;
      const line =
        `deleted node: the VM ran again ${startedAtMinute?.toFixed(1) ?? '?'} and node ${donor.metadata.name} ` +
        `was registered again ${minutes.toFixed(1)} simulated minutes after the death, by the reaper alone`;
      t.diagnostic(line);
      console.log(line);
      assert.equal(vm()?.powerState, 'running');
      assert.deepEqual(
        Object.keys(pool2(running).tags).filter((key) => key.startsWith(STOP_TAG_PREFIX)),
        [],
        'the record is gone',
      );
      // The lease (15 minutes) must expire first; the tick after it gives back.
      assert.ok(minutes <= 15 + 5 + 3, `healed ${minutes.toFixed(1)} minutes after the death`);
    } finally {
      await harness.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
