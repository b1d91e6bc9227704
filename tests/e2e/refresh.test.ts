/**
 * The refresh pipeline end to end on the simulator: real orchestrators (through the local runner),
 * real activities and adapters over the real Azure and Kubernetes SDKs, least-privilege permissions
 * from infra/, and the world checked from the simulator's own records.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { checkRefreshedWorld } from '../../cli/demo-checks.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION } from '../../shared/domain/cluster-node.js';
import { compareImageVersions } from '../../shared/domain/image-version.js';
import { expectedShell } from '../sim/world/bwrap-gate.js';
import type { Harness } from './harness.js';
import {
  assertIdentityClean,
  nodeOf,
  POOL1,
  POOL2,
  scaleOutOne,
  startHarness,
  withUndrainablePod,
} from './harness.js';

interface NodeObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { unschedulable?: boolean };
}

function node(harness: Harness, name: string): NodeObject {
  const object = harness.sim.running.world.cluster('prod').world.store.get('nodes', undefined, name);
  assert.ok(object, `node ${name} exists`);
  return object;
}

function versionsOf(harness: Harness, result: PoolRefreshResult): { name: string; state: string }[] {
  assert.ok(result.version, 'the result names its version');
  const definitionId = result.version.id.replace(/\/versions\/[^/]+$/i, '');
  return harness.sim.running.world.compute
    .listImageVersions(definitionId)
    .map((version) => ({ name: version.name, state: version.provisioningState }));
}

async function refreshPool(
  harness: Harness,
  pool: string,
  extra: Record<string, unknown> = {},
  id = `t-${pool}`,
) {
  const status = await harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool, trigger: 'test', ...extra },
    id,
  );
  return status;
}

function assertWorldOk(
  harness: Harness,
  results: ClusterRefreshResult[],
  cordonedBefore?: ReadonlySet<string>,
): void {
  const failed = checkRefreshedWorld(
    harness.sim.running,
    results,
    cordonedBefore ? { cordonedBefore } : {},
  ).filter((check) => !check.ok);
  assert.deepEqual(failed, [], 'every world check passes');
}

void describe('refresh pipeline on the simulator', { concurrency: false }, () => {
  void it('auto mode refreshes both eligible pools in parallel and explains every other pool', async (t) => {
    const harness = await startHarness();
    try {
      const status = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test' },
        'auto-1',
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as ClusterRefreshResult;
      const outcomes = Object.fromEntries(result.pools.map((pool) => [pool.pool, pool.outcome]));
      assert.deepEqual(outcomes, {
        'aks-nodepool1-12345678-vmss': 'refused',
        'k8s-auto-12345678-vmss': 'refused',
        'k8s-ephemeral-12345678-vmss': 'refused',
        'k8s-master-12345678-vmss': 'skipped',
        [POOL1]: 'refreshed',
        [POOL2]: 'refreshed',
      });
      const reasons = Object.fromEntries(result.pools.map((pool) => [pool.pool, pool.reason]));
      assert.match(reasons['aks-nodepool1-12345678-vmss'] ?? '', /managed by AKS/);
      assert.match(reasons['k8s-auto-12345678-vmss'] ?? '', /automatic OS image upgrade/);
      assert.match(reasons['k8s-ephemeral-12345678-vmss'] ?? '', /ephemeral OS disk/);
      assert.match(reasons['k8s-master-12345678-vmss'] ?? '', /control-plane/);
      assertWorldOk(harness, [result]);
      const firstRunStatuses = harness.statuses.length;

      // Both pools were captured at once: their sub-orchestrations were running at the same time.
      let mostRunning = 0;
      const running = new Set<string>();
      for (const entry of harness.statuses.slice(0, firstRunStatuses)) {
        if (!entry.instanceId.startsWith('refresh:prod:')) continue;
        if (entry.runtimeStatus === 'Running') running.add(entry.instanceId);
        else running.delete(entry.instanceId);
        mostRunning = Math.max(mostRunning, running.size);
      }
      assert.equal(mostRunning, 2, 'two pools refreshed in parallel');

      // A second cluster run: pool1's image came from the node Ready longest (patched 3 days ago), and
      // node 000000 was patched 6 hours ago, after that image, so pool1 is refreshed again from it;
      // pool2 has no node patched after its image. The pools' singleton instance ids are reused.
      const again = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test' },
        'auto-2',
      );
      assert.equal(again.runtimeStatus, 'Completed', JSON.stringify(again.failure));
      const second = Object.fromEntries(
        (again.output as ClusterRefreshResult).pools.map((pool) => [pool.pool, pool]),
      );
      assert.equal(second[POOL1]?.outcome, 'refreshed', second[POOL1]?.reason);
      assert.equal(second[POOL1]?.donor, nodeOf(POOL1, 0));
      assert.equal(second[POOL2]?.outcome, 'up-to-date', second[POOL2]?.reason);
      const third = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test' },
        'auto-3',
      );
      const outcomes3 = (third.output as ClusterRefreshResult).pools
        .filter((pool) => pool.pool.startsWith('k8s-pool'))
        .map((pool) => pool.outcome);
      // Nothing new to capture: pool1's newest donor just rebooted (not Ready for an hour yet).
      assert.ok(
        outcomes3.every((outcome) => outcome === 'up-to-date' || outcome === 'skipped'),
        outcomes3.join(),
      );

      // The donor was out of service for minutes, not hours (kamino's run: 243 s cordon to uncordon).
      for (const pool of result.pools.filter((p) => p.outcome === 'refreshed')) {
        assert.ok((pool.donorOutOfServiceSeconds ?? 0) > 0 && (pool.donorOutOfServiceSeconds ?? 0) < 3600);
      }
      // The prep pods ran the product's script in the simulator's real shell; a clone of each new image
      // joins as itself and the identity model finds nothing shared or inherited.
      const preps = harness.sim.running.world.prepRecords().filter((record) => record.via === 'pod');
      const shell = expectedShell(t);
      assert.ok(
        preps.length >= 2 &&
          preps.every((record) => record.shell === shell && record.outcome === 'succeeded'),
        JSON.stringify(preps.map((record) => [record.shell, record.outcome, record.error])),
      );
      for (const pool of [POOL1, POOL2]) {
        const clone = scaleOutOne(harness, pool);
        assert.ok(clone.joined, `a clone of ${pool}'s new image (${clone.nodeName}) joined as itself`);
      }
      assertIdentityClean(harness, 'clones of the refreshed pools');
    } finally {
      await harness.stop();
    }
  });

  void it('refreshes from an operator-named node', async () => {
    const harness = await startHarness();
    try {
      const donor = nodeOf(POOL2, 2);
      const status = await refreshPool(harness, POOL2, { node: donor });
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed');
      assert.equal(result.donor, donor);
      const version = harness.sim.running.world.compute.getImageVersion(result.version?.id ?? '');
      assert.equal(version?.tags['vmss-prototype.source-node'], donor);
      assertWorldOk(harness, [{ cluster: 'prod', pools: [result] }]);
    } finally {
      await harness.stop();
    }
  });

  void it('starts the donor once its snapshot is taken, or after it completed with waitForSnapshotCompletion always', async () => {
    for (const wait of ['auto', 'always'] as const) {
      const harness = await startHarness({
        clock: 'manual',
        settings: (cluster) => {
          cluster.capture = { ...cluster.capture, waitForSnapshotCompletion: wait };
        },
      });
      try {
        const world = harness.sim.running.world;
        const donor = nodeOf(POOL2, 2);
        let snapshotAtStart: string | undefined;
        let prepImageOnNodeAtCordon: boolean | undefined;
        const stopCompute = world.compute.subscribe((event) => {
          if (event.type !== 'instance-power-changed' || event.previous !== 'stopped') return;
          snapshotAtStart ??= world.compute.listSnapshots()[0]?.provisioningState ?? 'none';
        });
        const stopNodes = world.cluster('prod').world.store.subscribe((event) => {
          const object = event.object as {
            metadata: { name: string };
            spec?: { unschedulable?: boolean };
            status?: { images?: { names?: string[] }[] };
          };
          if (event.resource !== 'nodes' || object.metadata.name !== donor) return;
          if (object.spec?.unschedulable !== true || prepImageOnNodeAtCordon !== undefined) return;
          prepImageOnNodeAtCordon = (object.status?.images ?? []).some((image) =>
            (image.names ?? []).some((name) => name.includes('busybox')),
          );
        });
        const status = await refreshPool(harness, POOL2, { node: donor }, `t-snapshot-${wait}`);
        stopCompute();
        stopNodes();
        assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
        assert.equal(
          snapshotAtStart,
          wait === 'auto' ? 'Creating' : 'Succeeded',
          `${wait}: snapshot at start`,
        );
        assert.equal(prepImageOnNodeAtCordon, true, 'the prep image was pulled before the cordon');
        const result = status.output as PoolRefreshResult;
        assertWorldOk(harness, [{ cluster: 'prod', pools: [result] }]);
      } finally {
        await harness.stop();
      }
    }
  });

  void it('leaves an administrator-cordoned donor cordoned, with its own annotations', async () => {
    const harness = await startHarness();
    try {
      const donor = nodeOf(POOL1, 3);
      assert.equal(node(harness, donor).spec?.unschedulable, true, 'the sample cordons this node');
      const status = await refreshPool(harness, POOL1, { node: donor });
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed');
      const after = node(harness, donor);
      assert.equal(after.spec?.unschedulable, true, 'still cordoned');
      assert.equal(after.metadata.annotations?.['sim.example.com/cordoned-by'], 'ops-oncall');
      assert.equal(after.metadata.annotations?.[CAPTURE_RUN_ANNOTATION], undefined);
      assert.equal(after.metadata.annotations?.[SCALE_DOWN_DISABLED_ANNOTATION], undefined);
      assertWorldOk(harness, [{ cluster: 'prod', pools: [result] }], new Set([donor]));
    } finally {
      await harness.stop();
    }
  });

  void it('falls back to Standard_LRS where the region refuses ZRS, leaving no failed version', async () => {
    const harness = await startHarness({
      scenario: (scenario) => {
        scenario.region.zoneRedundantStorage = false;
      },
    });
    try {
      const status = await refreshPool(harness, POOL2);
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.version?.storageAccountType, 'Standard_LRS');
      assert.deepEqual(versionsOf(harness, result), [
        { name: result.version?.versionName, state: 'Succeeded' },
      ]);
      assertWorldOk(harness, [{ cluster: 'prod', pools: [result] }]);
    } finally {
      await harness.stop();
    }
  });

  void it('a later refresh the same day builds a newer version, and pruning keeps the history', async () => {
    const harness = await startHarness({
      settings: (cluster) => {
        cluster.history = 2;
      },
    });
    try {
      const world = harness.sim.running.world;
      const names: string[] = [];
      for (let round = 0; round < 3; round++) {
        if (round > 0) {
          // kured patches and reboots a node; an hour later it qualifies as a newer prototype.
          world.cluster('prod').kured.patchAndReboot([nodeOf(POOL2, round)]);
          harness.sim.running.clock.advanceBy(2 * 3600);
        }
        const status = await refreshPool(harness, POOL2, {}, `round-${round}`);
        assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
        const result = status.output as PoolRefreshResult;
        assert.equal(result.outcome, 'refreshed', `round ${round}: ${result.reason}`);
        const name = result.version?.versionName ?? '';
        if (names.length > 0) {
          assert.ok(
            compareImageVersions(name, names.at(-1) ?? '') > 0,
            `${name} sorts after ${names.at(-1)}`,
          );
        }
        names.push(name);
        if (round === 2) {
          assert.deepEqual(result.prunedVersions, [names[0]]);
          harness.sim.running.clock.advanceBy(600);
          assert.deepEqual(
            versionsOf(harness, result)
              .map((version) => version.name)
              .sort(compareImageVersions),
            names.slice(1),
            'the oldest version was pruned, history 2 kept',
          );
        }
      }
      // With the newest image built from the latest patch, auto mode now finds the pool up to date.
      const again = await refreshPool(harness, POOL2, {}, 'round-again');
      assert.equal((again.output as PoolRefreshResult).outcome, 'up-to-date');
    } finally {
      await harness.stop();
    }
  });

  void it('plan (dry run) changes nothing in the world', async () => {
    const harness = await startHarness();
    try {
      const world = harness.sim.running.world;
      const before = JSON.stringify(worldState(harness));
      world.log.reset();
      const status = await harness.run(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'test', dryRun: true },
        'plan-1',
      );
      assert.equal(status.runtimeStatus, 'Completed');
      const planned = (status.output as ClusterRefreshResult).pools.filter(
        (pool) => pool.outcome === 'planned',
      );
      assert.deepEqual(planned.map((pool) => pool.pool).sort(), [POOL1, POOL2]);
      assert.equal(JSON.stringify(worldState(harness)), before, 'world state is byte-for-byte the same');
      const writes = world.log.snapshot().entries.filter(
        (entry) =>
          !/(\/read|:get|:list|:watch)$/.test(entry.operation) &&
          !entry.operation.startsWith('GET ') &&
          // Access reviews are POSTs that store nothing: the planning's permission check asks them.
          !/^selfsubject(access|rules)reviews:create$/.test(entry.operation),
      );
      assert.deepEqual(writes, [], 'no write request reached ARM or Kubernetes');
    } finally {
      await harness.stop();
    }
  });

  void it('refuses or skips with a reason: not in the pool, not Ready, Windows, Rolling upgrades', async () => {
    const harness = await startHarness({
      scenario: (scenario) => {
        const cluster = scenario.clusters[0];
        assert.ok(cluster);
        cluster.scaleSets.push(
          { name: 'k8s-win-12345678-vmss', capacity: 1, osType: 'Windows' },
          { name: 'k8s-rolling-12345678-vmss', capacity: 1, upgradePolicy: 'Rolling' },
        );
      },
    });
    try {
      const compute = harness.sim.running.world.compute;
      const cases: { pool: string; node?: string; outcome: string; reason: RegExp }[] = [
        { pool: POOL1, node: nodeOf(POOL2, 1), outcome: 'skipped', reason: /not a member of this pool/ },
        { pool: 'k8s-win-12345678-vmss', outcome: 'refused', reason: /Windows/ },
        { pool: 'k8s-rolling-12345678-vmss', outcome: 'refused', reason: /upgrade policy Rolling/ },
      ];
      // Stop a node's VM: its node turns NotReady and cannot be a prototype even when named.
      const stopped = nodeOf(POOL1, 0);
      const instance = harness.sim.running.world.cluster('prod').world.instanceOfNode(stopped);
      assert.ok(instance);
      compute.powerOffInstance(instance.id);
      harness.sim.running.clock.advanceBy(600);
      cases.push({ pool: POOL1, node: stopped, outcome: 'skipped', reason: /not Ready|NotReady|not ready/i });
      for (const [index, item] of cases.entries()) {
        const status = await refreshPool(
          harness,
          item.pool,
          item.node === undefined ? {} : { node: item.node },
          `r-${index}`,
        );
        assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
        const result = status.output as PoolRefreshResult;
        assert.equal(result.outcome, item.outcome, `${item.pool} ${item.node ?? ''}: ${result.reason}`);
        assert.match(result.reason, item.reason);
      }
      assert.equal(compute.listSnapshots().length, 0);
    } finally {
      await harness.stop();
    }
  });

  void it('a PodDisruptionBudget that never allows ends in a clean failure with the node restored', async () => {
    const donor = nodeOf(POOL2, 1);
    const harness = await startHarness({
      scenario: withUndrainablePod(donor),
      settings: (cluster) => {
        cluster.capture = { ...cluster.capture, drainTimeout: '2m' };
      },
    });
    try {
      const status = await refreshPool(harness, POOL2, { node: donor });
      assert.equal(status.runtimeStatus, 'Failed');
      const message = status.failure?.ErrorMessage ?? '';
      assert.match(message, /^draining: timed out after \d+ s: 1 pods left: default\/singleton-db-/);
      assert.match(message, /disruption budget/i);
      const after = node(harness, donor);
      assert.notEqual(after.spec?.unschedulable, true, 'uncordoned again');
      assert.equal(after.metadata.annotations?.[CAPTURE_RUN_ANNOTATION], undefined);
      assert.equal(after.metadata.annotations?.[SCALE_DOWN_DISABLED_ANNOTATION], undefined);
      const world = harness.sim.running.world;
      assert.equal(world.compute.listSnapshots().length, 0, 'no snapshot was taken');
      const instance = world.cluster('prod').world.instanceOfNode(donor);
      assert.equal(instance?.powerState, 'running', 'the donor was never stopped');
    } finally {
      await harness.stop();
    }
  });

  void it('an operator can cancel a run; it stops at the drain and the node is given back', async () => {
    const donor = nodeOf(POOL2, 1);
    const harness = await startHarness({
      scenario: withUndrainablePod(donor),
    });
    try {
      // Raised the moment the donor is cordoned: the run, draining it, acts on it at its next boundary.
      const store = harness.sim.running.world.cluster('prod').world.store;
      let raised = false;
      const stop = store.subscribe((event) => {
        const object = event.object as NodeObject;
        if (raised || event.resource !== 'nodes' || object.metadata.name !== donor) return;
        if (object.spec?.unschedulable !== true) return;
        raised = true;
        void harness.runner.raiseEvent('cancel-me', 'cancel', 'maintenance window closed');
      });
      const status = await refreshPool(harness, POOL2, { node: donor }, 'cancel-me');
      stop();
      assert.ok(raised, 'the cancel event was delivered');
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        status.failure?.ErrorMessage ?? '',
        new RegExp(
          `^draining: cancelled: maintenance window closed; gave back node ${donor} \\(uncordoned, our ` +
            "annotations removed\\); the pool's lease was released$",
        ),
      );
      const after = node(harness, donor);
      assert.notEqual(after.spec?.unschedulable, true, 'uncordoned again');
      assert.equal(after.metadata.annotations?.[CAPTURE_RUN_ANNOTATION], undefined);
      assert.equal(harness.sim.running.world.compute.listSnapshots().length, 0);
    } finally {
      await harness.stop();
    }
  });

  void it('a cancel raised while the run plans stops it before it takes the pool: nothing is touched', async () => {
    const harness = await startHarness();
    try {
      const store = harness.sim.running.world.cluster('prod').world.store;
      const cordoned = (): string[] =>
        store
          .list('nodes')
          .filter((object) => (object as NodeObject).spec?.unschedulable === true)
          .map((object) => object.metadata.name);
      const cordonedBefore = cordoned();
      const run = refreshPool(harness, POOL2, {}, 'cancel-early');
      // Raised as soon as the instance exists, before it decided anything: the SDK keeps the event until
      // the run opens its cancel watch, right before it takes the pool's lease.
      let raised = false;
      for (let i = 0; i < 500 && !raised; i++) {
        try {
          await harness.runner.raiseEvent('cancel-early', 'cancel', 'maintenance window closed');
          raised = true;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      assert.ok(raised, 'the cancel event was delivered');
      const status = await run;
      assert.equal(status.runtimeStatus, 'Failed');
      assert.equal(
        status.failure?.ErrorMessage,
        "acquiring-lease: cancelled: maintenance window closed; it had changed nothing that needed giving back; the pool's lease was never taken",
      );
      assert.equal(harness.sim.running.world.compute.listSnapshots().length, 0, 'no snapshot was taken');
      assert.deepEqual(cordoned(), cordonedBefore, 'no node was cordoned');
      assert.deepEqual(
        store.list('leases').filter((lease) => lease.metadata.name.startsWith('vmssp-')),
        [],
        "the pool's lease was never taken",
      );
    } finally {
      await harness.stop();
    }
  });
});

/** What a dry run must not change: compute resources and Kubernetes objects, minus clock-driven fields. */
function worldState(harness: Harness): unknown {
  const world = harness.sim.running.world;
  const compute = world.compute;
  const store = world.cluster('prod').world.store;
  const strip = (object: unknown): unknown =>
    JSON.parse(
      JSON.stringify(object, (key, value: unknown) =>
        ['lastHeartbeatTime', 'renewTime', 'resourceVersion'].includes(key) ? undefined : value,
      ),
    );
  return {
    scaleSets: compute
      .listScaleSets()
      .map((scaleSet) => ({ ...scaleSet, instances: compute.listInstances(scaleSet.id) })),
    snapshots: compute.listSnapshots(),
    galleries: compute.listGalleries(world.scenario.subscriptionId, 'rg-K8s-Prod'),
    nodes: strip(store.list('nodes').map((n) => ({ metadata: n.metadata, spec: n['spec'] }))),
    pods: strip(
      store
        .list('pods')
        .map((p) => ({ name: p.metadata.name, node: (p['spec'] as { nodeName?: string }).nodeName })),
    ),
  };
}
