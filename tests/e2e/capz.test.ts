/**
 * CAPZ MachinePool pools end to end on the simulator: the sample cluster's second pool made a
 * kubeadm pool owned by a Cluster API MachinePool, its management cluster simulated with a CAPZ-like
 * reconciler (sim/README.md). Through the real orchestrator, activities, SDKs and client-node: the plan
 * refuses without the rollout opt-in and says what CAPZ will do; a refresh writes the version into the
 * AzureMachinePool template — never the scale set's model — and follows CAPZ's replacement of every
 * machine; a canary pool is created and deleted; a failed canary leaves the template untouched; a rollout
 * whose new machines cannot join puts the previous image back; a rollback goes through the template; and a
 * direct model write, the one path the product never takes, is reverted by the reconciler.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { bindActivities } from '../../shared/application/activities/catalogue.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { poolScope } from '../../shared/application/pool-holdings.js';
import { acquirePoolLease } from '../../shared/application/pool-lease.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { VERSION_VERDICT_TAG_KEYS } from '../../shared/domain/version-verdict.js';
import type { Harness } from './harness.js';
import { CAPZ_MANAGEMENT, nodeOf, POOL2, startHarness, withCapzPool } from './harness.js';

const KUBELET_CERT = '/var/lib/kubelet/pki/kubelet-client-current.pem';
const DONOR = nodeOf(POOL2, 1);
const MODEL_WRITE = 'Microsoft.Compute/virtualMachineScaleSets/write';

interface Options {
  readonly mode?: 'drain-and-stop' | 'live';
  readonly rollout?: 'allow' | 'refuse';
  readonly canary?: Record<string, unknown>;
}

function startCapz(options: Options = {}): Promise<Harness> {
  return startHarness({
    clock: 'manual',
    scenario: withCapzPool(POOL2),
    settings: (cluster) => {
      cluster.capture = { ...cluster.capture, mode: options.mode ?? 'drain-and-stop' };
      cluster['promotion'] = { canary: options.canary ?? { enabled: false } };
      const capz = cluster['capz'] as Record<string, unknown> | undefined;
      assert.ok(capz, 'the simulator gives a CAPZ cluster its capz settings');
      capz['rollout'] = options.rollout ?? 'allow';
    },
  });
}

type Json = Record<string, unknown>;

function management(harness: Harness) {
  return harness.sim.running.world.cluster(CAPZ_MANAGEMENT.cluster).world.store;
}

function templateImageOf(harness: Harness): unknown {
  const amp = management(harness).get('azuremachinepools', CAPZ_MANAGEMENT.namespace, POOL2) as
    { spec: { template: { image?: unknown } } } | undefined;
  assert.ok(amp, 'the AzureMachinePool exists');
  return amp.spec.template.image;
}

function canaryObjects(harness: Harness): string[] {
  const store = management(harness);
  return (['machinepools', 'azuremachinepools', 'kubeadmconfigs'] as const).flatMap((resource) =>
    store
      .list(resource)
      .filter((object) =>
        (object as Json & { metadata: { name: string } }).metadata.name.includes('-canary-'),
      )
      .map((object) => `${resource}/${(object as { metadata: { name: string } }).metadata.name}`),
  );
}

function scaleSetOf(harness: Harness) {
  const scaleSet = harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
  assert.ok(scaleSet);
  return scaleSet;
}

function modelImage(harness: Harness): unknown {
  const model = harness.sim.running.world.compute.getScaleSetModel(scaleSetOf(harness).id) as {
    virtualMachineProfile: { storageProfile: { imageReference: unknown } };
  };
  return model.virtualMachineProfile.storageProfile.imageReference;
}

/** Every image version in the simulated subscription's galleries. */
function allVersions(harness: Harness) {
  const world = harness.sim.running.world;
  const { subscriptionId, resourceGroup } = scaleSetOf(harness);
  return world.compute
    .listGalleries(subscriptionId, resourceGroup)
    .flatMap((gallery) => world.compute.listImageDefinitions(gallery.id))
    .flatMap((definition) => world.compute.listImageVersions(definition.id));
}

async function run(harness: Harness, id: string, input: Json = {}) {
  return harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool: POOL2, trigger: 'test', ...input },
    id,
  );
}

async function refresh(harness: Harness, id: string, input: Json = {}): Promise<PoolRefreshResult> {
  const status = await run(harness, id, input);
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as PoolRefreshResult;
}

/** The donor as the run must leave it: its identity files, schedulable, its VM running. */
function donorState(harness: Harness) {
  const world = harness.sim.running.world;
  const instance = world.compute
    .listInstances(scaleSetOf(harness).id)
    .find((candidate) => candidate.computerName.toLowerCase() === DONOR);
  const files = world.compute.getDiskContent(instance?.osDiskId ?? '')?.files ?? {};
  const node = world.cluster('prod').world.store.get('nodes', undefined, DONOR) as
    { spec?: { unschedulable?: boolean }; metadata: { annotations?: Record<string, string> } } | undefined;
  return {
    exists: instance !== undefined,
    powerState: instance?.powerState,
    kubeletCertificate: files[KUBELET_CERT],
    machineId: files['/etc/machine-id'],
    unschedulable: node?.spec?.unschedulable === true,
    ourAnnotations: Object.keys(node?.metadata.annotations ?? {}).filter((key) =>
      key.includes('vmss-prototype'),
    ),
  };
}

/** Records the donor's state the moment the run starts changing the template (before CAPZ replaces it). */
function donorWhenTemplateChanges(harness: Harness): { state?: ReturnType<typeof donorState> } {
  const seen: { state?: ReturnType<typeof donorState> } = {};
  const push = harness.statuses.push.bind(harness.statuses);
  harness.statuses.push = (...items) => {
    for (const item of items) {
      const step = (item.customStatus as { step?: string } | undefined)?.step;
      if (step === 'setting-capz-template' && seen.state === undefined) seen.state = donorState(harness);
    }
    return push(...items);
  };
  return seen;
}

/** The pool after CAPZ's rollout: every machine from the version, Ready, joined under its own name. */
function assertRolledOut(harness: Harness, versionId: string): void {
  const world = harness.sim.running.world;
  assert.deepEqual(
    modelImage(harness),
    { id: versionId },
    "CAPZ wrote the template's version into the model",
  );
  const instances = world.compute.listInstances(scaleSetOf(harness).id);
  assert.equal(instances.length, 3, 'the pool keeps its size');
  const machines = management(harness)
    .list('azuremachinepoolmachines')
    .filter((object) => (object as { metadata: { name: string } }).metadata.name.startsWith(`${POOL2}-`)) as {
    status?: { ready?: boolean; latestModelApplied?: boolean };
  }[];
  assert.equal(machines.length, 3);
  assert.ok(
    machines.every((machine) => machine.status?.ready === true && machine.status.latestModelApplied === true),
  );
  const store = world.cluster('prod').world.store;
  for (const instance of instances) {
    const name = instance.computerName.toLowerCase();
    assert.ok(store.get('nodes', undefined, name), `node ${name} registered under its own name`);
    const disk = world.compute.getDiskContent(instance.osDiskId ?? '');
    assert.equal(disk?.files[KUBELET_CERT], `system:node:${name}`, 'its own kubelet certificate');
  }
  const joins = world.joinRecords().filter((record) => instances.some((vm) => vm.id === record.instanceId));
  assert.ok(
    joins.every((join) => join.bootstrap === 'image-kubeadm-join'),
    JSON.stringify(joins),
  );
  const identity = world.identity();
  assert.deepEqual(identity.violations, [], 'no duplicate machine-id, hostname or SSH host key');
  assert.deepEqual(identity.findings, [], 'no refused registration, nothing inherited');
}

void describe('CAPZ MachinePool pools on the simulator', { concurrency: false }, () => {
  void it('plan: refused without the rollout opt-in, with what CAPZ will do; planned with it', async () => {
    const refused = await startCapz({ rollout: 'refuse' });
    try {
      const result = await refresh(refused, 'capz-plan-refused', { dryRun: true });
      assert.equal(result.outcome, 'refused');
      assert.equal(
        result.reason,
        `scale set ${POOL2} belongs to CAPZ MachinePool default/${POOL2}: a new ` +
          'image goes into its AzureMachinePool template, and CAPZ rolls a template change out to every machine ' +
          'of the pool (new nodes only is not possible): CAPZ will replace 3 machines of MachinePool ' +
          `default/${POOL2}, none unavailable (a new machine is Ready before an old one goes), surge 1 ` +
          'machine, oldest first; to accept that, set capz.rollout to "allow" (docs/capz.md)',
      );
    } finally {
      await refused.stop();
    }
    const allowed = await startCapz();
    try {
      const result = await refresh(allowed, 'capz-plan-allowed', { dryRun: true, node: DONOR });
      assert.equal(result.outcome, 'planned', result.reason);
      assert.equal(result.plan?.capz?.machinePool, POOL2);
      assert.equal(result.plan?.capture?.scrubbed, 'copy', 'a kubeadm donor: only a copy is scrubbed');
      assert.match(result.plan?.capz?.description ?? '', /^CAPZ will replace 3 machines/);
    } finally {
      await allowed.stop();
    }
  });

  void it('drain-and-stop: the template names the version, CAPZ replaces every machine, no model write', async () => {
    const harness = await startCapz();
    const donor = donorWhenTemplateChanges(harness);
    try {
      const before = donorState(harness);
      const result = await refresh(harness, 'capz-drain', { node: DONOR });
      assert.equal(result.outcome, 'refreshed', result.reason);
      assert.ok(result.version);
      assert.deepEqual(templateImageOf(harness), {
        computeGallery: {
          gallery: result.version.galleryName,
          name: result.version.imageName,
          version: result.version.versionName,
          subscriptionID: result.version.subscriptionId,
          resourceGroup: result.version.resourceGroup,
        },
      });
      assert.equal(result.capzRollout?.replaced, 3);
      assertRolledOut(harness, result.version.id);
      // The donor was back, exactly as it was, before the template changed (CAPZ replaced it after).
      assert.deepEqual(donor.state, before);
      // No path of the product wrote the model: CAPZ did, so it had nothing to revert.
      const world = harness.sim.running.world;
      assert.equal(world.log.count({ api: 'arm', operation: MODEL_WRITE }), 0);
      assert.ok(!world.capzEvents().some((event) => event.kind === 'revert'));
    } finally {
      await harness.stop();
    }
  });

  void it('live with a canary: the canary pool passes and goes, then the template changes', async () => {
    const harness = await startCapz({ mode: 'live', canary: { soak: '2m', deadline: '20m' } });
    try {
      const result = await refresh(harness, 'capz-live-canary', { node: DONOR });
      assert.equal(result.outcome, 'refreshed', result.reason);
      assert.equal(result.canary?.verdict, 'passed', result.canary?.reason);
      assert.equal(result.donorOutOfServiceSeconds, 0);
      assert.ok(result.version);
      const events = harness.sim.running.world.capzEvents().map((event) => `${event.kind} ${event.pool}`);
      assert.ok(
        events.some((event) => /^scale-set-create .*-canary-/.test(event)),
        events.join('\n'),
      );
      assert.ok(
        events.some((event) => /^scale-set-delete .*-canary-/.test(event)),
        events.join('\n'),
      );
      assert.deepEqual(canaryObjects(harness), [], 'the canary pool is gone');
      assertRolledOut(harness, result.version.id);
    } finally {
      await harness.stop();
    }
  });

  void it('a canary that fails: the template is untouched, the canary pool gone, the version rejected', async () => {
    const harness = await startCapz({ canary: { soak: '1m', deadline: '15m' } });
    try {
      const world = harness.sim.running.world;
      world.applyFault({ preset: 'scrub-leaves', path: '/etc/kubernetes/kubelet.conf', at: '0s' });
      const template = templateImageOf(harness);
      const model = modelImage(harness);
      const result = await refresh(harness, 'capz-canary-fail', { node: DONOR });
      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      assert.deepEqual(templateImageOf(harness), template, 'the template as before');
      assert.deepEqual(modelImage(harness), model, 'the model as before');
      assert.deepEqual(canaryObjects(harness), [], 'the canary pool is gone');
      assert.ok(result.version);
      const version = world.compute.getImageVersion(result.version.id);
      assert.equal(version?.excludeFromLatest, true);
      assert.match(version.tags[VERSION_VERDICT_TAG_KEYS.rejected] ?? '', /canary/);
    } finally {
      await harness.stop();
    }
  });

  void it("a canary template naming a missing gallery image: CAPZ's PUT fails, nothing rolled", async () => {
    const harness = await startCapz({ canary: { soak: '1m', deadline: '15m' } });
    try {
      const world = harness.sim.running.world;
      // The version goes away as the canary pool is created (deleted by someone else, or never replicated
      // to the region): CAPZ's scale set PUT then names a gallery image that is not there.
      const unsubscribe = harness.sim.running.log.subscribe((request) => {
        if (request.api !== 'kube' || request.operation !== 'azuremachinepools:create') return;
        for (const amp of management(harness).list('azuremachinepools') as Json[]) {
          const gallery = ((amp['spec'] as Json)['template'] as Json)['image'] as Json | undefined;
          const fields = gallery?.['computeGallery'] as Record<string, string> | undefined;
          if (fields === undefined || !String((amp['metadata'] as Json)['name']).includes('-canary-'))
            continue;
          world.compute.deleteImageVersion(
            `/subscriptions/${fields['subscriptionID']}/resourceGroups/${fields['resourceGroup']}/providers/Microsoft.Compute/galleries/${fields['gallery']}/images/${fields['name']}/versions/${fields['version']}`,
          );
        }
      });
      const template = templateImageOf(harness);
      const model = modelImage(harness);
      const instancesBefore = world.compute.listInstances(scaleSetOf(harness).id).map((i) => i.vmId);
      const status = await run(harness, 'capz-canary-missing-image', { node: DONOR });
      unsubscribe();

      assert.equal(status.runtimeStatus, 'Failed', JSON.stringify(status.output));
      assert.match(status.failure?.ErrorMessage ?? '', /canary/i);
      assert.deepEqual(templateImageOf(harness), template, 'the template as before');
      assert.deepEqual(modelImage(harness), model, 'the model as before');
      assert.deepEqual(
        world.compute.listInstances(scaleSetOf(harness).id).map((i) => i.vmId),
        instancesBefore,
        'no machine of the pool was replaced',
      );
      assert.deepEqual(canaryObjects(harness), [], 'the canary pool is gone');
      const events = world.capzEvents();
      assert.ok(
        events.some(
          (event) => event.kind === 'model-write-failed' && /GalleryImageNotFound/.test(event.detail),
        ),
        events.map((event) => `${event.kind} ${event.pool} ${event.detail}`).join('\n'),
      );
      assert.ok(!events.some((event) => event.kind === 'scale-set-create'), 'no canary scale set was made');
    } finally {
      await harness.stop();
    }
  });

  void it('a rollout whose new machines cannot join: the previous image goes back into the template', async () => {
    const harness = await startCapz();
    try {
      const world = harness.sim.running.world;
      world.applyFault({ preset: 'scrub-leaves', path: '/etc/kubernetes/kubelet.conf', at: '0s' });
      const template = templateImageOf(harness);
      const status = await run(harness, 'capz-rollout-fail', { node: DONOR });
      assert.equal(status.runtimeStatus, 'Failed');
      const failure = JSON.stringify(status.failure);
      assert.match(failure, /CapzRolloutFailed|CAPZ's rollout of version/, failure);
      assert.match(failure, /template is back on its previous image/, failure);
      assert.deepEqual(templateImageOf(harness), template, 'the previous image is back');
      const rejected = allVersions(harness).filter(
        (version) => (version.tags[VERSION_VERDICT_TAG_KEYS.rejected] ?? '') !== '',
      );
      assert.equal(rejected.length, 1, 'the version is marked rejected');
      // CAPZ then replaces the machines that could not join with ones from the previous image.
      harness.sim.running.world.clock.advanceBy(30 * 60);
      assert.deepEqual(
        modelImage(harness),
        (template as { marketplace?: unknown }).marketplace ?? modelImage(harness),
      );
    } finally {
      await harness.stop();
    }
  });

  void it('a direct write of the model, the path the product never takes, is reverted by CAPZ', async () => {
    const harness = await startCapz();
    try {
      const before = modelImage(harness);
      const activities = bindActivities(harness.composition.dependencies);
      const { subscriptionId, resourceGroup, name } = scaleSetOf(harness);
      // The write is fenced by the pool lease: held here as a run holds it.
      const deps = harness.composition.dependencies;
      const handle = await deps.cluster('prod');
      const { lease } = await poolScope(handle, POOL2);
      const runId = 'direct-write';
      await acquirePoolLease(
        handle.kube,
        lease,
        {
          runId,
          runner: { kind: 'cli', host: 'capz-test' },
          purpose: { cluster: 'prod', pool: POOL2, instanceId: 'direct-write', purpose: 'refresh' },
        },
        deps.now(),
      );
      const written = await activities.requestScaleSetImageUpdate({
        cluster: 'prod',
        fence: { ...lease, runId },
        scaleSet: { subscriptionId, resourceGroup, name },
        imageId: `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/images/elsewhere`,
        expectedImages: [before as Record<string, string>],
        keepCustomData: true,
      });
      assert.equal(written.ok, true, JSON.stringify(written));
      harness.sim.running.world.clock.advanceBy(60);
      assert.notDeepEqual(modelImage(harness), before, 'the write landed');
      harness.sim.running.world.clock.advanceBy(11 * 60);
      assert.deepEqual(modelImage(harness), before, 'CAPZ put the template back at its resync');
      assert.ok(harness.sim.running.world.capzEvents().some((event) => event.kind === 'revert'));
    } finally {
      await harness.stop();
    }
  });
});

void describe('CAPZ MachinePool rollback on the simulator', { concurrency: false }, () => {
  void it('rollback writes the earlier version into the template; CAPZ rolls the pool back', async () => {
    const harness = await startCapz();
    try {
      const first = await refresh(harness, 'capz-v1', { node: DONOR });
      assert.equal(first.outcome, 'refreshed', first.reason);
      const world = harness.sim.running.world;
      // Every machine was replaced: the second refresh is from one of the new nodes, named.
      const [replacement] = world.compute.listInstances(scaleSetOf(harness).id);
      assert.ok(replacement);
      world.clock.advanceBy(2 * 3600);
      const second = await refresh(harness, 'capz-v2', { node: replacement.computerName.toLowerCase() });
      assert.equal(second.outcome, 'refreshed', second.reason);
      assert.ok(first.version && second.version);
      assert.notEqual(second.version.versionName, first.version.versionName);

      const status = await harness.run(
        ORCHESTRATION.rollbackPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test' },
        'capz-rollback',
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const rolledBack = status.output as { outcome: string; to?: string; reason: string };
      assert.equal(rolledBack.outcome, 'rolled-back', rolledBack.reason);
      assert.equal(rolledBack.to, first.version.versionName);
      assert.deepEqual(templateImageOf(harness), {
        computeGallery: {
          gallery: first.version.galleryName,
          name: first.version.imageName,
          version: first.version.versionName,
          subscriptionID: first.version.subscriptionId,
          resourceGroup: first.version.resourceGroup,
        },
      });
      assert.equal(world.log.count({ api: 'arm', operation: MODEL_WRITE }), 0, 'never the model');
      // CAPZ writes the model from the template and replaces the machines again.
      world.clock.advanceBy(60 * 60);
      assertRolledOut(harness, first.version.id);
    } finally {
      await harness.stop();
    }
  });
});

void describe('a dead run’s CAPZ canary pool', { concurrency: false }, () => {
  void it('release --dry-run shows it, and release deletes it, even when nothing else is left', async () => {
    const harness = await startCapz();
    try {
      const handle = await harness.composition.dependencies.cluster('prod');
      const pools = handle.clusterApi?.machinePools;
      assert.ok(pools);
      const name = `${POOL2}-canary-deadbeef`;
      await pools.createCanaryPool({
        namespace: CAPZ_MANAGEMENT.namespace,
        source: { machinePool: POOL2, azureMachinePool: POOL2 },
        name,
        replicas: 1,
        image: templateImageOf(harness) as Record<string, unknown>,
        labels: { 'vmss-prototype.io/run-id': 'a-dead-run' },
      });
      assert.equal(canaryObjects(harness).length, 3);
      const release = (id: string, dryRun: boolean) =>
        harness.run(ORCHESTRATION.releasePool, { cluster: 'prod', pool: POOL2, trigger: 'test', dryRun }, id);
      const preview = await release('capz-release-preview', true);
      assert.equal(preview.runtimeStatus, 'Completed', JSON.stringify(preview.failure));
      const actions = (preview.output as { actions: string[] }).actions;
      assert.deepEqual(actions, [
        `the canary pool ${name} of a dead run, in the management cluster: deleted`,
      ]);
      const released = await release('capz-release', false);
      assert.equal(released.runtimeStatus, 'Completed', JSON.stringify(released.failure));
      assert.deepEqual(canaryObjects(harness), [], 'the canary pool is gone');
    } finally {
      await harness.stop();
    }
  });
});
