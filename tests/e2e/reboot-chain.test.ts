/**
 * The whole reboot chain on the simulator: kured patches and reboots a node → Health Resources event
 * on the storage queue (Azurite) → queue trigger → pool debounce → quiet period → one refresh → a new
 * image version (the rebooted node among the candidates).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { PoolSignalResult } from '../../functions/orchestrations/pool-signal.orchestration.js';
import { signalInstanceId } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { startHealthEventEmitter } from '../../sim/events/health-resources-emitter.js';
import { type RebootHarness, startRebootHarness } from './reboot-harness.js';

const POOL = 'k8s-pool1-12345678-vmss';
const NODE = `${POOL}000000`;

void describe(
  'reboot chain (kured → Health Resources → queue → debounce → refresh)',
  { timeout: 120_000 },
  () => {
    let harness: RebootHarness;
    before(async () => {
      harness = await startRebootHarness();
    });
    after(async () => {
      await harness.stop();
    });

    void it('builds one new image version after the quiet period', async () => {
      const { session, runner } = harness;
      const world = session.running.world;
      const emitter = startHealthEventEmitter({
        world,
        queue: harness.queue.queue,
        availability: true,
        encoding: 'base64',
      });

      const run = world.cluster('prod').kured.patchAndReboot([NODE]);
      session.running.clock.advanceTo(session.clock.now() + 10 * 60_000);
      assert.equal((await run.done).state, 'succeeded');
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
      assert.equal((waiting?.customStatus as { step: string; notices: number }).step, 'waiting-quiet-period');

      harness.releaseTimers();
      const done = await runner.resume(signalId);
      assert.equal(done.runtimeStatus, 'Completed', JSON.stringify(done.failure));
      const output = done.output as PoolSignalResult;
      assert.equal(output.notices, 2);
      assert.equal(output.runs.length, 1, 'exactly one refresh');
      const refresh = await runner.getStatus(`refresh:prod:${POOL}`);
      const result = refresh?.output as PoolRefreshResult | undefined;
      assert.equal(output.runs[0]?.outcome, 'refreshed', `refresh: ${output.runs[0]?.reason}`);
      // Auto mode picks the candidate Ready longest (kamino's rule); the rebooted node is one of them.
      const verdicts = result?.plan?.verdicts ?? [];
      assert.ok(
        verdicts.some((v) => v.node === NODE && v.candidate),
        JSON.stringify(verdicts),
      );
      assert.ok(verdicts.some((v) => v.node === result?.donor && v.candidate));
      const versionId = result?.version?.id;
      assert.ok(versionId !== undefined);
      const definitionId = versionId.slice(0, versionId.toLowerCase().lastIndexOf('/versions/'));
      const versions = world.compute.listImageVersions(definitionId);
      assert.ok(
        versions.some((v) => v.id.toLowerCase() === versionId.toLowerCase()),
        'the new version exists in the gallery',
      );
    });
  },
);
