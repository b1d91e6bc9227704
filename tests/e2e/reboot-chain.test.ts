/**
 * The whole reboot chain on the simulator, with the notices delivered at the moment of the reboot as
 * Health Resources (and kured's --notify-url) deliver them: kured patches and reboots a node → Health
 * Resources events on the storage queue (Azurite) → queue trigger → pool debounce → quiet period and
 * minimumReadyTime → the planned refresh finds the node Ready a minute too briefly → the debounce re-arms
 * for the shortfall → one refresh from the rebooted node → its version in the model.
 *
 * The pool was refreshed just before, so the rebooted node is the only one with newer patches: without the
 * re-arm nothing would be built until the next timer tick (hours). The simulated latency reboot → model is
 * printed (goal: quiet period + minimumReadyTime + ≤ 20 minutes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { PoolSignalResult } from '../../functions/orchestrations/pool-signal.orchestration.js';
import { ORCHESTRATION, signalInstanceId } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { compareImageVersions } from '../../shared/domain/image-version.js';
import { startHealthEventEmitter } from '../../sim/events/health-resources-emitter.js';
import { assertIdentityClean } from './harness.js';
import { type RebootHarness, startRebootHarness } from './reboot-harness.js';

const POOL = 'k8s-pool1-12345678-vmss';
const NODE = `${POOL}000000`;
const MINUTE = 60_000;

void describe(
  'reboot chain (kured → Health Resources → queue → debounce → refresh)',
  { timeout: 180_000 },
  () => {
    let harness: RebootHarness;
    before(async () => {
      harness = await startRebootHarness({ clock: 'manual' });
    });
    after(async () => {
      await harness.stop();
    });

    void it('a single kured reboot becomes a refresh from that node within the hour', async (t) => {
      const { session, runner } = harness;
      const world = session.running.world;
      const clock = session.running.clock;

      // The pool is up to date: refreshed just now from the patches every node already has.
      harness.releaseTimers();
      const first = await runner.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL, trigger: 'test' },
        'first-refresh',
      );
      assert.equal(
        (first.output as PoolRefreshResult | undefined)?.outcome,
        'refreshed',
        JSON.stringify(first.failure),
      );
      clock.advanceBy(15 * 60);
      harness.holdTimers();
      // The harness runs the simulator on the manual clock: from the reboot until the debounce has its
      // notices, simulated time moves only as the test moves it, whatever the queue round trips cost in
      // wall time on a busy machine (a late delivery would hide the shortfall the re-arm is for).
      const emitter = startHealthEventEmitter({
        world,
        queue: harness.queue.queue,
        availability: true,
        encoding: 'base64',
      });
      const kured = world.cluster('prod').kured.patchAndReboot([NODE]);
      // Time moves only until the guest reboots: that is when Azure publishes, and when we pump the queue.
      for (let step = 0; step < 600 && world.guestReboots.length === 0; step++) clock.advanceBy(1);
      const reboot = world.guestReboots[0];
      assert.ok(reboot !== undefined, 'the node rebooted');
      const rebootedAt = Date.parse(reboot.at);
      await emitter.flush();
      emitter.stop();
      assert.equal(emitter.sent.length, 2, 'annotation + availability events enqueued');

      const pumped = await harness.pump();
      assert.equal(pumped.failures, 0);
      assert.deepEqual(
        pumped.results.flatMap((r) => r.signalled.map((s) => `${s.cluster}/${s.pool}:${s.how}`)),
        [`prod/${POOL}:started`, `prod/${POOL}:raised`],
      );
      const signalId = signalInstanceId('prod', POOL);
      const waiting = await runner.getStatus(signalId);
      assert.equal((waiting?.customStatus as { step: string }).step, 'waiting-quiet-period');
      const noticeDelayMs = session.clock.now() - rebootedAt;
      assert.ok(
        noticeDelayMs < MINUTE,
        `the debounce started at the reboot, not ${noticeDelayMs / 1000} s later`,
      );

      harness.releaseTimers();
      const done = await runner.resume(signalId);
      assert.equal(done.runtimeStatus, 'Completed', JSON.stringify(done.failure));
      assert.equal((await kured.done).state, 'succeeded');
      const output = done.output as PoolSignalResult;
      assert.equal(output.notices, 2);
      // First plan (quiet period and minimumReadyTime after the notices): Ready too briefly, nothing else
      // is newer. Then the re-armed plan: the rebooted node, now Ready for the hour.
      assert.deepEqual(
        output.runs.map((run) => run.outcome),
        ['up-to-date', 'refreshed'],
        JSON.stringify(output.runs),
      );
      const refresh = await runner.getStatus(`refresh:prod:${POOL}`);
      const result = refresh?.output as PoolRefreshResult | undefined;
      assert.equal(result?.donor, NODE, 'built from the rebooted node');
      const versionId = result?.version?.id ?? '';
      const scaleSet = world.compute.listScaleSets().find((s) => s.name === POOL);
      const modelId = typeof scaleSet?.imageReference['id'] === 'string' ? scaleSet.imageReference['id'] : '';
      assert.equal(modelId.toLowerCase(), versionId.replace(/\/versions\/[^/]+$/i, '').toLowerCase());
      const latest = world.compute
        .listImageVersions(modelId)
        .filter((v) => v.provisioningState === 'Succeeded' && !v.excludeFromLatest)
        .map((v) => v.name)
        // By version, not by text: a version made before 10:00 has a shorter last part (4323 < 22908).
        .sort(compareImageVersions)
        .at(-1);
      assert.equal(latest, result?.version?.versionName, 'new instances get the rebooted node’s version');

      const inModelAt = refresh?.lastUpdatedTime.getTime() ?? 0;
      const latencyMinutes = (inModelAt - rebootedAt) / MINUTE;
      const goalMinutes = 10 + 60 + 20; // quiet period + minimumReadyTime + 20 minutes
      t.diagnostic(
        `simulated latency kured reboot → new version in the model: ${latencyMinutes.toFixed(1)} min ` +
          `(goal ≤ ${goalMinutes} min: quiet period 10 + minimumReadyTime 60 + 20)`,
      );
      assert.ok(latencyMinutes <= goalMinutes, `${latencyMinutes} min`);
      assertIdentityClean({ sim: session }, 'the canaries of both refreshes');
    });
  },
);
