/**
 * Pool ownership on the port fakes through the local runner (virtual clock): the lease refuses a second
 * runner, is renewed through a long image build, and ends a run that lost it without it touching the pool;
 * the reaper gives back exactly what a dead run left; a cancel asked through the lease; the long API
 * server outage; a run resumed after its deadline, and one resumed after its lease was taken (it renews
 * before it judges a wait); the model never moved back; the reboot debounce re-armed for the shortfall.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createDurableRunner, createMemoryStore } from '../../../cli/runner/index.js';
import type {
  PoolSignalInput,
  PoolSignalResult,
} from '../../../functions/orchestrations/pool-signal.orchestration.js';
import type { bindActivities } from '../../../shared/application/activities/catalogue.js';
import {
  ORCHESTRATION,
  releaseInstanceId,
  signalInstanceId,
} from '../../../shared/application/orchestration-ids.js';
import { leaseRefOf } from '../../../shared/application/pool-holdings.js';
import { requestPoolCancel } from '../../../shared/application/pool-lease.js';
import { REBOOT_NOTICE_SCHEMA } from '../../../shared/application/reboot-notices.js';
import type {
  PoolRefreshResult,
  RefreshStatus,
  ReleasePoolResult,
} from '../../../shared/application/refresh-contracts.js';
import {
  CAPTURE_RUN_ANNOTATION,
  SCALE_DOWN_DISABLED_ANNOTATION,
} from '../../../shared/domain/cluster-node.js';
import { TransientError } from '../../../shared/domain/errors.js';
import {
  encodePriorState,
  LEASE_DURATION_SECONDS,
  leaseState,
  type NodePriorState,
  PRIOR_STATE_ANNOTATION,
  SNAPSHOT_TAG_KEYS,
} from '../../../shared/domain/ownership.js';
import { scaleSetResourceId } from '../../../shared/domain/resource-id.js';
import { aNode, LAST_PATCH_ANNOTATION } from '../../builders/node.js';
import {
  CLUSTER,
  createFakeWorld,
  definitionRef,
  failureOf,
  type FakeWorld,
  nodeName,
  poolRef,
  RESOURCE_GROUP,
  START,
  SUBSCRIPTION,
} from './fake-world.js';

const POOL = 'pool1';
const INSTANCE = `refresh:${CLUSTER}:${POOL}`;
const DONOR = nodeName(POOL, 0);
const LEASE = leaseRefOf(poolRef(POOL), 'vmss-prototype');
const MINUTE = 60_000;

function lease(world: FakeWorld) {
  return world.kube.leases.lease(LEASE.namespace, LEASE.name);
}

/** Another runner's lease, renewed `minutesAgo` ago. */
function foreignLease(
  world: FakeWorld,
  runId: string,
  minutesAgo: number,
  extra: Record<string, string> = {},
) {
  const at = new Date(world.clock.now() - minutesAgo * MINUTE).toISOString();
  return world.kube.leases.put({
    ...LEASE,
    holder: `cli/other-host/${runId}`,
    acquiredAt: at,
    renewedAt: at,
    durationSeconds: LEASE_DURATION_SECONDS,
    annotations: { 'vmss-prototype.io/instance-id': INSTANCE, ...extra },
  });
}

/** Writes the fakes never see in a run: what a run that died holding the donor left behind. */
async function leaveDeadRun(
  world: FakeWorld,
  deadRun: string,
  prior: NodePriorState = { unschedulable: false, scaleDownDisabled: null },
): Promise<void> {
  await world.kube.nodes.patchAnnotations(DONOR, {
    [CAPTURE_RUN_ANNOTATION]: deadRun,
    [PRIOR_STATE_ANNOTATION]: encodePriorState(prior),
    [SCALE_DOWN_DISABLED_ANNOTATION]: 'true',
  });
  await world.kube.nodes.setUnschedulable(DONOR, true);
  await world.kube.pods.createPrepPod({
    namespace: 'vmss-prototype',
    name: 'vmssp-prep-dead',
    nodeName: DONOR,
    image: 'busybox',
    script: 'poweroff',
    labels: {
      'app.kubernetes.io/name': 'vmss-prototype-prep',
      'vmss-prototype.io/run': deadRun,
      'vmss-prototype.io/lease': LEASE.name,
    },
  });
  // Its script ran: the VM is off (the guest powered itself off).
  world.compute.schedulePowerOff(poolRef(POOL), '0', world.clock.now());
  assert.equal(world.compute.instanceState(poolRef(POOL), '0')?.powerState, 'stopped');
  await world.compute.snapshots.request({
    subscriptionId: SUBSCRIPTION,
    resourceGroup: RESOURCE_GROUP,
    name: 'vmssp-dead-snapshot',
    location: 'westeurope',
    sourceDiskId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RESOURCE_GROUP}/providers/Microsoft.Compute/disks/d`,
    incremental: false,
    tags: { [SNAPSHOT_TAG_KEYS.runId]: deadRun, [SNAPSHOT_TAG_KEYS.lease]: LEASE.name },
  });
  await world.compute.gallery.ensure(definitionRef(POOL), 'westeurope', {});
  await world.compute.gallery.ensureImageDefinition(definitionRef(POOL), 'westeurope', {
    osType: 'Linux',
    osState: 'Generalized',
    hyperVGeneration: 'V2',
    architecture: 'x64',
    identifier: { publisher: 'p', offer: 'o', sku: 's' },
    tags: {},
  });
  await world.compute.imageVersions.request({
    ref: { ...definitionRef(POOL), versionName: '2026.1122.1' },
    location: 'westeurope',
    sourceId: 'snap',
    storageAccountType: 'Standard_ZRS',
    extraRegions: [],
    excludeFromLatest: true,
    tags: {
      'vmss-prototype.created-by': 'vmss-prototype',
      'vmss-prototype.source-node': DONOR,
      'vmss-prototype.source-vm-id': 'vm',
      'vmss-prototype.cluster': CLUSTER,
      'vmss-prototype.pool': POOL,
      'vmss-prototype.patched-at': '2026-11-20T00:00:00Z',
      'vmss-prototype.run-id': deadRun,
    },
  });
}

void describe('pool ownership', () => {
  void it('a second runner on a held pool is refused with who holds it; it writes nothing', async () => {
    const world = createFakeWorld();
    foreignLease(world, 'run-other', 1);
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'busy');
    assert.match(
      result.reason,
      /held by run run-other of cli on other-host \(instance refresh:prod:pool1\) since .*; its lease expires at /,
    );
    assert.match(result.reason, /vmss-prototype cancel --pool pool1.*vmss-prototype release --pool pool1/);
    assert.deepEqual(
      [...world.kube.calls, ...world.compute.calls]
        .map((c) => c.method)
        .filter((m) => !/^(get|list|scan|review)/.test(m.split('.').at(-1) ?? m)),
      [],
    );
  });

  void it('a run whose plan another run made stale (it held and gave back the pool since) is refused; it writes nothing', async () => {
    const world = createFakeWorld();
    // What the acquire reads: the lease another run released a minute after this run began its plan (as
    // when both started together and this one reached the lease only after the other had finished).
    const releasedAt = new Date(world.clock.now() + MINUTE).toISOString();
    world.kube.leases.put({
      ...LEASE,
      renewedAt: releasedAt,
      durationSeconds: LEASE_DURATION_SECONDS,
      annotations: {
        'vmss-prototype.io/last-holder': 'cli/other-host/run-other',
        'vmss-prototype.io/released-at': releasedAt,
      },
    });
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'busy');
    assert.match(
      result.reason,
      /^pool pool1 was refreshed or released by another run while this one planned: run run-other of cli on other-host held it and released it at \S+, after this run planned at \S+; this plan may be stale/,
    );
    assert.equal(lease(world)?.holder, undefined, 'the lease is not taken');
    assert.deepEqual(
      [...world.kube.calls, ...world.compute.calls]
        .map((c) => c.method)
        .filter((m) => !/^(get|list|scan|review)/.test(m.split('.').at(-1) ?? m)),
      [],
    );
  });

  void it('a run holds the lease from before the first write to the end, renewing it through a long build', async () => {
    const world = createFakeWorld({ compute: { timings: { imageVersion: 50 * MINUTE } } });
    const seen: { at: number; holder?: string }[] = [];
    world.onStep = (step) => {
      if (step === 'cordoning')
        seen.push({
          at: world.clock.now(),
          ...(lease(world)?.holder === undefined ? {} : { holder: lease(world)?.holder }),
        });
    };
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.match(seen[0]?.holder ?? '', new RegExp(`^test/fake-world/${result.runId ?? 'x'}$`));
    // Renewed before the lease could lapse, all through the 50-minute build.
    const renewals = world.kube.callsTo('leases.replace').map((call) => call.at);
    assert.ok(renewals.length >= 20, `${renewals.length} lease writes`);
    let last = world.kube.callsTo('leases.create')[0]?.at ?? 0;
    for (const at of renewals) {
      assert.ok(
        at - last < LEASE_DURATION_SECONDS * 1000,
        `a gap of ${(at - last) / 1000} s between renewals`,
      );
      last = at;
    }
    // Released at the end: free for the next runner.
    assert.equal(leaseState(lease(world), new Date(world.clock.now())).kind, 'free');
    // The run id marks what it built.
    const version = world.compute.imageVersionsNow(definitionRef(POOL))[0];
    assert.equal(version?.tags['vmss-prototype.run-id'], result.runId);
  });

  void it('an activity called right after a renewal does not read the lease again for the cancel check', async () => {
    const calls: { name: string; at: number; watched: boolean }[] = [];
    const world: FakeWorld = createFakeWorld({
      compute: { timings: { imageVersion: 50 * MINUTE } },
      wrapActivity: (name, activity) => (input) => {
        const watched = typeof input === 'object' && input !== null && 'vmsspCancelWatch' in input;
        calls.push({ name, at: world.clock.now(), watched });
        return activity(input);
      },
    });
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    // A renewal made at an activity's boundary (no sleep between them: the same time) read the lease and
    // took any cancel asked there; the activity then carries no watch, and reads the lease no second time.
    const afterRenewal = calls.filter(
      (call, index) =>
        index > 0 && calls[index - 1]?.name === 'renewPoolLease' && calls[index - 1]?.at === call.at,
    );
    assert.ok(afterRenewal.length >= 3, `${afterRenewal.length} activities right after a renewal`);
    assert.deepEqual(
      afterRenewal.filter((call) => call.watched).map((call) => call.name),
      [],
    );
    // Every other activity of the hold still reads the lease first.
    assert.ok(calls.filter((call) => call.watched).length >= 10);
  });

  void it("a dead run's leftovers are given back exactly, first; then the pool is refreshed", async () => {
    const world = createFakeWorld();
    const admin = { unschedulable: true, scaleDownDisabled: 'true' } as const;
    await leaveDeadRun(world, 'run-dead', admin);
    foreignLease(world, 'run-dead', 20); // expired 5 minutes ago
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed');
    assert.deepEqual(
      (result.gaveBack ?? []).map((line) => line.split(' (left by')[0]),
      [
        'delete prep pod vmss-prototype/vmssp-prep-dead',
        `start the VM of node ${DONOR} (instance 0), stopped for a capture`,
        `give node ${DONOR} back: keep it cordoned (it was before), put scale-down-disabled back to "true", remove our marker`,
        'delete snapshot vmssp-dead-snapshot in resource group rg-k8s-prod',
        'delete unfinished image version 2026.1122.1',
      ],
    );
    const donor = world.kube.nodes.node(DONOR);
    assert.equal(donor?.unschedulable, true, 'the administrator cordon stays');
    assert.equal(donor?.annotations[SCALE_DOWN_DISABLED_ANNOTATION], 'true');
    assert.equal(donor?.annotations[CAPTURE_RUN_ANNOTATION], undefined);
    assert.equal(donor?.annotations[PRIOR_STATE_ANNOTATION], undefined);
    assert.equal(world.compute.instanceState(poolRef(POOL), '0')?.powerState, 'running');
    // The cordoned node is not chosen; another one is, and nothing of the dead run is left.
    assert.notEqual(result.donor, DONOR);
    assert.deepEqual(world.compute.snapshotsLeft(), []);
    assert.deepEqual(
      world.compute.imageVersionsNow(definitionRef(POOL)).map((v) => v.ref.versionName),
      [result.version?.versionName],
    );
    assert.equal(world.kube.pods.prepPods().size, 0);
  });

  void it('a run back after its lease expired and was taken over stops without touching the pool', async () => {
    const world = createFakeWorld({ cluster: { prepPodRunMs: 10 * MINUTE } });
    const store = createMemoryStore();
    let diedAt = 0;
    const first = createDurableRunner({
      ...world.runnerOptions,
      store,
      onEvent: (instanceId, event) => {
        const step = world.statuses.findLast((entry) => entry.instanceId === instanceId)?.status as
          RefreshStatus | undefined;
        // The runner dies while it waits for the power-off (the donor cordoned and drained).
        if (diedAt === 0 && step?.step === 'waiting-for-power-off' && event.EventType === 5) {
          diedAt = world.clock.now();
          throw new Error('the process died');
        }
      },
    });
    await assert.rejects(
      first.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: CLUSTER, pool: POOL, trigger: 'test' },
        INSTANCE,
      ),
      /the process died/,
    );
    const deadRun = world.kube.nodes.node(DONOR)?.annotations[CAPTURE_RUN_ANNOTATION];
    assert.ok(deadRun !== undefined);

    // 20 minutes later its lease has expired: another runner's release takes the pool and gives back.
    await world.clock.sleepUntil(diedAt + 20 * MINUTE);
    const other = createDurableRunner({ ...world.runnerOptions, store: createMemoryStore() });
    const released = await other.startOrchestration(
      ORCHESTRATION.releasePool,
      { cluster: CLUSTER, pool: POOL, trigger: 'test' },
      releaseInstanceId(CLUSTER, POOL),
    );
    const output = released.output as ReleasePoolResult;
    assert.equal(output.outcome, 'released', JSON.stringify(output));
    assert.equal(world.kube.nodes.node(DONOR)?.unschedulable, false);
    assert.equal(world.kube.nodes.node(DONOR)?.annotations[CAPTURE_RUN_ANNOTATION], undefined);
    assert.equal(world.compute.instanceState(poolRef(POOL), '0')?.powerState, 'running');
    assert.equal(world.kube.pods.prepPods().size, 0);

    // The first runner comes back: its run finds the lease gone and writes nothing more.
    const before = { kube: world.kube.calls.length, compute: world.compute.calls.length };
    const resumed = await createDurableRunner({ ...world.runnerOptions, store }).resume(INSTANCE);
    assert.equal(resumed.runtimeStatus, 'Failed');
    assert.match(
      failureOf(resumed),
      new RegExp(`^renewing-lease: run ${deadRun} no longer holds pool pool1: the lease was released`),
    );
    const writes = [...world.kube.calls.slice(before.kube), ...world.compute.calls.slice(before.compute)]
      .filter((call) => !/^(get|list|scan|review)/.test(call.method.split('.').at(-1) ?? call.method))
      .map((call) => call.method);
    assert.deepEqual(writes, [], 'no write after the takeover');
    assert.equal(world.kube.nodes.node(DONOR)?.unschedulable, false);
  });

  void it('a run resumed after its lease was taken renews it before judging a wait timed out', async () => {
    // The runner dies just after a renewal's answer was recorded, during the power-off wait; it comes back
    // after the lease expired, another run took the pool and the wait's deadline passed. Replaying that
    // answer must not count as a renewal made now: the run renews (and finds the lease taken) before it
    // judges the wait, instead of timing out and giving back a donor that is no longer its own.
    const world = createFakeWorld({ cluster: { prepPodRunMs: 10 * MINUTE } });
    const store = createMemoryStore();
    let diedAt = 0;
    const first = createDurableRunner({
      ...world.runnerOptions,
      store,
      onEvent: (instanceId, event) => {
        const step = world.statuses.findLast((entry) => entry.instanceId === instanceId)?.status as
          RefreshStatus | undefined;
        const renewed = world.kube.calls.at(-1)?.method === 'leases.replace';
        if (diedAt === 0 && step?.step === 'waiting-for-power-off' && event.EventType === 5 && renewed) {
          diedAt = world.clock.now();
          throw new Error('the process died');
        }
      },
    });
    await assert.rejects(
      first.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: CLUSTER, pool: POOL, trigger: 'test' },
        INSTANCE,
      ),
      /the process died/,
    );
    const deadRun = world.kube.nodes.node(DONOR)?.annotations[CAPTURE_RUN_ANNOTATION];
    assert.ok(deadRun !== undefined);

    // Past the lease (15 minutes) and the power-off wait's deadline (20 minutes from its start).
    await world.clock.sleepUntil(diedAt + 25 * MINUTE);
    const other = createDurableRunner({ ...world.runnerOptions, store: createMemoryStore() });
    const released = await other.startOrchestration(
      ORCHESTRATION.releasePool,
      { cluster: CLUSTER, pool: POOL, trigger: 'test' },
      releaseInstanceId(CLUSTER, POOL),
    );
    assert.equal((released.output as ReleasePoolResult).outcome, 'released');

    const before = { kube: world.kube.calls.length, compute: world.compute.calls.length };
    const resumed = await createDurableRunner({ ...world.runnerOptions, store }).resume(INSTANCE);
    assert.equal(resumed.runtimeStatus, 'Failed');
    assert.match(
      failureOf(resumed),
      new RegExp(`^renewing-lease: run ${deadRun} no longer holds pool pool1: the lease was released`),
    );
    const writes = [...world.kube.calls.slice(before.kube), ...world.compute.calls.slice(before.compute)]
      .filter((call) => !/^(get|list|scan|review)/.test(call.method.split('.').at(-1) ?? call.method))
      .map((call) => call.method);
    assert.deepEqual(writes, [], 'no write after the takeover');
  });

  void it('a write fenced by a lease the run no longer holds is refused', async () => {
    const world = createFakeWorld();
    foreignLease(world, 'run-other', 0);
    const registry = world.runnerOptions.activities as ReturnType<typeof bindActivities>;
    const result = await registry.protectNode({
      cluster: CLUSTER,
      node: DONOR,
      prior: { unschedulable: false, scaleDownDisabled: null },
      fence: { ...LEASE, runId: 'run-mine' },
    });
    assert.equal(result.ok, false);
    assert.equal(result.ok ? '' : result.failure.code, 'LeaseLost');
    assert.equal(world.kube.callsTo('nodes.patchAnnotations').length, 0);
  });

  void it('a cancel asked through the lease (any machine) gives the node back', async () => {
    const world = createFakeWorld({ cluster: { prepPodRunMs: 10 * MINUTE } });
    world.onStep = (step) => {
      if (step !== 'waiting-for-power-off') return;
      void requestPoolCancel(world.kube, LEASE, 'maintenance window closed', new Date(world.clock.now()));
    };
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Failed');
    // Seen by the very next activity, which read the lease first (not at the next renewal): the prep pod
    // (10 minutes) had not powered the VM off yet.
    assert.equal(
      failureOf(status),
      `waiting-for-power-off: cancelled: maintenance window closed; gave back node ${DONOR} (uncordoned, our ` +
        "annotations removed); the pool's lease was released",
    );
    const donor = world.kube.nodes.node(DONOR);
    assert.equal(donor?.unschedulable, false);
    assert.equal(donor?.annotations[CAPTURE_RUN_ANNOTATION], undefined);
    assert.equal(world.kube.pods.prepPods().size, 0);
    assert.equal(world.compute.instanceState(poolRef(POOL), '0')?.powerState, 'running');
    assert.equal(leaseState(lease(world), new Date(world.clock.now())).kind, 'free', 'released');
  });

  void it('an API server down 45 minutes during the hold: the node is given back once it answers, and the failure says so', async () => {
    const world = createFakeWorld();
    let downUntil = 0;
    world.onStep = (step) => {
      if (step !== 'draining' || downUntil > 0) return;
      downUntil = world.clock.now() + 45 * MINUTE;
      world.kube.failAllUntil(
        downUntil,
        new TransientError(
          'ClusterUnreachable',
          'cannot reach the API server of cluster prod (ECONNREFUSED)',
        ),
      );
    };
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Failed');
    const message = failureOf(status);
    assert.match(message, /^draining: cannot reach the API server/);
    assert.match(
      message,
      new RegExp(`node ${DONOR} was given back at \\S+, once the cluster's API server answered again`),
    );
    const donor = world.kube.nodes.node(DONOR);
    assert.equal(donor?.unschedulable, false);
    assert.equal(donor?.annotations[CAPTURE_RUN_ANNOTATION], undefined);
    assert.ok(world.clock.now() >= downUntil);
    const waiting = world.statuses
      .filter((entry) => entry.instanceId === INSTANCE)
      .map((entry) => (entry.status as RefreshStatus).detail ?? '')
      .find((detail) => detail.startsWith('waiting to give node'));
    assert.match(
      waiting ?? '',
      /waiting to give node .* back \(attempt \d+ failed: cannot reach the API server.*\); next attempt at .*, trying until /,
    );
  });

  void it('a run resumed after its deadline reads the world again before judging it', async () => {
    const world = createFakeWorld();
    const store = createMemoryStore();
    let crashAt = 0;
    const first = createDurableRunner({
      ...world.runnerOptions,
      store,
      onEvent: (instanceId, event) => {
        const step = world.statuses.findLast((entry) => entry.instanceId === instanceId)?.status as
          RefreshStatus | undefined;
        // Dies right after a poll result of the power-off wait was persisted, before it was judged.
        if (crashAt === 0 && step?.step === 'waiting-for-power-off' && event.EventType === 5) {
          crashAt = world.clock.now();
          throw new Error('the process died');
        }
      },
    });
    await assert.rejects(
      first.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: CLUSTER, pool: POOL, trigger: 'test' },
        INSTANCE,
      ),
      /the process died/,
    );
    // Back 30 minutes later: past the 20-minute power-off deadline; the VM powered off long ago.
    await world.clock.sleepUntil(crashAt + 30 * MINUTE);
    const second = createDurableRunner({ ...world.runnerOptions, store });
    const status = await second.resume(INSTANCE);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed');
  });

  void it('a run never moves the model to an older version than the one it finds there', async () => {
    const world = createFakeWorld({ run: { pinVersion: true } });
    world.onStep = (step) => {
      if (step !== 'publishing-image-version') return;
      world.onStep = undefined;
      // A newer version is in the model by now (another run, or an operator's rollforward).
      const newer = `${scaleSetResourceId(poolRef(POOL)).replace(/\/providers\/.*/, '')}/providers/Microsoft.Compute/galleries/vmssp_gallery/images/${definitionRef(POOL).imageName}/versions/2099.101.1`;
      void world.compute.scaleSets.requestImageUpdate(poolRef(POOL), {
        imageId: newer,
        customDataBase64: '',
      });
    };
    const status = await world.refreshPool(POOL);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.match(
      result.modelKept ?? '',
      /the model already uses version 2099\.101\.1, newer than \S+; it was left as is/,
    );
    const model = world.compute.scaleSetState(poolRef(POOL))?.imageReference;
    assert.match(model?.kind === 'gallery' ? model.id : '', /\/versions\/2099\.101\.1$/);
    assert.deepEqual(result.removedExtensions, []);
  });
});

void describe('reboot debounce re-arm', () => {
  void it('a rebooted node Ready too briefly for the planned refresh is refreshed when old enough', async () => {
    const world = createFakeWorld();
    // Only the rebooted node can be the donor: the others are cordoned by an administrator.
    await world.kube.nodes.setUnschedulable(nodeName(POOL, 1), true);
    await world.kube.nodes.setUnschedulable(nodeName(POOL, 2), true);
    // kured rebooted it now (START); it is Ready again a minute later, with the newest patches.
    const rebootedAt = START;
    const rebooted = aNode({
      name: DONOR,
      pool: poolRef(POOL),
      instanceId: 0,
      readySince: new Date(rebootedAt + MINUTE).toISOString(),
      annotations: { [LAST_PATCH_ANNOTATION]: new Date(rebootedAt - 5 * MINUTE).toISOString() },
    });
    // aks-engine's label, as on the fake world's other nodes: the plan detects the bootstrap flavour.
    world.kube.nodes.add({
      ...rebooted,
      labels: { ...rebooted.labels, 'kubernetes.azure.com/role': 'agent' },
    });
    const input: PoolSignalInput = {
      cluster: CLUSTER,
      pool: POOL,
      quietPeriodSeconds: 600,
      minimumReadySeconds: 3600,
      notice: {
        schema: REBOOT_NOTICE_SCHEMA,
        source: 'health-resources',
        resourceId: `${scaleSetResourceId(poolRef(POOL))}/virtualMachines/0`,
        observedAt: new Date(rebootedAt).toISOString(),
        eventId: 'e-1',
      },
    };
    const status = await world.runner.startOrchestration(
      ORCHESTRATION.poolSignal,
      input,
      signalInstanceId(CLUSTER, POOL),
    );
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const output = status.output as PoolSignalResult;
    assert.deepEqual(
      output.runs.map((run) => run.outcome),
      ['skipped', 'refreshed'],
      JSON.stringify(output.runs),
    );
    // The second plan ran when the node had been Ready for the hour (plus a 30 s margin), not at a timer.
    const plans = world.compute.callsTo('scaleSets.get').map((call) => call.at);
    const planAt = plans.find((at) => at > rebootedAt + 61 * MINUTE);
    assert.equal(planAt, rebootedAt + 61 * MINUTE + 30_000);
    const model = world.compute.scaleSetState(poolRef(POOL))?.imageReference;
    assert.equal(model?.kind, 'gallery');
    const latencyMinutes = (world.clock.now() - rebootedAt) / MINUTE;
    assert.ok(latencyMinutes < 60 + 10 + 20, `reboot → model in ${latencyMinutes} min`);
  });
});
