/**
 * Live capture end to end on the simulator (capture.mode live): the real orchestrator through the local
 * runner, the real activities and adapters over the Azure and Kubernetes SDKs, least privilege from
 * infra/. The donor is never cordoned, drained or stopped; the version is built from the scrubbed copy
 * of its OS disk, and clones made from it join as themselves (world.identity()).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { checkRefreshedWorld } from '../../cli/demo-checks.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { expectedShell } from '../sim/world/bwrap-gate.js';
import type { Harness } from './harness.js';
import { nodeOf, POOL1, POOL2, startHarness } from './harness.js';
import { liveCaptureLeftovers } from './live-checks.js';

interface Watched {
  /** Nodes seen unschedulable at any moment. */
  readonly unschedulable: Set<string>;
  /** Nodes an administrator had cordoned before the run. */
  readonly cordonedBefore: ReadonlySet<string>;
  /** Pods seen with a deletion on the donor, by name (an eviction deletes the pod). */
  readonly donorPodsDeleted: string[];
  /** The product's pods created on the donor, by name, in order. */
  readonly productPodsCreated: string[];
  readonly donorPowerStates: Set<string>;
  /**
   * The machines of the run's canary scale set, by computer name (lower case): a first refresh's canary
   * runs there (docs/design.md#canary), and the run drains its node before the scale set is deleted.
   */
  readonly canaryMachines: Set<string>;
  stop(): void;
}

/** Watches the world from the start of the run: what live capture must never do to the donor. */
function watchDonor(harness: Harness, donor: string): Watched {
  const world = harness.sim.running.world;
  const store = world.cluster('prod').world.store;
  const unschedulable = new Set<string>();
  const cordonedBefore = new Set(
    store
      .list('nodes')
      .filter((node) => (node as { spec?: { unschedulable?: boolean } }).spec?.unschedulable === true)
      .map((node) => node.metadata.name),
  );
  const donorPodsDeleted: string[] = [];
  const productPodsCreated: string[] = [];
  const donorPowerStates = new Set<string>();
  const canaryMachines = new Set<string>();
  const stopStore = store.subscribe((event) => {
    const object = event.object as {
      metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> };
      spec?: { unschedulable?: boolean; nodeName?: string };
    };
    if (
      event.resource === 'pods' &&
      event.type === 'ADDED' &&
      object.spec?.nodeName === donor &&
      object.metadata.labels?.['app.kubernetes.io/managed-by'] === 'vmss-prototype'
    ) {
      productPodsCreated.push(object.metadata.name);
    }
    if (event.resource === 'nodes' && object.spec?.unschedulable === true) {
      unschedulable.add(object.metadata.name);
    }
    if (
      event.resource === 'pods' &&
      object.spec?.nodeName === donor &&
      (event.type === 'DELETED' || object.metadata.deletionTimestamp !== undefined) &&
      object.metadata.labels?.['app.kubernetes.io/managed-by'] !== 'vmss-prototype'
    ) {
      donorPodsDeleted.push(object.metadata.name);
    }
  });
  const stopCompute = world.compute.subscribe((event) => {
    if (event.type === 'instance-power-changed' && event.instance.computerName.toLowerCase() === donor) {
      donorPowerStates.add(event.instance.powerState);
    }
    if (
      event.type === 'instance-created' &&
      world.compute.getScaleSet(event.instance.scaleSetId)?.tags['vmss-prototype.purpose'] ===
        'canary-scale-set'
    ) {
      canaryMachines.add(event.instance.computerName.toLowerCase());
    }
  });
  return {
    cordonedBefore,
    unschedulable,
    donorPodsDeleted,
    productPodsCreated,
    donorPowerStates,
    canaryMachines,
    stop: () => {
      stopStore();
      stopCompute();
    },
  };
}

async function liveHarness(): Promise<Harness> {
  // A manual clock: simulated time moves only when the runner waits, so the freeze's length is exact.
  return startHarness({
    clock: 'manual',
    settings: (cluster) => {
      cluster.capture = { ...cluster.capture, mode: 'live' };
    },
  });
}

void describe('live capture on the simulator', { concurrency: false }, () => {
  void it('builds the version from a scrubbed copy while the donor keeps serving; clones join as themselves', async (t) => {
    const harness = await liveHarness();
    const donor = nodeOf(POOL1, 1);
    const watched = watchDonor(harness, donor);
    try {
      const status = await harness.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL1, trigger: 'test', node: donor },
        'live-1',
      );
      watched.stop();
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed', result.reason);
      assert.equal(result.captureMode, 'live');
      assert.equal(result.donor, donor);
      assert.equal(result.donorOutOfServiceSeconds, 0);

      // The donor was never cordoned, none of its pods was evicted, it never stopped. The only node the
      // run cordoned is its canary's, in the canary scale set of this first refresh, drained before the
      // scale set was deleted with it.
      assert.ok(!watched.unschedulable.has(donor), 'the donor was never unschedulable');
      assert.equal(result.canary?.instancesNow, 'removed');
      assert.equal(watched.canaryMachines.size, 1, 'one canary, in a canary scale set');
      assert.deepEqual(
        [...watched.unschedulable].filter(
          (name) => !watched.cordonedBefore.has(name) && !watched.canaryMachines.has(name),
        ),
        [],
        'no node of the pool was cordoned by the run',
      );
      const store = harness.sim.running.world.cluster('prod').world.store;
      for (const name of watched.canaryMachines) {
        assert.equal(store.get('nodes', undefined, name), undefined, `${name} left with its scale set`);
      }
      assert.deepEqual(watched.donorPodsDeleted, [], 'no pod of the donor was evicted or deleted');
      assert.deepEqual([...watched.donorPowerStates], [], 'the donor never changed power state');

      const running = harness.sim.running;
      const world = running.world;
      // The freeze was short and thawed by the script (the pod's deletion), nothing left on the host.
      const hosts = world.hosts();
      assert.deepEqual(hosts.violations, []);
      assert.equal(hosts.freezes.length, 1);
      const [freeze] = hosts.freezes;
      assert.equal(freeze?.nodeName, donor);
      assert.equal(freeze?.thawedBy, 'script');
      assert.ok((freeze?.seconds ?? Infinity) <= 10, `frozen ${String(freeze?.seconds)} s`);
      // The prep image was pulled on the donor first (a one-shot pod), then the freeze pod, then the scrub.
      assert.deepEqual(
        watched.productPodsCreated.map((name) => name.replace(/^vmssp-([a-z]+)-.*$/, '$1')),
        ['pull', 'freeze', 'scrub'],
      );

      // The version came from a managed disk; the disk and the snapshot are gone; nothing is attached.
      assert.ok(result.version, 'a version was built');
      const version = world.compute.getImageVersion(result.version.id);
      assert.equal(version?.provisioningState, 'Succeeded');
      assert.match(version?.sourceId ?? '', /\/providers\/Microsoft\.Compute\/disks\//i);
      const scaleSetId = result.plan?.scaleSet.id ?? '';
      const group = result.plan?.scaleSet.resourceGroup ?? '';
      assert.deepEqual(
        world.compute.listDisks(running.subscriptionId, group).filter((disk) => disk.createOption === 'Copy'),
        [],
        'the copy disk was deleted',
      );
      assert.deepEqual(world.compute.listSnapshots(), [], 'the snapshot was deleted');
      const donorInstance = world.compute
        .listInstances(scaleSetId)
        .find((instance) => instance.computerName.toLowerCase() === donor);
      assert.ok(donorInstance, 'the donor instance exists');
      assert.deepEqual(donorInstance?.dataDisks, [], 'nothing is attached to the donor');
      // The freeze and scrub pods' scripts ran in the real shell (the modelled one without bwrap).
      const shell = expectedShell(t);
      assert.deepEqual(
        world
          .prepRecords()
          .map((record) => [record.pod?.replace(/^vmssp-([a-z]+)-.*$/, '$1'), record.shell, record.outcome]),
        [
          ['freeze', shell, 'succeeded'],
          ['scrub', shell, 'succeeded'],
        ],
      );
      const failed = checkRefreshedWorld(running, [
        { cluster: 'prod', trigger: 'test', pools: [result] } as never,
      ]).filter((check) => !check.ok);
      assert.deepEqual(failed, []);

      // Clones from the new image join as themselves: no shared identity, nothing inherited.
      const before = world.joinRecords().length;
      world.compute.scaleOut(scaleSetId, 2);
      world.clock.advanceBy(world.latency.newNodeJoinFromMarketplaceSeconds + 60);
      const joins = world.joinRecords().slice(before);
      assert.equal(joins.length, 2, 'both clones joined');
      assert.ok(joins.every((join) => join.fromPrototype));
      const identity = world.identity();
      assert.deepEqual(identity.violations, []);
      assert.deepEqual(identity.findings, []);
      const clones = world.compute.listInstances(scaleSetId);
      const cloneDisk = world.compute.getDiskContent(clones.at(-1)?.osDiskId ?? '');
      assert.match(cloneDisk?.files['/var/log/vmss-prototype-ancestry.log'] ?? '', /live capture/);
    } finally {
      watched.stop();
      await harness.stop();
    }
  });

  void it('auto takes live capture where it is safe, drain-and-stop (with the reason) where it is not', async () => {
    // Pool 1 runs an NVMe-controller size (its data disks are not under /dev/disk/azure/scsi1): a live
    // blocker. Pool 2 names its flavour; the simulator's nodes also carry aks-engine's labels.
    const harness = await startHarness({
      scenario: (scenario) => {
        const pool = scenario.clusters[0]?.scaleSets.find((entry) => entry['name'] === POOL1);
        assert.ok(pool);
        pool['vmSize'] = 'Standard_D4ds_v6';
      },
      settings: (cluster) => {
        cluster['pools'] = [{ name: POOL1 }, { name: POOL2, bootstrapFlavour: 'aks-engine' }];
        cluster.capture = { ...cluster.capture, mode: 'auto' };
      },
    });
    try {
      const status = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test' },
        'auto-live',
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const pools = Object.fromEntries(
        (status.output as ClusterRefreshResult).pools.map((pool) => [pool.pool, pool]),
      );
      assert.equal(pools[POOL1]?.outcome, 'refreshed', pools[POOL1]?.reason);
      assert.equal(pools[POOL1]?.captureMode, 'drain-and-stop');
      assert.match(
        pools[POOL1]?.plan?.capture?.reason ?? '',
        /^auto: drain-and-stop, because VM size Standard_D4ds_v6 has an NVMe disk controller/,
      );
      assert.equal(pools[POOL2]?.outcome, 'refreshed', pools[POOL2]?.reason);
      assert.equal(pools[POOL2]?.captureMode, 'live');
      assert.match(pools[POOL2]?.plan?.capture?.reason ?? '', /^auto: live \(aks-engine, configured;/);
      assert.equal(pools[POOL2]?.donorOutOfServiceSeconds, 0);
      const scaleSet = pools[POOL2]?.plan?.scaleSet;
      assert.ok(scaleSet);
      assert.deepEqual(liveCaptureLeftovers(harness.sim.running, scaleSet), []);
    } finally {
      await harness.stop();
    }
  });
});
