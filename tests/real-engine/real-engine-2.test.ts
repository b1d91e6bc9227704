/**
 * The real-engine tier, file 2 of 4 (tier.ts says what a scenario compares; docs/real-engine.md): a
 * refresh cancelled mid-run, and a refresh resumed from Azure Storage after the engine is killed
 * mid-capture. One engine and one world per host for the file's scenarios, in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { POOL1 } from '../e2e/harness.js';
import { CLUSTER, differential, refreshed, skip, theEngine, useRealEngine } from './tier.js';

useRealEngine();

void describe('the real Durable engine (2 of 4)', { skip, concurrency: false }, () => {
  void it('cancels a refresh mid-run: the donor is given back', async () => {
    const input = { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' };
    let cancelled = '';
    await differential(
      'cancel mid-run',
      'cancel-pool1',
      async (side) => {
        // Raised while the drain evicts the donor's pods (a pod event on it once the drain step was called):
        // the run, draining, acts on it at its next boundary. Raised at the cordon, it reaches the engine
        // before or after the first drain step, as wall time decides.
        const store = side.sim.running.world.cluster(CLUSTER).world.store;
        const callsBefore = side.calls().length;
        let raised = false;
        const stop = store.subscribe((event) => {
          const object = event.object as {
            metadata: { name: string };
            spec?: { unschedulable?: boolean; nodeName?: string };
          };
          if (raised) return;
          if (event.resource === 'nodes' && object.metadata.name.startsWith(POOL1)) {
            if (object.spec?.unschedulable === true) cancelled = object.metadata.name;
            return;
          }
          if (event.resource !== 'pods' || cancelled === '' || object.spec?.nodeName !== cancelled) return;
          if (!side.calls().slice(callsBefore).includes('drainNodeStep')) return;
          raised = true;
          stop();
          void side.raise('cancel-pool1', 'cancel', 'real-engine: maintenance window closed');
        });
        await side.start(ORCHESTRATION.refreshPool, input, 'cancel-pool1');
      },
      (side, ended) => {
        assert.equal(ended.runtimeStatus, 'Failed', `${side.name}: ${JSON.stringify(ended.output)}`);
        assert.match(
          ended.failure ?? '',
          /cancelled: real-engine: maintenance window closed; gave back node/,
        );
        const node = side.sim.running.world
          .cluster(CLUSTER)
          .world.store.list('nodes')
          .find((object) => (object as { metadata: { name: string } }).metadata.name === cancelled) as
          | { spec?: { unschedulable?: boolean }; metadata: { annotations?: Record<string, string> } }
          | undefined;
        assert.ok(node, `${side.name}: the donor ${cancelled} is still a node`);
        assert.notEqual(node.spec?.unschedulable, true, `${side.name}: the donor is uncordoned`);
        const ours = Object.keys(node.metadata.annotations ?? {}).filter((key) =>
          key.startsWith('vmss-prototype'),
        );
        assert.deepEqual(ours, [], `${side.name}: none of our annotations left`);
      },
    );
  });

  void it('resumes a refresh from Azure Storage after the engine is killed mid-capture', async () => {
    const input = { cluster: CLUSTER, pool: POOL1, trigger: 'real-engine' };
    const instanceId = 'killed-pool1';
    let rowsAtKill = 0;
    await differential(
      'kill and restart mid-capture',
      instanceId,
      async (side) => {
        const snapshotsBefore = side.sim.running.world.compute.listSnapshots().length;
        await side.start(ORCHESTRATION.refreshPool, input, instanceId);
        if (side.name !== 'engine') return;
        // Mid-capture: the donor's snapshot was asked for. The host dies as a crash would (SIGKILL).
        const deadline = Date.now() + 4 * 60_000;
        while (side.sim.running.world.compute.listSnapshots().length === snapshotsBefore) {
          if (Date.now() > deadline) throw new Error('no snapshot was asked for within 4 minutes');
          await new Promise((done) => setTimeout(done, 100));
        }
        await theEngine().killHost();
        rowsAtKill = (await side.history(instanceId)).length;
        const started = Date.now();
        await theEngine().startHost();
        console.log(
          `real-engine: killed the host mid-capture: ${rowsAtKill} history rows at the kill; ` +
            `host back in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      },
      async (side, ended) => {
        const result = refreshed(ended);
        assert.equal(result.outcome, 'refreshed', `${side.name}: ${result.reason}`);
        if (side.name === 'engine') {
          const rows = await side.history(instanceId);
          console.log(
            `real-engine: after the restart: ${rows.length} history rows (${rowsAtKill} at the kill)`,
          );
          assert.ok(rows.length > rowsAtKill, 'the run went on from its history');
        }
        const donor = side.sim.running.world.cluster(CLUSTER).world.instanceOfNode(result.donor ?? '');
        assert.equal(donor?.powerState, 'running', `${side.name}: the donor runs again`);
      },
    );
  });
});
