/**
 * Cluster API Machines for MachinePool machines (sim/world/capz/capi-machines.ts): one per
 * AzureMachinePoolMachine, the delete-machine annotation honoured, and CAPI's delete order — the Machine
 * is deleted and its node drained before the AzureMachinePoolMachine is marked deleted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject, KubeStore } from '../../../../sim/contracts.js';
import { CAPZ_SCENARIO } from '../../../../sim/index.js';
import { controllerOf, isNodeReady, nodeNameOf } from '../../../../sim/kube/objects.js';
import { selectMachinesToDelete } from '../../../../sim/world/capz/strategy.js';
import { loadScenarioFile } from '../../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../../sim/world/world.js';

const POOL = 'capz-lab-mp-0';

async function makeWorld(): Promise<World> {
  const scenario = await loadScenarioFile(CAPZ_SCENARIO);
  scenario.start = '2026-11-22T12:00:00Z';
  scenario.latency = { ...scenario.latency, profile: 'fast' };
  const mgmt = scenario.clusters.find((cluster) => cluster.name === 'mgmt');
  if (mgmt?.clusterApi) mgmt.clusterApi.syncPeriod = '2m';
  return createWorld({ scenario });
}

const mgmtStore = (world: World): KubeStore => world.cluster('mgmt').world.store;
const labStore = (world: World): KubeStore => world.cluster('capz-lab').world.store;

function nodeNameOfMachine(machine: KubeObject): string {
  return (machine.status as { nodeRef?: { name?: string } } | undefined)?.nodeRef?.name ?? '';
}

/** Pods a drain must evict from the node (not DaemonSet, not finished). */
function evictable(world: World, node: string): KubeObject[] {
  return labStore(world)
    .list('pods')
    .filter((pod) => nodeNameOf(pod) === node && controllerOf(pod)?.kind !== 'DaemonSet');
}

void describe('CAPI Machines for MachinePool machines', () => {
  void it('a Machine per AzureMachinePoolMachine, owned by the MachinePool, pointing at it', async () => {
    const world = await makeWorld();
    try {
      world.clock.advanceBy(3);
      const ampms = mgmtStore(world).list('azuremachinepoolmachines', 'default');
      const machines = mgmtStore(world).list('machines', 'default');
      assert.equal(machines.length, 3);
      assert.deepEqual(
        machines.map((machine) => machine.metadata.name).sort(),
        ampms.map((ampm) => ampm.metadata.name).sort(),
      );
      for (const machine of machines) {
        assert.equal(machine.metadata.labels?.['cluster.x-k8s.io/pool-name'], POOL);
        assert.equal(machine.metadata.ownerReferences?.[0]?.kind, 'MachinePool');
        assert.deepEqual((machine.spec as { infrastructureRef?: unknown }).infrastructureRef, {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'AzureMachinePoolMachine',
          name: machine.metadata.name,
          namespace: 'default',
        });
        assert.equal((machine.status as { phase?: string }).phase, 'Running');
        assert.ok(nodeNameOfMachine(machine).startsWith(POOL));
      }
    } finally {
      world.stop();
    }
  });

  void it('delete-machine on a Machine: that machine goes, drained before its AzureMachinePoolMachine is deleted', async () => {
    const world = await makeWorld();
    try {
      world.clock.advanceBy(3);
      const victim = mgmtStore(world)
        .list('machines', 'default')
        .find((machine) => evictable(world, nodeNameOfMachine(machine)).length > 0);
      assert.ok(victim, 'a machine whose node runs workload pods');
      const node = nodeNameOfMachine(victim);
      const marks: { resource: string; atMs: number; podsLeft: number; ampmDeleting: boolean }[] = [];
      const cancel = mgmtStore(world).subscribe((event) => {
        if (event.object.metadata.name !== victim.metadata.name) return;
        if (event.type !== 'MODIFIED' || event.object.metadata.deletionTimestamp === undefined) return;
        if (marks.some((mark) => mark.resource === event.resource)) return;
        const ampm = mgmtStore(world).get('azuremachinepoolmachines', 'default', victim.metadata.name);
        marks.push({
          resource: event.resource,
          atMs: world.clock.nowMs(),
          podsLeft: evictable(world, node).length,
          ampmDeleting: ampm?.metadata.deletionTimestamp !== undefined,
        });
      });

      mgmtStore(world).mutate('machines', 'default', victim.metadata.name, (machine) => {
        machine.metadata.annotations = {
          ...machine.metadata.annotations,
          'cluster.x-k8s.io/delete-machine': 'yes',
        };
      });
      world.clock.advanceBy(300);
      cancel();

      assert.deepEqual(
        marks.map((mark) => mark.resource),
        ['machines', 'azuremachinepoolmachines'],
        'the Machine is deleted first, the AzureMachinePoolMachine after',
      );
      const [machineMark, ampmMark] = marks;
      assert.equal(
        machineMark?.ampmDeleting,
        false,
        'the AzureMachinePoolMachine is untouched during the drain',
      );
      assert.ok(machineMark.podsLeft > 0);
      assert.equal(ampmMark?.podsLeft, 0, 'the node was drained before its AzureMachinePoolMachine went');
      assert.ok((ampmMark?.atMs ?? 0) > machineMark.atMs);
      assert.equal(mgmtStore(world).get('machines', 'default', victim.metadata.name), undefined);
      assert.equal(
        mgmtStore(world).get('azuremachinepoolmachines', 'default', victim.metadata.name),
        undefined,
      );
      assert.equal(labStore(world).get('nodes', undefined, node), undefined);
      const nodes = labStore(world)
        .list('nodes')
        .filter((candidate) => candidate.metadata.name.startsWith(POOL));
      assert.equal(nodes.filter(isNodeReady).length, 3, 'replaced: the pool is back at its replicas');
      assert.equal(mgmtStore(world).list('machines', 'default').length, 3);
    } finally {
      world.stop();
    }
  });

  void it("CAPZ's SelectMachinesToDelete: annotated machines go right after failed ones, even at the desired count", () => {
    const view = (name: string, deleteAnnotated = false) => ({
      name,
      ready: true,
      latestModelApplied: true,
      provisioningState: 'Succeeded',
      deleting: false,
      deleteAnnotated,
      createdMs: Number(name.slice(1)),
      randomRank: name,
    });
    const machines = [view('m1'), view('m2', true), view('m3')];

    assert.deepEqual(
      selectMachinesToDelete(machines, 3, 0, 'Oldest', false).map((machine) => machine.name),
      ['m2'],
    );
    assert.deepEqual(selectMachinesToDelete([view('m1'), view('m3')], 2, 0, 'Oldest', false), []);
  });
});
