/**
 * refreshPool through the local runner on the in-memory port fakes (virtual clock): every step's success,
 * transient failures retried on durable timers (Retry-After honoured), terminal failures failing at once
 * with the step and advice, cancel, and the paths that give the donor back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { listenToRetries, type RetryNotice } from '../../../functions/orchestrations/retry-notices.js';
import { EVENT } from '../../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult, RefreshStep } from '../../../shared/application/refresh-contracts.js';
import {
  CAPTURE_RUN_ANNOTATION,
  SCALE_DOWN_DISABLED_ANNOTATION,
} from '../../../shared/domain/cluster-node.js';
import { NO_OP_CLOUD_CONFIG } from '../../../shared/domain/compute.js';
import { TerminalError, TransientError } from '../../../shared/domain/errors.js';
import type { ComputeMethod } from '../../../shared/ports/compute/index.js';
import type { KubernetesMethod } from '../../../shared/ports/kubernetes/index.js';
import { LAST_PATCH_ANNOTATION } from '../../builders/node.js';
import {
  appPod,
  armError,
  createFakeWorld,
  definitionRef,
  failureOf,
  type FakeWorld,
  nodeName,
  poolRef,
  RESOURCE_GROUP,
  START,
} from './fake-world.js';

const POOL = 'pool1';
const INSTANCE = `refresh:prod:${POOL}`;
const DONOR = nodeName(POOL, 0);

/** The donor is back as it was: schedulable, without our annotations, its VM running. */
/**
 * A donor whose VM could not be started is kept cordoned and marked (finding 1): the marks are
 * the record that we stopped its VM, for `status`, `release` and the reaper.
 */
function assertDonorKeptForReaper(world: FakeWorld): void {
  const donor = world.kube.nodes.node(DONOR);
  assert.equal(donor?.unschedulable, true, 'donor still cordoned');
  assert.notEqual(donor?.annotations[CAPTURE_RUN_ANNOTATION], undefined, 'run marker kept');
  assert.notEqual(world.compute.instanceState(poolRef(POOL), '0')?.powerState, 'running');
  assert.equal(world.kube.pods.prepPods().size, 0, 'no prep pod left');
}

function assertDonorGivenBack(world: FakeWorld, vmRunning = true): void {
  const donor = world.kube.nodes.node(DONOR);
  assert.equal(donor?.unschedulable, false, 'donor uncordoned');
  assert.equal(donor?.annotations[CAPTURE_RUN_ANNOTATION], undefined, 'run marker removed');
  assert.equal(
    donor?.annotations[SCALE_DOWN_DISABLED_ANNOTATION],
    undefined,
    'scale-down protection removed',
  );
  if (vmRunning) assert.equal(world.compute.instanceState(poolRef(POOL), '0')?.powerState, 'running');
  assert.equal(world.kube.pods.prepPods().size, 0, 'no prep pod left');
}

/** Calls of a fake's method, as epoch ms. */
function callTimes(world: FakeWorld, target: 'compute' | 'kube', method: string): number[] {
  const fake = target === 'compute' ? world.compute : world.kube;
  return fake.calls.filter((call) => call.method === method).map((call) => call.at);
}

void describe('refreshPool on the port fakes', () => {
  void it('refreshes the pool through every step and gives the donor back', async () => {
    const world = createFakeWorld();

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refreshed');
    assert.equal(result.donor, DONOR);
    assert.deepEqual(world.stepsOf(INSTANCE), [
      'planning',
      'acquiring-lease',
      'giving-back-leftovers',
      'ensuring-image-definition',
      'pulling-prep-image',
      'cordoning',
      'draining',
      'preparing-disk',
      'waiting-for-power-off',
      'snapshotting',
      'restoring-node',
      'building-image-version',
      'deleting-snapshot',
      'publishing-image-version',
      'updating-scale-set-model',
      'removing-bootstrap-extensions',
      'pruning-versions',
      'labelling-generations',
      'releasing-lease',
      'done',
    ]);
    const scaleSet = world.compute.scaleSetState(poolRef(POOL));
    const modelImage = scaleSet?.imageReference?.kind === 'gallery' ? scaleSet.imageReference.id : '';
    assert.equal(
      modelImage.toLowerCase(),
      result.version?.id.replace(/\/versions\/[^/]+$/, '').toLowerCase(),
    );
    assert.equal(
      Buffer.from(scaleSet?.customDataBase64 ?? '', 'base64').toString('utf8'),
      NO_OP_CLOUD_CONFIG,
    );
    assert.deepEqual(result.removedExtensions, ['vmssCSE']);
    // The status page's run timeline: how the donor was captured, when the version went to latest.
    const built = world.compute
      .imageVersionsNow(definitionRef(POOL))
      .find((candidate) => candidate.ref.versionName === result.version?.versionName);
    assert.equal(built?.tags['vmss-prototype.capture-mode'], 'drain-and-stop');
    assert.match(built?.tags['vmss-prototype.in-latest-at'] ?? '', /^\d{4}-\d\d-\d\dT/);
    assert.equal(result.version?.storageAccountType, 'Standard_ZRS');
    const versions = world.compute.imageVersionsNow(definitionRef(POOL));
    assert.deepEqual(
      versions.map((v) => [v.ref.versionName, v.provisioningState, v.excludeFromLatest]),
      [[result.version?.versionName, 'Succeeded', false]],
    );
    assert.deepEqual(world.compute.snapshotsLeft(), []);
    assert.deepEqual(
      world.kube.pods.podsOn(DONOR).map((pod) => pod.name),
      ['agent-pool1-0'],
      'drained but the DaemonSet pod',
    );
    assertDonorGivenBack(world);
    assert.ok((result.donorOutOfServiceSeconds ?? 0) > 0);
  });

  void it('reads nothing of Azure it has just read', async () => {
    const world = createFakeWorld();
    /** The compute calls made during each step, in order. */
    const byStep = new Map<string, string[]>();
    let step = 'planning';
    let seen = 0;
    const settle = (): void => {
      const calls = world.compute.calls.slice(seen).map((call) => call.method);
      seen = world.compute.calls.length;
      byStep.set(step, [...(byStep.get(step) ?? []), ...calls]);
    };
    world.onStep = (next, instanceId) => {
      if (instanceId !== INSTANCE) return;
      settle();
      step = next;
    };

    const status = await world.refreshPool(POOL);
    settle();

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    // The plan listed the definition's versions: the leftovers' read under the lease takes its list.
    const listings = [...(byStep.get('planning') ?? []), ...(byStep.get('giving-back-leftovers') ?? [])];
    assert.equal(listings.filter((method) => method === 'imageVersions.list').length, 1, listings.join(', '));
    // The snapshot's deletion is asked for, not waited for (it shows Deleting until gone).
    assert.deepEqual(byStep.get('deleting-snapshot'), ['snapshots.requestDeletion']);
    // The holdings saw the definition missing: it is created unread.
    assert.deepEqual(
      byStep.get('ensuring-image-definition')?.filter((method) => method !== 'gallery.ensure'),
      ['gallery.ensureImageDefinition'],
    );
    // The donor was just seen stopped: its start reads it no more.
    const restoring = byStep.get('restoring-node') ?? [];
    assert.equal(restoring[0], 'instances.requestStart', restoring.join(', '));
    // The model's update starts from what the stop record's removal wrote (If-Match): no read first.
    const pointing = byStep.get('updating-scale-set-model') ?? [];
    assert.equal(pointing[0], 'scaleSets.requestImageUpdate', pointing.join(', '));
    // The model read that saw the image done listed the extensions: only the deletion's wait lists.
    const removing = byStep.get('removing-bootstrap-extensions') ?? [];
    assert.equal(removing[0], 'scaleSets.requestExtensionDeletion', removing.join(', '));
    // The generations step starts from the image the model step saw and the versions the pruning listed.
    const labelling = byStep.get('labelling-generations') ?? [];
    assert.ok(!labelling.includes('scaleSets.get'), labelling.join(', '));
    assert.ok(!labelling.includes('imageVersions.list'), labelling.join(', '));
    assert.deepEqual(byStep.get('pruning-versions'), ['imageVersions.list']);
  });

  void it('reads the definition again only when the model does not point at it', async () => {
    const world = createFakeWorld();
    let ensuring = false;
    const reads: boolean[] = [];
    world.onStep = (step, instanceId) => {
      if (instanceId === INSTANCE) ensuring = step === 'ensuring-image-definition';
    };
    const getDefinition = world.compute.gallery.getImageDefinition.bind(world.compute.gallery);
    world.compute.gallery.getImageDefinition = (ref) => {
      if (ensuring) reads.push(true);
      return getDefinition(ref);
    };
    const first = await world.refreshPool(POOL);
    assert.equal(first.runtimeStatus, 'Completed', failureOf(first));
    assert.deepEqual(reads, [], 'the first refresh saw it missing: created unread');
    const calls = world.compute.calls.length;

    // The model points at the definition now: its versions listed under the lease say it exists, and the
    // plan read it through the model.
    const next = await world.refreshPool(POOL, { node: DONOR });
    assert.equal(next.runtimeStatus, 'Completed', failureOf(next));
    assert.equal((next.output as PoolRefreshResult).outcome, 'refreshed');
    assert.deepEqual(reads, []);
    const methods = world.compute.calls.slice(calls).map((call) => call.method);
    assert.ok(!methods.includes('gallery.ensureImageDefinition'), methods.join(', '));
    assert.ok(!methods.includes('gallery.ensure'), methods.join(', '));
  });

  void it('reads the published version only when ARM answered the publication still applying', async () => {
    for (const [imageVersionUpdate, polled] of [
      [10_000, true],
      [0, false],
    ] as const) {
      const world = createFakeWorld({ compute: { timings: { imageVersionUpdate } } });
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      const methods = world.compute.calls.map((call) => call.method);
      const published = world.compute.calls.findIndex(
        (call) => call.method === 'imageVersions.requestExclusion' && call.args[1] === false,
      );
      // The model's update is written from what the stop record's removal left: no read before it.
      const pointed = methods.indexOf('scaleSets.requestImageUpdate', published);
      assert.ok(published >= 0 && pointed > published, methods.join(', '));
      // Answered Updating (10 s to apply): the wait reads it; answered Succeeded: nothing left to read.
      const between = methods.slice(published + 1, pointed);
      assert.ok(
        between.every((method) => method === 'imageVersions.get') && between.length > 0 === polled,
        `update takes ${imageVersionUpdate} ms: ${between.join(', ')}`,
      );
      const version = world.compute
        .imageVersionsNow(definitionRef(POOL))
        .find(
          (candidate) =>
            candidate.ref.versionName === (status.output as PoolRefreshResult).version?.versionName,
        );
      assert.equal(version?.excludeFromLatest, false);
    }
  });

  void it('a pruning result recorded before it handed over its list (the names alone) still ends the run', async () => {
    // What a worker of the previous release recorded in a history that this release replays.
    const world = createFakeWorld({
      wrapActivity: (name, activity) => async (input) => {
        const result = await activity(input);
        if (name !== 'pruneImageVersions' || !result.ok) return result;
        return { ok: true, value: (result.value as { pruned: readonly string[] }).pruned };
      },
    });
    let labelling = false;
    world.onStep = (step) => {
      labelling = step === 'labelling-generations';
    };
    const listed: boolean[] = [];
    const listVersions = world.compute.imageVersions.list.bind(world.compute);
    world.compute.imageVersions.list = (ref) => {
      listed.push(labelling);
      return listVersions(ref);
    };

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const result = status.output as PoolRefreshResult;
    assert.deepEqual(result.prunedVersions, []);
    assert.ok(listed.includes(true), 'the generations step listed the versions itself');
    assert.equal(result.generations?.nodes, 3);
  });

  void it('refreshes from an operator-named node', async () => {
    const world = createFakeWorld();
    const status = await world.refreshPool(POOL, { node: nodeName(POOL, 2) });
    assert.equal((status.output as PoolRefreshResult).donor, nodeName(POOL, 2));
  });

  void it('records a named donor’s own patch time, not the build time, even when it is not the newest', async () => {
    const world = createFakeWorld();
    const first = await world.refreshPool(POOL);
    assert.equal(first.runtimeStatus, 'Completed', failureOf(first));
    // Named after the first version: its patch is not after that version's, so it is no candidate.
    const named =
      nodeName(POOL, 2) === (first.output as PoolRefreshResult).donor ? nodeName(POOL, 1) : nodeName(POOL, 2);
    const patched = (await world.kube.nodes.get(named)).annotations[LAST_PATCH_ANNOTATION] ?? '';
    const second = await world.refreshPool(POOL, { node: named });
    const result = second.output as PoolRefreshResult;
    assert.equal(result.donor, named, failureOf(second));
    const built = world.compute
      .imageVersionsNow(definitionRef(POOL))
      .find((candidate) => candidate.ref.versionName === result.version?.versionName);
    assert.equal(Date.parse(built?.tags['vmss-prototype.patched-at'] ?? ''), Date.parse(patched));
    assert.equal(built?.tags['vmss-prototype.patched-at-basis'], 'donor');
  });

  void it('a dry run plans and writes nothing', async () => {
    const world = createFakeWorld();
    const status = await world.refreshPool(POOL, { dryRun: true });
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'planned');
    assert.deepEqual(
      [...world.compute.calls, ...world.kube.calls]
        .map((call) => call.method)
        // Access reviews are reads too: they ask the API server, they change nothing.
        .filter((m) => !/^(get|list|scan|review|version)/.test(m.split('.').at(-1) ?? m)),
      [],
    );
  });

  void it('a refused pool is reported with the reason and touched nowhere', async () => {
    const world = createFakeWorld({ scaleSets: { [POOL]: { upgradePolicyMode: 'Rolling' } } });
    const status = await world.refreshPool(POOL);
    const result = status.output as PoolRefreshResult;
    assert.equal(result.outcome, 'refused');
    assert.match(result.reason, /Rolling/);
    assert.equal(world.kube.callsTo('nodes.patchAnnotations').length, 0);
  });

  void it("the model's Azure Disk Encryption extension keeps live capture out: refused under live, drain-and-stop under auto", async () => {
    const extensions = {
      [POOL]: [
        { name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
        { name: 'ade', publisher: 'Microsoft.Azure.Security', type: 'AzureDiskEncryptionForLinux' },
      ],
    };
    const live = createFakeWorld({ extensions, run: { captureMode: 'live' } });
    const refused = (await live.refreshPool(POOL, { dryRun: true })).output as PoolRefreshResult;
    assert.equal(refused.outcome, 'refused');
    assert.match(refused.reason, /Azure Disk Encryption encrypts the disk inside the guest/);

    const auto = createFakeWorld({ extensions, run: { captureMode: 'auto' } });
    const planned = (await auto.refreshPool(POOL, { dryRun: true })).output as PoolRefreshResult;
    assert.equal(planned.plan?.capture?.mode, 'drain-and-stop');
    assert.match(planned.plan?.capture?.reason ?? '', /^auto: drain-and-stop, because Azure Disk Encryption/);
  });

  void describe('must show', () => {
    void it('a planning activity failing with a 403 is attempted once and fails the run at once, naming the permission', async () => {
      const world = createFakeWorld();
      world.compute.nextError(
        'scaleSets.get',
        armError(`reading scale set ${RESOURCE_GROUP}/${POOL}`, 403, {
          code: 'AuthorizationFailed',
          message:
            "The client '0b7c…' with object id '0b7c…' does not have authorization to perform action " +
            `'Microsoft.Compute/virtualMachineScaleSets/read' over scope '/subscriptions/s/resourceGroups/${RESOURCE_GROUP}/providers/Microsoft.Compute/virtualMachineScaleSets/${POOL}' ` +
            'or the scope is invalid. If access was recently granted, please refresh your credentials.',
        }),
      );

      const status = await world.refreshPool(POOL);

      assert.equal(status.runtimeStatus, 'Failed');
      assert.equal(world.compute.callsTo('scaleSets.get').length, 1, 'exactly one attempt');
      assert.equal(world.clock.now(), START, 'no retry timer was waited');
      assert.match(
        failureOf(status),
        /^planning: reading scale set rg-k8s-prod\/pool1: the identity lacks permission Microsoft\.Compute\/virtualMachineScaleSets\/read on scope \/subscriptions\/s\/.* \(AuthorizationFailed, HTTP 403\) — add it to the role of the identity that runs this \(the function app's managed identity, or yours when you run the CLI: docs\/prerequisites\.md\)$/,
      );
    });

    void it('ARM throttling with Retry-After: 17 is retried 17 s later on the virtual clock, not on a fixed schedule', async () => {
      const world = createFakeWorld();
      const throttled = (): unknown =>
        armError(
          `reading scale set ${RESOURCE_GROUP}/${POOL}`,
          429,
          { code: 'TooManyRequests', message: 'The request is being throttled.' },
          { 'Retry-After': '17' },
        );
      world.compute.nextError('scaleSets.get', throttled(), throttled());

      const status = await world.refreshPool(POOL);

      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      const [first, second, third] = callTimes(world, 'compute', 'scaleSets.get');
      assert.ok(first !== undefined && second !== undefined && third !== undefined);
      // The own backoff would be 5 s then 10 s; ARM asked for 17 s each time.
      assert.ok(second - first >= 17_000, `second attempt after ${second - first} ms`);
      assert.ok(third - second >= 17_000, `third attempt after ${third - second} ms`);
      assert.ok(second - first < 18_000 && third - second < 18_000, 'not a longer fixed schedule either');
    });
  });

  void it('an unreachable API server: the retry listener is told once per retry, with attempt and wait', async () => {
    const world = createFakeWorld();
    const refused = (): unknown =>
      new TransientError('ClusterUnreachable', 'scanning nodes: cannot reach the API server (ECONNREFUSED)', {
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
      });
    world.kube.nextError('nodes.scan', refused(), refused());
    const told: RetryNotice[] = [];
    const previous = listenToRetries((notice) => told.push(notice));
    let status;
    try {
      status = await world.refreshPool(POOL);
    } finally {
      listenToRetries(previous);
    }
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.deepEqual(
      told.map((n) => [n.activity, n.cluster, n.failure.networkCode, n.nextAttempt, n.maxAttempts, n.waitMs]),
      [
        ['planPool', 'prod', 'ECONNREFUSED', 2, 6, 5_000],
        ['planPool', 'prod', 'ECONNREFUSED', 3, 6, 10_000],
      ],
    );
  });

  void describe('each step: a transient failure is retried, a terminal one fails the run at once', () => {
    /** Where a failure is injected: the first call of `method` after the run publishes step `armAt`. */
    const STEPS: {
      step: RefreshStep;
      armAt: RefreshStep;
      target: 'compute' | 'kube';
      method: ComputeMethod | KubernetesMethod;
      /** The donor's VM is stopped when this step fails terminally (its start is what failed). */
      vmStopped?: boolean;
      /** The snapshot cannot be deleted when this step fails terminally. */
      snapshotLeft?: boolean;
    }[] = [
      { step: 'planning', armAt: 'planning', target: 'kube', method: 'nodes.scan' },
      {
        step: 'ensuring-image-definition',
        armAt: 'ensuring-image-definition',
        target: 'compute',
        method: 'gallery.ensure',
      },
      {
        step: 'recording-node-state',
        armAt: 'ensuring-image-definition',
        target: 'kube',
        method: 'nodes.get',
      },
      { step: 'cordoning', armAt: 'cordoning', target: 'kube', method: 'nodes.setUnschedulable' },
      { step: 'draining', armAt: 'draining', target: 'kube', method: 'pods.listOnNode' },
      { step: 'preparing-disk', armAt: 'preparing-disk', target: 'kube', method: 'pods.createPrepPod' },
      {
        step: 'waiting-for-power-off',
        armAt: 'waiting-for-power-off',
        target: 'kube',
        method: 'pods.getPhase',
      },
      { step: 'snapshotting', armAt: 'snapshotting', target: 'compute', method: 'snapshots.request' },
      {
        step: 'restoring-node',
        armAt: 'restoring-node',
        target: 'compute',
        method: 'instances.requestStart',
        vmStopped: true,
      },
      {
        step: 'building-image-version',
        armAt: 'building-image-version',
        target: 'compute',
        method: 'imageVersions.request',
      },
      {
        step: 'publishing-image-version',
        armAt: 'publishing-image-version',
        target: 'compute',
        method: 'imageVersions.requestExclusion',
      },
      {
        step: 'deleting-snapshot',
        armAt: 'deleting-snapshot',
        target: 'compute',
        method: 'snapshots.requestDeletion',
        snapshotLeft: true,
      },
      {
        step: 'updating-scale-set-model',
        armAt: 'updating-scale-set-model',
        target: 'compute',
        method: 'scaleSets.requestImageUpdate',
      },
      {
        step: 'removing-bootstrap-extensions',
        armAt: 'removing-bootstrap-extensions',
        target: 'compute',
        method: 'scaleSets.requestExtensionDeletion',
      },
      {
        step: 'pruning-versions',
        armAt: 'pruning-versions',
        target: 'compute',
        method: 'imageVersions.list',
      },
    ];

    function armed(
      row: (typeof STEPS)[number],
      error: () => unknown,
      times = 1,
    ): { world: FakeWorld; armedAt: () => number } {
      const world = createFakeWorld();
      let armedIndex = -1;
      world.onStep = (step, instanceId) => {
        if (instanceId !== INSTANCE || step !== row.armAt || armedIndex >= 0) return;
        armedIndex = callTimes(world, row.target, row.method).length;
        const errors = Array.from({ length: times }, error);
        if (row.target === 'compute') world.compute.nextError(row.method as ComputeMethod, ...errors);
        else world.kube.nextError(row.method as KubernetesMethod, ...errors);
      };
      return { world, armedAt: () => armedIndex };
    }

    for (const row of STEPS) {
      void it(`${row.step}: a transient failure (${row.target}.${row.method}) is retried after a backoff`, async () => {
        const { world, armedAt } = armed(
          row,
          () => new TransientError('Http503', `${row.method}: server error (Http503, HTTP 503)`),
        );

        const status = await world.refreshPool(POOL);

        assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
        assert.ok(armedAt() >= 0, 'the step was reached');
        const [failed, retried] = callTimes(world, row.target, row.method).slice(armedAt());
        assert.ok(failed !== undefined && retried !== undefined, 'called again');
        assert.ok(retried - failed >= 5_000, `retried after ${retried - failed} ms`);
      });

      void it(`${row.step}: a terminal failure (${row.target}.${row.method}) fails the run at once, the donor given back`, async () => {
        const { world, armedAt } = armed(
          row,
          () => new TerminalError('Forbidden', `${row.method}: refused`, { advice: 'grant what is missing' }),
        );

        const status = await world.refreshPool(POOL);

        assert.equal(status.runtimeStatus, 'Failed');
        const message = failureOf(status);
        assert.ok(message.startsWith(`${row.step}: `), message);
        assert.match(message, new RegExp(`${row.method}: refused — grant what is missing`));
        assert.equal(callTimes(world, row.target, row.method).length - armedAt(), 1, 'exactly one attempt');
        if (row.vmStopped === true) assertDonorKeptForReaper(world);
        else assertDonorGivenBack(world);
        if (row.snapshotLeft !== true)
          assert.deepEqual(world.compute.snapshotsLeft(), [], 'no snapshot left');
      });
    }
  });

  void describe('capture failures', () => {
    void it('a snapshot quota refusal fails at once with the advice, the node started and given back', async () => {
      const world = createFakeWorld();
      world.onStep = (step) => {
        if (step !== 'snapshotting') return;
        world.compute.nextError(
          'snapshots.request',
          armError(`requesting snapshot ${RESOURCE_GROUP}/snap`, 409, {
            code: 'OperationNotAllowed',
            message:
              'Operation could not be completed as it results in exceeding approved Total Regional Snapshots quota.',
          }),
        );
      };
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.equal(world.compute.callsTo('snapshots.request').length, 1);
      assert.match(
        failureOf(status),
        /^snapshotting: requesting snapshot .*quota.*\(OperationNotAllowed, HTTP 409\) — the node was started and given back; check the snapshot quota/,
      );
      assertDonorGivenBack(world);
    });

    void it('a transient failure that outlasts the retries fails the step, saying how long it was tried', async () => {
      const world = createFakeWorld();
      world.onStep = (step) => {
        if (step !== 'snapshotting') return;
        const errors = Array.from(
          { length: 6 },
          () => new TransientError('Http503', 'reading snapshot: server error'),
        );
        world.compute.nextError('snapshots.get', ...errors);
      };
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        failureOf(status),
        // The donor was started once the snapshot was taken: the wait for Succeeded comes after it.
        /^awaiting-snapshot: reading snapshot: server error \(still failing after 6 attempts in 2m15s\)/,
      );
      assertDonorGivenBack(world);
      assert.deepEqual(world.compute.snapshotsLeft(), []);
    });

    void it('an error thrown by the host (not a failure value) is treated as transient', async () => {
      let thrown = 0;
      const world = createFakeWorld({
        wrapActivity: (name, activity) => (input) => {
          if (name === 'readSnapshot' && thrown === 0) {
            thrown += 1;
            return Promise.reject(new Error('activity timed out'));
          }
          return activity(input);
        },
      });
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal(thrown, 1);
    });

    void it('a pod no controller recreates blocks the drain; nothing is evicted', async () => {
      const world = createFakeWorld();
      const { controller: _controller, ...solo } = appPod('solo');
      world.kube.pods.add(DONOR, solo);
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(failureOf(status), /^draining: node pool1-vmss000000 cannot be drained: default\/solo/);
      assert.equal(world.kube.callsTo('pods.evict').length, 0);
      assertDonorGivenBack(world);
    });

    void it('a PodDisruptionBudget that never allows the eviction times the drain out, with advice', async () => {
      const world = createFakeWorld({ run: { drainTimeoutSeconds: 60 } });
      world.kube.pods.add(
        DONOR,
        appPod('db'),
        'Cannot evict pod as it would violate the pod disruption budget.',
      );
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        failureOf(status),
        /^draining: timed out after 60 s: 1 pods left: default\/db \(blocked: Cannot evict pod.*\) — the node was given back; relax the PodDisruptionBudget/,
      );
      assertDonorGivenBack(world);
    });

    void it('a prep pod that fails ends the wait at once with where to look', async () => {
      const world = createFakeWorld({ cluster: { prepPodOutcome: 'Failed' } });
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        failureOf(status),
        /^preparing-disk: prep pod vmss-prototype\/vmssp-prep-.* failed before powering the host off — see its logs/,
      );
      assertDonorGivenBack(world);
    });

    void it('a donor deleted during the capture fails with what to do; its node is given back', async () => {
      const world = createFakeWorld();
      world.onStep = (step) => {
        if (step === 'waiting-for-power-off') world.compute.deleteInstance(poolRef(POOL), '0');
      };
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        failureOf(status),
        /^waiting-for-power-off: instance 0 of scale set pool1 was deleted during the capture .* — run again, or name another node \(--node\)$/,
      );
      assertDonorGivenBack(world, false);
    });

    void it('the prep pod powers the host off through the API when its script ended but the guest stayed up', async () => {
      const world = createFakeWorld({ cluster: { prepPodRunMs: 20_000 } });
      world.onStep = (step) => {
        // The guest ignores the prep pod's poweroff: only the API call stops it.
        if (step === 'waiting-for-power-off')
          world.compute.schedulePowerOff(poolRef(POOL), '0', Number.POSITIVE_INFINITY);
      };
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal(world.compute.callsTo('instances.requestPowerOff').length, 1);
    });
  });

  void describe('cancel', () => {
    void it('an operator cancel during the drain stops the run and gives the node back', async () => {
      const world = createFakeWorld();
      world.kube.pods.add(
        DONOR,
        appPod('db'),
        'Cannot evict pod as it would violate the pod disruption budget.',
      );
      world.runnerOptions.timerHorizonMs = START + 60_000;
      const waiting = await world.refreshPool(POOL);
      assert.equal(waiting.runtimeStatus, 'Running');
      assert.equal((waiting.customStatus as { step: string }).step, 'draining');

      world.runnerOptions.timerHorizonMs = Number.POSITIVE_INFINITY;
      const status = await world.runner.raiseEvent(INSTANCE, EVENT.cancel, 'maintenance window over');

      assert.equal(status.runtimeStatus, 'Failed');
      assert.equal(
        failureOf(status),
        `draining: cancelled: maintenance window over; gave back node ${DONOR} (uncordoned, our annotations ` +
          "removed); the pool's lease was released",
      );
      assertDonorGivenBack(world);
      assert.equal(world.kube.callsTo('pods.createPrepPod').length, 0);
    });
  });

  void describe('giving the donor back', () => {
    void it('a donor that does not start again stays marked for the reaper; the run says how to start it', async () => {
      const world = createFakeWorld();
      world.compute.failStarts(poolRef(POOL), '0');
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        failureOf(status),
        /^restoring-node: starting-instance: timed out after 1200 s: instance 0 is stopped — start it by hand \(az vmss start -g rg-k8s-prod -n pool1 --instance-ids 0\)/,
      );
      assert.match(failureOf(status), new RegExp(`node ${DONOR} is kept cordoned and marked`));
      assertDonorKeptForReaper(world);
      assert.deepEqual(world.compute.snapshotsLeft(), [], 'the captured snapshot is deleted');
    });

    void it('restoring the node outlasts an API server outage longer than one step retries', async () => {
      const world = createFakeWorld();
      let restoreStartedAt = 0;
      world.onStep = (step) => {
        if (step !== 'restoring-node' || restoreStartedAt > 0) return;
        restoreStartedAt = world.clock.now();
        const outage = Array.from(
          { length: 10 },
          () =>
            new TransientError(
              'ClusterUnreachable',
              'reading node: cannot reach the API server (ECONNREFUSED)',
            ),
        );
        // The prep pod deletion and the start come first; the node's own restore reads it with nodes.get.
        world.kube.nextError('nodes.get', ...outage);
      };
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal(world.kube.pendingErrors('nodes.get'), 0);
      assertDonorGivenBack(world);
    });
  });

  void describe('image version', () => {
    void it('falls back to Standard_LRS where the region has no zone-redundant storage', async () => {
      const world = createFakeWorld({ compute: { regionsWithoutZrs: ['westeurope'] } });
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal((status.output as PoolRefreshResult).version?.storageAccountType, 'Standard_LRS');
      assert.equal(world.compute.callsTo('imageVersions.request').length, 2);
    });

    void it('a version that fails is deleted and built again as Standard_LRS', async () => {
      const world = createFakeWorld();
      world.compute.nextOutcome('imageVersion', 'Failed');
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
      assert.equal((status.output as PoolRefreshResult).version?.storageAccountType, 'Standard_LRS');
      assert.equal(world.compute.callsTo('imageVersions.requestDeletion').length, 1);
    });

    void it('a version that fails every time fails the run, nothing left behind', async () => {
      const world = createFakeWorld();
      world.compute.nextOutcome('imageVersion', 'Failed');
      world.compute.nextOutcome('imageVersion', 'Failed');
      const status = await world.refreshPool(POOL);
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(
        failureOf(status),
        /^building-image-version: image version .* failed \(Standard_LRS\); it was deleted, and so was the snapshot — see the gallery's activity log/,
      );
      assert.deepEqual(world.compute.snapshotsLeft(), []);
      assert.deepEqual(world.compute.imageVersionsNow(definitionRef(POOL)), []);
      assertDonorGivenBack(world);
    });
  });
});
