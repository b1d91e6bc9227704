/**
 * Refreshes one node pool (DESIGN.md §2): plan, capture the donor's OS disk, build a gallery image
 * version, point the scale set at it, clean up. A deterministic generator: every effect is an
 * activity, every wait a durable timer, every decision a pure domain function.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type {
  DrainStepResult,
  ImageVersionRequestResult,
  ImageVersionView,
  InstanceView,
  NodePriorState,
  PoolPlan,
  PoolRefreshResult,
  RefreshPoolInput,
  RefreshStatus,
  RemovableExtension,
  ScaleSetImageView,
  SnapshotView,
} from '../../shared/application/refresh-contracts.js';
import { ACTIVITY, outcomeOfPlan } from '../../shared/application/refresh-contracts.js';
import type { ImageVersionRef, StorageAccountType } from '../../shared/domain/compute.js';
import { buildImageVersionTags, nextImageVersionName } from '../../shared/domain/image-version.js';
import { buildPrepScript } from '../../shared/domain/prep-script.js';
import type { CancelWatch } from './orchestration-steps.js';
import {
  callStep,
  pollUntil,
  retryOptions,
  StepFailure,
  stepFailureMessage,
  watchCancel,
} from './orchestration-steps.js';

/** How often each wait polls, and how long it may take before the run fails (seconds). */
export const POLL = {
  drain: { interval: 5, timeout: 0 /* from settings */ },
  powerOff: { interval: 15, timeout: 20 * 60 },
  snapshot: { interval: 15, timeout: 60 * 60 },
  start: { interval: 15, timeout: 20 * 60 },
  imageVersion: { interval: 60, timeout: 8 * 60 * 60 },
  imageVersionDeletion: { interval: 30, timeout: 60 * 60 },
  scaleSetUpdate: { interval: 10, timeout: 30 * 60 },
  extensionDeletion: { interval: 15, timeout: 60 * 60 },
  // Giving the donor back outlasts an API server outage: the activity retries alone span ~35 s.
  restore: { interval: 60, timeout: 30 * 60 },
} as const;

function isoAt(context: OrchestrationContext): string {
  return context.df.currentUtcDateTime.toISOString();
}

function setStatus(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  step: string,
  extra?: Partial<RefreshStatus>,
): void {
  const status: RefreshStatus = {
    cluster: input.cluster,
    pool: input.pool,
    step,
    since: isoAt(context),
    ...extra,
  };
  context.df.setCustomStatus(status);
}

/** Snapshot names allow 80 characters of `[A-Za-z0-9_.-]`. */
function snapshotNameFor(plan: PoolPlan, versionName: string): string {
  const base = `vmssp-${plan.scaleSet.name}-${versionName.replaceAll('.', '-')}`;
  return base.replaceAll(/[^A-Za-z0-9_.-]/g, '-').slice(0, 80);
}

/**
 * Pod names are DNS labels (63 characters, lowercase alphanumerics and `-`). Version names are only
 * unique per pool (to the second), and pools of a cluster share the prep namespace: the scale set's
 * hash keeps two pools captured in the same second from colliding.
 */
function prepPodNameFor(plan: PoolPlan, versionName: string): string {
  let hash = 0x811c9dc5;
  for (const char of plan.scaleSet.id.toLowerCase()) {
    hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  }
  return `vmssp-prep-${versionName.replaceAll('.', '-')}-${hash.toString(16).padStart(8, '0')}`
    .toLowerCase()
    .slice(0, 63);
}

export function* refreshPoolOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolRefreshResult, unknown> {
  const input = context.df.getInput<RefreshPoolInput>();
  const { cluster, pool } = input;

  setStatus(context, input, 'planning');
  const plan = yield* callStep<PoolPlan>(context, 'planning', ACTIVITY.planPool, {
    cluster,
    pool,
    node: input.node,
  });
  if (plan.decision.kind !== 'refresh' || input.dryRun === true || plan.image === undefined) {
    const outcome = outcomeOfPlan(plan.decision);
    const reason = plan.decision.reason;
    setStatus(context, input, 'done', { detail: `${outcome}: ${reason}` });
    return { cluster, pool, outcome, reason, plan };
  }
  const decision = plan.decision;
  const donor = decision.node;
  const image = plan.image;
  const settings = plan.settings;

  setStatus(context, input, 'ensuring-image-definition', { node: donor });
  const existingVersions = yield* callStep<string[]>(
    context,
    'ensuring-image-definition',
    ACTIVITY.ensureImageDefinition,
    {
      cluster,
      definition: image.definition,
      location: plan.scaleSet.location,
      spec: image.definitionSpec,
      galleryTags: image.galleryTags,
    },
  );
  const versionName = nextImageVersionName(context.df.currentUtcDateTime, existingVersions);
  const versionRef: ImageVersionRef = { ...image.definition, versionName };
  const snapshotName = snapshotNameFor(plan, versionName);
  const prepPodName = prepPodNameFor(plan, versionName);
  const runTag = context.df.instanceId;

  // The node's state before we touch it, recorded in history: a replay or a resumed run restores
  // exactly this, never "uncordoned" for a node an administrator had cordoned.
  const prior = yield* callStep<NodePriorState>(context, 'recording-node-state', ACTIVITY.readNodeState, {
    cluster,
    node: donor,
  });

  const cancel = watchCancel(context);
  let snapshotRequested = false;
  let cordonedAt: Date | undefined;
  let capturedSnapshotId: { snapshotId: string; vmId?: string } | undefined;
  let captureError: unknown;
  try {
    setStatus(context, input, 'cordoning', { node: donor, version: versionName });
    yield* callStep(context, 'cordoning', ACTIVITY.protectNode, { cluster, node: donor, runTag });
    cordonedAt = context.df.currentUtcDateTime;
    capturedSnapshotId = yield* captureDisk(context, input, plan, {
      cancel,
      donor,
      instanceId: decision.instanceId,
      versionName,
      snapshotName,
      prepPodName,
      runTag,
      onSnapshotRequested: () => {
        snapshotRequested = true;
      },
    });
  } catch (error) {
    captureError = error;
  }
  // From here on the run gives the node back and finishes what it started: cancelling stops nothing.
  cancel.active = false;

  // Whatever happened above (success, failure, timeout), give the donor back: start it, wait for it to
  // be Ready, then restore exactly its prior state. Restore failures are reported with the cause.
  const restore = yield* restoreDonor(context, input, plan, {
    donor,
    instanceId: decision.instanceId,
    prior,
    runTag,
    prepPodName,
  });
  if (captureError !== undefined || restore.failures.length > 0) {
    if (snapshotRequested) {
      yield* deleteSnapshot(context, input, plan, snapshotName);
    }
    throw combineFailures(captureError, restore.failures);
  }
  const restoredAt = restore.restoredAt;

  const outOfService =
    cordonedAt === undefined ? undefined : Math.round((restoredAt.getTime() - cordonedAt.getTime()) / 1000);

  let version: ImageVersionRef & { id: string; storageAccountType: StorageAccountType };
  try {
    if (capturedSnapshotId === undefined) {
      throw new StepFailure('snapshotting', `snapshot ${snapshotName} has no id`);
    }
    version = yield* buildImageVersion(
      context,
      input,
      plan,
      versionRef,
      capturedSnapshotId.snapshotId,
      donor,
      capturedSnapshotId.vmId,
      runTag,
    );
  } finally {
    yield* deleteSnapshot(context, input, plan, snapshotName);
  }

  // Point new instances at the image. Only after the model verifiably points at it are the bootstrap
  // extensions removed: a model without them but with the old image would build broken nodes.
  const targetImageId = settings.pinVersion ? version.id : idOfDefinition(version.id);
  setStatus(context, input, 'updating-scale-set-model', { node: donor, version: versionName });
  yield* callStep(context, 'updating-scale-set-model', ACTIVITY.requestScaleSetImageUpdate, {
    cluster,
    scaleSet: plan.scaleSet,
    imageId: targetImageId,
  });
  yield* pollUntil<ScaleSetImageView>(context, {
    step: 'updating-scale-set-model',
    intervalSeconds: POLL.scaleSetUpdate.interval,
    timeoutSeconds: POLL.scaleSetUpdate.timeout,
    read: () =>
      context.df.callActivityWithRetry(ACTIVITY.readScaleSetImage, retryOptions(), {
        cluster,
        scaleSet: plan.scaleSet,
      }),
    done: (view) => {
      if (view.provisioningState === 'Failed') {
        throw new StepFailure('updating-scale-set-model', `scale set ${plan.scaleSet.name} update failed`);
      }
      return view.provisioningState === 'Succeeded' && sameId(view.imageId, targetImageId);
    },
    describe: (view) => `model image ${view.imageId ?? 'none'} (${view.provisioningState})`,
  });

  setStatus(context, input, 'removing-bootstrap-extensions', { node: donor, version: versionName });
  const extensions = yield* callStep<RemovableExtension[]>(
    context,
    'removing-bootstrap-extensions',
    ACTIVITY.listRemovableExtensions,
    { cluster, scaleSet: plan.scaleSet, keepExtensionTypes: settings.keepExtensionTypes },
  );
  const removable = extensions.map((extension) => extension.name);
  for (const extension of extensions) {
    if (extension.deleting) continue;
    yield* callStep(context, 'removing-bootstrap-extensions', ACTIVITY.requestExtensionDeletion, {
      cluster,
      scaleSet: plan.scaleSet,
      extensionName: extension.name,
    });
  }
  if (removable.length > 0) {
    yield* pollUntil<RemovableExtension[]>(context, {
      step: 'removing-bootstrap-extensions',
      intervalSeconds: POLL.extensionDeletion.interval,
      timeoutSeconds: POLL.extensionDeletion.timeout,
      read: () =>
        context.df.callActivityWithRetry(ACTIVITY.listRemovableExtensions, retryOptions(), {
          cluster,
          scaleSet: plan.scaleSet,
          keepExtensionTypes: settings.keepExtensionTypes,
        }),
      done: (left) => left.length === 0,
      describe: (left) => `extensions still present: ${left.map((extension) => extension.name).join(', ')}`,
    });
  }

  setStatus(context, input, 'pruning-versions', { node: donor, version: versionName });
  const pruned = yield* callStep<string[]>(context, 'pruning-versions', ACTIVITY.pruneImageVersions, {
    cluster,
    definition: image.definition,
    history: settings.history,
    keep: [versionName],
    modelImageId: targetImageId,
  });

  setStatus(context, input, 'done', { node: donor, version: versionName, detail: 'refreshed' });
  return {
    cluster,
    pool,
    outcome: 'refreshed',
    reason: decision.reason,
    plan,
    version,
    donor,
    donorOutOfServiceSeconds: outOfService,
    removedExtensions: removable,
    prunedVersions: pruned,
  };
}

/**
 * Deletes the prep pod, starts the donor if needed and waits until it runs, then restores the node's prior
 * state (uncordoned only if we cordoned it; our annotations removed). Failures are returned, not thrown.
 */
function* restoreDonor(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  plan: PoolPlan,
  donor: {
    donor: string;
    instanceId: string;
    prior: NodePriorState;
    runTag: string;
    prepPodName: string;
  },
): Generator<Task, { restoredAt: Date; failures: string[] }, unknown> {
  const { cluster } = input;
  const failures: string[] = [];
  setStatus(context, input, 'restoring-node', { node: donor.donor });
  const prepPod = { cluster, namespace: plan.settings.prepNamespace, name: donor.prepPodName };
  // A prep pod we cannot delete yet (API server down) must not keep the VM from starting again:
  // its deletion is retried after the node is restored.
  let prepPodDeleted = true;
  try {
    yield* callStep(context, 'restoring-node', ACTIVITY.deletePrepPod, prepPod);
  } catch {
    prepPodDeleted = false;
  }
  try {
    const view = yield* callStep<InstanceView>(context, 'restoring-node', ACTIVITY.readInstance, {
      cluster,
      scaleSet: plan.scaleSet,
      instanceId: donor.instanceId,
    });
    // Scaled in while we held it: there is no VM to start, and its node goes with it.
    if (view.exists) {
      if (view.powerState !== 'running' && view.powerState !== 'starting') {
        yield* callStep(context, 'restoring-node', ACTIVITY.requestInstanceStart, {
          cluster,
          scaleSet: plan.scaleSet,
          instanceId: donor.instanceId,
        });
      }
      yield* pollUntil<InstanceView>(context, {
        step: 'starting-instance',
        intervalSeconds: POLL.start.interval,
        timeoutSeconds: POLL.start.timeout,
        read: () =>
          context.df.callActivityWithRetry(ACTIVITY.readInstance, retryOptions(), {
            cluster,
            scaleSet: plan.scaleSet,
            instanceId: donor.instanceId,
          }),
        done: (v) => v.powerState === 'running',
        describe: (v) => `instance ${donor.instanceId} is ${v.powerState}`,
        advice:
          `start it by hand (az vmss start -g ${plan.scaleSet.resourceGroup} -n ${plan.scaleSet.name} ` +
          `--instance-ids ${donor.instanceId}) and check its activity log for the cause (e.g. AllocationFailed)`,
      });
    }
  } catch (error) {
    failures.push(stepFailureMessage(error));
  }
  try {
    // Restoring annotations and schedulability is what matters most: it runs even if the start failed.
    yield* callStepPersistently(context, 'restoring-node', ACTIVITY.restoreNode, {
      cluster,
      node: donor.donor,
      prior: donor.prior,
      runTag: donor.runTag,
    });
  } catch (error) {
    failures.push(stepFailureMessage(error));
  }
  const restoredAt = context.df.currentUtcDateTime;
  if (!prepPodDeleted) {
    try {
      yield* callStepPersistently(context, 'restoring-node', ACTIVITY.deletePrepPod, prepPod);
    } catch (error) {
      failures.push(stepFailureMessage(error));
    }
  }
  return { restoredAt, failures };
}

/** Calls a restore step until it succeeds, retrying on durable timers for up to `POLL.restore.timeout`. */
function* callStepPersistently(
  context: OrchestrationContext,
  step: string,
  activity: string,
  input: unknown,
): Generator<Task, void, unknown> {
  const deadline = context.df.currentUtcDateTime.getTime() + POLL.restore.timeout * 1000;
  for (;;) {
    try {
      yield* callStep(context, step, activity, input);
      return;
    } catch (error) {
      const now = context.df.currentUtcDateTime.getTime();
      if (now >= deadline) throw error;
      yield context.df.createTimer(new Date(Math.min(deadline, now + POLL.restore.interval * 1000)));
    }
  }
}

/** Creates the version (ZRS, falling back to LRS), waits for it, then makes it visible to `latest`. */
function* buildImageVersion(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  plan: PoolPlan,
  ref: ImageVersionRef,
  snapshotId: string,
  donor: string,
  sourceVmId: string | undefined,
  runTag: string,
): Generator<Task, ImageVersionRef & { id: string; storageAccountType: StorageAccountType }, unknown> {
  const { cluster } = input;
  const preferences: StorageAccountType[] =
    plan.settings.storageAccountType === 'Standard_ZRS'
      ? ['Standard_ZRS', 'Standard_LRS']
      : [plan.settings.storageAccountType];
  const decision = plan.decision;
  const tags = buildImageVersionTags({
    sourceNode: donor,
    sourceVmId: sourceVmId ?? 'unknown',
    cluster,
    pool: input.pool,
    // A donor without a usable last-patch time (fallback or operator-named) holds every patch applied
    // up to its capture: the capture time is then the honest lower bound for the next run's patch rule.
    patchedAt: (decision.kind === 'refresh' ? decision.patchedAt : undefined) ?? isoAt(context),
    runId: runTag,
  });
  for (const [index, storageAccountType] of preferences.entries()) {
    const last = index === preferences.length - 1;
    setStatus(context, input, 'building-image-version', {
      node: donor,
      version: ref.versionName,
      detail: storageAccountType,
    });
    const request = yield* callStep<ImageVersionRequestResult>(
      context,
      'building-image-version',
      ACTIVITY.requestImageVersion,
      {
        cluster,
        ref,
        location: plan.scaleSet.location,
        snapshotId,
        storageAccountType,
        extraRegions: plan.settings.extraRegions,
        tags,
      },
    );
    if (request.kind === 'zrs-unsupported') {
      if (last) throw new StepFailure('building-image-version', request.message);
      continue;
    }
    const built = yield* pollUntil<ImageVersionView>(context, {
      step: 'building-image-version',
      intervalSeconds: POLL.imageVersion.interval,
      timeoutSeconds: POLL.imageVersion.timeout,
      read: () =>
        context.df.callActivityWithRetry(ACTIVITY.readImageVersion, retryOptions(), { cluster, ref }),
      done: (view) =>
        view.provisioningState === 'Failed' ||
        (view.provisioningState === 'Succeeded' && view.replicationState !== 'Replicating'),
      describe: (view) =>
        `version ${ref.versionName} ${view.provisioningState ?? 'absent'}, replication ${view.replicationState ?? 'unknown'}`,
    });
    if (built.provisioningState === 'Failed' || built.replicationState === 'Failed') {
      // A failed version still exists and blocks a retry under the same name: delete it first.
      yield* deleteImageVersion(context, input, ref);
      if (last) {
        throw new StepFailure(
          'building-image-version',
          `image version ${ref.versionName} failed (${storageAccountType}); it was deleted, and so was the ` +
            `snapshot — see the gallery's activity log for ARM's reason, then run again`,
        );
      }
      continue;
    }
    setStatus(context, input, 'publishing-image-version', { node: donor, version: ref.versionName });
    yield* callStep(context, 'publishing-image-version', ACTIVITY.requestImageVersionExclusion, {
      cluster,
      ref,
      excludeFromLatest: false,
    });
    const published = yield* pollUntil<ImageVersionView>(context, {
      step: 'publishing-image-version',
      intervalSeconds: POLL.scaleSetUpdate.interval,
      timeoutSeconds: POLL.scaleSetUpdate.timeout,
      read: () =>
        context.df.callActivityWithRetry(ACTIVITY.readImageVersion, retryOptions(), { cluster, ref }),
      done: (view) => view.provisioningState === 'Succeeded' && view.excludeFromLatest === false,
      describe: (view) => `version ${ref.versionName} ${view.provisioningState ?? 'absent'}`,
    });
    if (published.id === undefined) {
      throw new StepFailure('publishing-image-version', `image version ${ref.versionName} has no id`);
    }
    return { ...ref, id: published.id, storageAccountType };
  }
  throw new StepFailure('building-image-version', 'no storage account type left to try');
}

function* deleteImageVersion(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  ref: ImageVersionRef,
): Generator<Task, void, unknown> {
  const { cluster } = input;
  setStatus(context, input, 'deleting-failed-image-version', { version: ref.versionName });
  yield* callStep(context, 'deleting-failed-image-version', ACTIVITY.requestImageVersionDeletion, {
    cluster,
    ref,
  });
  yield* pollUntil<ImageVersionView>(context, {
    step: 'deleting-failed-image-version',
    intervalSeconds: POLL.imageVersionDeletion.interval,
    timeoutSeconds: POLL.imageVersionDeletion.timeout,
    read: () => context.df.callActivityWithRetry(ACTIVITY.readImageVersion, retryOptions(), { cluster, ref }),
    done: (view) => !view.exists,
    describe: (view) => `version ${ref.versionName} ${view.provisioningState ?? 'deleting'}`,
  });
}

function idOfDefinition(versionId: string): string {
  const marker = '/versions/';
  const at = versionId.toLowerCase().lastIndexOf(marker);
  return at < 0 ? versionId : versionId.slice(0, at);
}

function sameId(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** Drains the donor, prepares and powers off its disk, and snapshots it. Returns the snapshot id. */
function* captureDisk(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  plan: PoolPlan,
  run: {
    cancel: CancelWatch;
    donor: string;
    instanceId: string;
    versionName: string;
    snapshotName: string;
    prepPodName: string;
    runTag: string;
    onSnapshotRequested: () => void;
  },
): Generator<Task, { snapshotId: string; vmId?: string }, unknown> {
  const { cluster } = input;
  const { donor, versionName, snapshotName } = run;
  const settings = plan.settings;

  setStatus(context, input, 'draining', { node: donor, version: versionName });
  yield* pollUntil<DrainStepResult>(context, {
    step: 'draining',
    intervalSeconds: POLL.drain.interval,
    timeoutSeconds: settings.drainTimeoutSeconds,
    cancel: run.cancel,
    advice:
      'the node was given back; relax the PodDisruptionBudget or wait until it allows a disruption, raise ' +
      'capture.drainTimeout, or refresh from another node (--node)',
    read: () =>
      context.df.callActivityWithRetry(ACTIVITY.drainNodeStep, retryOptions(), {
        cluster,
        node: donor,
        gracePeriodSeconds: settings.drainGracePeriodSeconds,
        deleteEmptyDirData: settings.deleteEmptyDirData,
        force: settings.forceUnreplicated,
      }),
    done: (result) => {
      if (result.blockers.length > 0) {
        throw new StepFailure(
          'draining',
          `node ${donor} cannot be drained: ` + result.blockers.map((b) => `${b.pod} ${b.reason}`).join('; '),
        );
      }
      return result.done;
    },
    describe: (result) =>
      result.pending.length === 0
        ? 'no pods left'
        : `${result.pending.length} pods left: ` +
          result.pending
            .slice(0, 5)
            .map((p) => `${p.pod} (${p.state}${p.message === undefined ? '' : `: ${p.message}`})`)
            .join(', '),
  });

  setStatus(context, input, 'preparing-disk', { node: donor, version: versionName });
  const ancestry = `${isoAt(context)} built image ${versionName} of ${cluster}/${input.pool} from node ${donor} (run ${run.runTag})`;
  yield* callStep(context, 'preparing-disk', ACTIVITY.startDiskPrep, {
    cluster,
    node: donor,
    namespace: settings.prepNamespace,
    podName: run.prepPodName,
    image: settings.prepImage,
    script: buildPrepScript({ ancestry }),
  });

  setStatus(context, input, 'waiting-for-power-off', { node: donor, version: versionName });
  // Watch the prep pod too: a script that fails (image pull, missing nsenter…) never powers the host
  // off, and waiting the full power-off timeout for it would keep the donor out of service for nothing.
  // A script that ran to its end (disk prepared and synced) while the guest is still up gets the power
  // off through the API instead.
  let poweredOffThroughApi = false;
  const [stopped] = yield* pollUntil<[InstanceView, string]>(context, {
    step: 'waiting-for-power-off',
    intervalSeconds: POLL.powerOff.interval,
    timeoutSeconds: POLL.powerOff.timeout,
    cancel: run.cancel,
    read: () =>
      context.df.Task.all([
        context.df.callActivityWithRetry(ACTIVITY.readInstance, retryOptions(), {
          cluster,
          scaleSet: plan.scaleSet,
          instanceId: run.instanceId,
        }),
        context.df.callActivityWithRetry(ACTIVITY.readPrepPod, retryOptions(), {
          cluster,
          namespace: settings.prepNamespace,
          name: run.prepPodName,
        }),
      ]),
    done: ([view, prepPhase]) => {
      if (!view.exists) {
        throw new StepFailure(
          'waiting-for-power-off',
          `instance ${run.instanceId} of scale set ${plan.scaleSet.name} was deleted during the capture ` +
            `(scaled in by cluster-autoscaler or an operator?); nothing was captured — run again, or name ` +
            `another node (--node)`,
        );
      }
      if (view.powerState === 'stopped' || view.powerState === 'deallocated') return true;
      if (prepPhase === 'Failed') {
        throw new StepFailure(
          'preparing-disk',
          `prep pod ${settings.prepNamespace}/${run.prepPodName} on node ${donor} failed before powering the ` +
            `host off; see its logs (kubectl -n ${settings.prepNamespace} logs ${run.prepPodName}) and check ` +
            `capture.prepImage (it needs nsenter and must be pullable on the node)`,
        );
      }
      return false;
    },
    between: function* ([view, prepPhase]) {
      if (prepPhase === 'Succeeded' && view.powerState === 'running' && !poweredOffThroughApi) {
        yield* callStep(context, 'waiting-for-power-off', ACTIVITY.requestInstancePowerOff, {
          cluster,
          scaleSet: plan.scaleSet,
          instanceId: run.instanceId,
        });
        poweredOffThroughApi = true;
      }
    },
    describe: ([view, prepPhase]) =>
      `instance ${run.instanceId} is ${view.powerState}, prep pod ${prepPhase}`,
  });
  if (stopped.osDiskId === undefined) {
    throw new StepFailure('snapshotting', `instance ${run.instanceId} has no managed OS disk to snapshot`);
  }

  setStatus(context, input, 'snapshotting', { node: donor, version: versionName });
  run.onSnapshotRequested();
  yield* callStep(
    context,
    'snapshotting',
    ACTIVITY.requestSnapshot,
    {
      cluster,
      subscriptionId: plan.scaleSet.subscriptionId,
      resourceGroup: plan.scaleSet.resourceGroup,
      name: snapshotName,
      location: stopped.location,
      sourceDiskId: stopped.osDiskId,
      tags: { 'vmss-prototype.io/source-node': donor, 'vmss-prototype.io/run': run.runTag },
    },
    `the node was started and given back; check the snapshot quota and permissions in resource group ` +
      `${plan.scaleSet.resourceGroup} (az snapshot list -g ${plan.scaleSet.resourceGroup}), then run again`,
  );
  const snapshot = yield* pollUntil<SnapshotView>(context, {
    step: 'snapshotting',
    intervalSeconds: POLL.snapshot.interval,
    timeoutSeconds: POLL.snapshot.timeout,
    cancel: run.cancel,
    read: () =>
      context.df.callActivityWithRetry(ACTIVITY.readSnapshot, retryOptions(), {
        cluster,
        subscriptionId: plan.scaleSet.subscriptionId,
        resourceGroup: plan.scaleSet.resourceGroup,
        name: snapshotName,
      }),
    done: (view) => {
      if (view.provisioningState === 'Failed') {
        throw new StepFailure('snapshotting', `snapshot ${snapshotName} failed`);
      }
      return view.exists && view.provisioningState === 'Succeeded';
    },
    describe: (view) =>
      `snapshot ${snapshotName} ${view.exists ? (view.provisioningState ?? 'unknown') : 'not yet visible'}`,
  });
  if (snapshot.id === undefined) {
    throw new StepFailure('snapshotting', `snapshot ${snapshotName} has no id`);
  }
  return { snapshotId: snapshot.id, vmId: stopped.vmId };
}

/** Deletes the run's snapshot and waits until it is gone; a no-op when it never existed. */
function* deleteSnapshot(
  context: OrchestrationContext,
  input: RefreshPoolInput,
  plan: PoolPlan,
  snapshotName: string,
): Generator<Task, void, unknown> {
  const { cluster } = input;
  const where = {
    cluster,
    subscriptionId: plan.scaleSet.subscriptionId,
    resourceGroup: plan.scaleSet.resourceGroup,
    name: snapshotName,
  };
  setStatus(context, input, 'deleting-snapshot');
  yield* callStep(context, 'deleting-snapshot', ACTIVITY.requestSnapshotDeletion, where);
  yield* pollUntil<SnapshotView>(context, {
    step: 'deleting-snapshot',
    intervalSeconds: POLL.snapshot.interval,
    timeoutSeconds: POLL.snapshot.timeout,
    read: () => context.df.callActivityWithRetry(ACTIVITY.readSnapshot, retryOptions(), where),
    done: (view) => !view.exists,
    describe: (view) => `snapshot ${snapshotName} ${view.provisioningState ?? 'deleting'}`,
  });
}

/** One error for the run: the capture failure first (it is the cause), then anything restore could not do. */
function combineFailures(captureError: unknown, restoreFailures: readonly string[]): StepFailure {
  const restore =
    restoreFailures.length === 0 ? '' : `; restoring the node also failed: ${restoreFailures.join('; ')}`;
  if (captureError instanceof StepFailure) {
    return new StepFailure(
      captureError.step,
      captureError.message.slice(captureError.step.length + 2) + restore,
    );
  }
  if (captureError !== undefined) {
    return new StepFailure('capturing', stepFailureMessage(captureError) + restore);
  }
  return new StepFailure('restoring-node', restoreFailures.join('; '));
}
