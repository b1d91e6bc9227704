/**
 * Azure faults during a pool refresh: throttling, server errors, a failed image version, a region
 * without ZRS, a snapshot quota. Each scenario asserts the outcome and every invariant.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import {
  arm5xxBurst,
  arm429Storm,
  imageVersionLroFailure,
  snapshotLroFailure,
  snapshotQuotaExceeded,
} from '../../sim/world/faults.js';
import { nodeOf, POOL2 } from '../e2e/harness.js';
import { assertInvariants, failureOf, startChaos, summaryTable } from './chaos-harness.js';

const THROTTLE_MESSAGE =
  "The request is being throttled as the limit has been reached for operation type - 'HighCostGet3Min'.";

void describe('Azure faults during a refresh', { concurrency: false }, () => {
  after(() => {
    console.log(summaryTable('chaos: Azure faults'));
  });

  void it('an ARM 429 storm with Retry-After: the run still succeeds', async () => {
    const chaos = await startChaos();
    try {
      const faults = chaos.harness.sim.running.faults;
      const clock = chaos.harness.sim.running.clock;
      // Light random throttling of reads for the whole run, and a full storm on every call for 30 s in
      // three steps (Retry-After above the SDK's inline cap: the durable retries do the waiting).
      faults.add({
        api: 'arm',
        operation: 'Microsoft.Compute/*/read',
        status: 429,
        code: 'TooManyRequests',
        message: THROTTLE_MESSAGE,
        retryAfterSeconds: 17,
        probability: 0.1,
      });
      for (const step of ['snapshotting', 'building-image-version', 'updating-scale-set-model']) {
        chaos.onStep(step, () => {
          for (const operation of ['Microsoft.Compute/*/read', 'Microsoft.Compute/*/write', '*/action']) {
            faults.add(arm429Storm(clock, { seconds: 30, operation, retryAfterSeconds: 17 }));
          }
        });
      }
      const status = await chaos.refreshPool(POOL2);
      const fired = faults.rules().reduce((sum, rule) => sum + rule.fired, 0);
      assert.ok(fired >= 5, `the storm throttled many calls (${fired})`);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed');
      assertInvariants(chaos, `ARM 429 storm (${fired} throttled)`, 'refreshed', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('a 3-minute storm on every write: clean failure or success, never an inconsistent world', async () => {
    const chaos = await startChaos();
    try {
      const faults = chaos.harness.sim.running.faults;
      const clock = chaos.harness.sim.running.clock;
      // Longer than the activities' retry budget (5 + 10 + 20 s of durable timers): Retry-After is not
      // honoured by callActivityWithRetry, so the step gives up while ARM still throttles.
      chaos.onStep('building-image-version', () => {
        faults.add(
          arm429Storm(clock, { seconds: 180, operation: 'Microsoft.Compute/*/write', retryAfterSeconds: 17 }),
        );
      });
      const status = await chaos.refreshPool(POOL2);
      const outcome =
        status.runtimeStatus === 'Completed'
          ? 'refreshed'
          : `failed at ${failureOf(status).split(':')[0] ?? ''}`;
      if (status.runtimeStatus !== 'Completed') assert.match(failureOf(status), /^building-image-version: /);
      assertInvariants(chaos, '3-minute 429 storm on writes', outcome, { message: failureOf(status) });
    } finally {
      await chaos.stop();
    }
  });

  void it('a burst of ARM 5xx: retried, the run succeeds', async () => {
    const chaos = await startChaos();
    try {
      const faults = chaos.harness.sim.running.faults;
      chaos.onStep('snapshotting', () => {
        faults.add(arm5xxBurst({ count: 3, operation: 'Microsoft.Compute/*/write' }));
        faults.add(arm5xxBurst({ count: 5, operation: 'Microsoft.Compute/*/read', status: 503 }));
      });
      const status = await chaos.refreshPool(POOL2);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed');
      assertInvariants(chaos, 'ARM 5xx burst', 'refreshed', { message: failureOf(status) });
    } finally {
      await chaos.stop();
    }
  });

  void it('an image version whose operation fails once: deleted, rebuilt as LRS', async () => {
    const chaos = await startChaos();
    try {
      chaos.harness.sim.running.faults.add(imageVersionLroFailure({ count: 1 }));
      const status = await chaos.refreshPool(POOL2);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed');
      assert.equal(result.version?.storageAccountType, 'Standard_LRS');
      assertInvariants(chaos, 'image version LRO fails once', 'refreshed (LRS)', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('an image version that always fails: clean failure, no failed version left', async () => {
    const chaos = await startChaos();
    try {
      chaos.harness.sim.running.faults.add(imageVersionLroFailure({ count: 5 }));
      const status = await chaos.refreshPool(POOL2);
      assert.equal(status.runtimeStatus, 'Failed');
      // The last part is the time of day as an integer (no leading zeros: 00:38:53 is 3853).
      assert.match(failureOf(status), /^building-image-version: image version \d{4}\.\d{4}\.\d{1,6} failed/);
      assertInvariants(chaos, 'image version LRO always fails', 'failed at building-image-version', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('a region that refuses ZRS mid-run: falls back to LRS', async () => {
    const chaos = await startChaos();
    try {
      chaos.onStep('snapshotting', () => {
        chaos.harness.sim.running.world.applyFault({ preset: 'zrs-unsupported', at: '0s' });
      });
      const status = await chaos.refreshPool(POOL2);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal((status.output as PoolRefreshResult).version?.storageAccountType, 'Standard_LRS');
      assertInvariants(chaos, 'ZRS refused', 'refreshed (LRS)', { message: failureOf(status) });
    } finally {
      await chaos.stop();
    }
  });

  void it('snapshot quota exceeded: clean failure naming the step, node restored, nothing left', async () => {
    const chaos = await startChaos();
    try {
      chaos.harness.sim.running.faults.add(snapshotQuotaExceeded());
      const donor = nodeOf(POOL2, 1);
      const status = await chaos.refreshPool(POOL2, { node: donor });
      assert.equal(status.runtimeStatus, 'Failed');
      const message = failureOf(status);
      assert.match(message, /^snapshotting: /);
      assert.match(message, /quota/i);
      assert.match(message, /vmssp-k8s-pool2-12345678-vmss-/, 'names the snapshot');
      const instance = chaos.harness.sim.running.world.cluster('prod').world.instanceOfNode(donor);
      assert.equal(instance?.powerState, 'running', 'the donor runs again');
      assertInvariants(chaos, 'snapshot quota exceeded', 'failed at snapshotting', {
        message: failureOf(status),
      });
    } finally {
      await chaos.stop();
    }
  });

  void it('a snapshot that fails after the donor was started: no version from it, node back, snapshot gone', async () => {
    const chaos = await startChaos();
    try {
      const world = chaos.harness.sim.running.world;
      const donor = nodeOf(POOL2, 1);
      chaos.harness.sim.running.faults.add(snapshotLroFailure());
      // What the donor and the snapshot were when the VM was asked to start again.
      let snapshotStateAtStart: string | undefined;
      const stop = world.compute.subscribe((event) => {
        if (event.type !== 'instance-power-changed' || snapshotStateAtStart !== undefined) return;
        if (event.previous !== 'stopped') return;
        snapshotStateAtStart = world.compute.listSnapshots()[0]?.provisioningState ?? 'none';
      });
      const status = await chaos.refreshPool(POOL2, { node: donor });
      stop();
      assert.equal(status.runtimeStatus, 'Failed');
      const message = failureOf(status);
      assert.match(
        message,
        /^awaiting-snapshot: snapshot vmssp-k8s-pool2-12345678-vmss-\S+ failed; no image version was built from it/,
      );
      assert.equal(snapshotStateAtStart, 'Creating', 'the donor was started before the snapshot completed');
      const instance = world.cluster('prod').world.instanceOfNode(donor);
      assert.equal(instance?.powerState, 'running', 'the donor runs again');
      assert.deepEqual(
        world.compute.listSnapshots().map((snapshot) => snapshot.provisioningState),
        ['Deleting'],
        'the failed snapshot is being deleted (asked for, not waited for)',
      );
      const versionWrites = world.log
        .snapshot()
        .entries.filter((entry) => entry.operation === 'Microsoft.Compute/galleries/images/versions/write');
      assert.deepEqual(versionWrites, [], 'no image version was asked for');
      assertInvariants(chaos, 'snapshot fails after the donor started', 'failed at awaiting-snapshot', {
        message,
      });
    } finally {
      await chaos.stop();
    }
  });
});
