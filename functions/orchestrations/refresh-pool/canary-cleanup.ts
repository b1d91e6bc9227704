/**
 * The two ways a canary ends (canary.phase.ts). Passed: the check pods go, and the canaries stay as
 * normal nodes or are cordoned, drained and deleted (settings). Not passed: the model goes back to exactly
 * what it was, the canaries are deleted (or kept cordoned and labelled when rejected and settings say so),
 * the version is marked rejected (or abandoned when the canary ended without a verdict), and the canary
 * record leaves the scale set's tags last, so that until then a run that died can be given back from Azure.
 * No cancel interrupts giving a canary back.
 */
import type { Task } from 'durable-functions';

import type { OtherFromVersion } from '../../../shared/application/canary-others.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { POLL, RESTORE_RETRY } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { CanaryProgress } from './canary-state.js';
import { scaleSetRefOf, waitForModelImage } from './canary-state.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { isoNow, setStatus } from './run.js';

/** What giving a canary back left: the canaries' fate, and the nodes an outside scale-out built from it. */
export interface GivenBackCanary {
  readonly instancesNow: 'deleted' | 'kept-cordoned';
  /** Found once the model was back (canary-others.ts): not ours, named, not deleted here. */
  readonly others: readonly OtherFromVersion[];
}

/** Gives everything back after a canary that did not pass; returns what became of the canaries. */
export function giveBackCanary(
  run: RefreshRun,
  version: BuiltVersion,
  progress: CanaryProgress,
  verdict: { readonly rejected: string } | { readonly abandoned: string },
): Generator<Task, GivenBackCanary, unknown> {
  return shielded(run.context, giveBack(run, version, progress, verdict));
}

function* giveBack(
  run: RefreshRun,
  version: BuiltVersion,
  progress: CanaryProgress,
  verdict: { readonly rejected: string } | { readonly abandoned: string },
): Generator<Task, GivenBackCanary, unknown> {
  const { context, cluster, plan } = run;
  const scaleSet = scaleSetRefOf(run);
  const record = progress.record;
  const rejected = 'rejected' in verdict;
  const reason = rejected ? verdict.rejected : verdict.abandoned;

  if (record !== undefined) {
    const step = 'restoring-model';
    setStatus(run, step, reason);
    const restore = yield* call(
      context,
      activities.restoreCanaryModel,
      { cluster, scaleSet, versionId: version.id, prior: { ...record.priorImage } },
      { step, retry: RESTORE_RETRY },
    );
    // Another tool moved the image since the canary pinned it: its change stays.
    if (restore.kind === 'restored') {
      yield* waitForModelImage(run, record.priorImage['id'], step);
      noteGivenBack(context, "the scale set's model (back on its prior image)");
    }
  }

  const step = 'removing-canaries';
  setStatus(run, step);
  let instances = progress.instances;
  if (progress.scaleOutRequested && record !== undefined && instances.length < record.count) {
    // The scale-out was asked for but not all of it was seen: find what it made before deleting.
    const found = yield* call(
      context,
      activities.recordCanaryInstances,
      {
        cluster,
        scaleSet,
        baseline: [...(run.canaryBaseline ?? [])],
        versionId: version.id,
        count: record.count,
        record: {
          ...record,
          priorImage: { ...record.priorImage },
          instances: record.instances === undefined ? undefined : [...record.instances],
        },
      },
      { step, retry: RESTORE_RETRY },
    );
    instances = [...found.instances];
  }
  // The model is back: no instance made from now on boots the version. Those an outside scale-out (the
  // cluster-autoscaler, an admin) made while it was pinned are found from ARM and named from here on.
  const others =
    record === undefined
      ? []
      : yield* call(
          context,
          activities.findOthersFromVersion,
          {
            cluster,
            scaleSet,
            versionId: version.id,
            canaries: [...instances],
            baseline: [...(run.canaryBaseline ?? [])],
          },
          { step, retry: RESTORE_RETRY },
        );
  yield* deleteCheckPods(run, progress);
  let instancesNow: 'deleted' | 'kept-cordoned' = 'deleted';
  if (rejected && plan.settings.canary.afterFail === 'keep-cordoned') {
    instancesNow = 'kept-cordoned';
    for (const observation of progress.observations) {
      const node = observation.node?.name;
      if (node === undefined || !instances.includes(observation.instanceId)) continue;
      yield* call(
        context,
        activities.keepCanaryCordoned,
        { cluster, node, version: version.versionName, reason },
        { step, retry: RESTORE_RETRY },
      );
    }
  } else {
    yield* deleteInstances(run, instances, step);
    if (instances.length > 0) noteGivenBack(context, `canary instance(s) ${instances.join(', ')} (deleted)`);
  }

  const markStep = 'rejecting-version';
  setStatus(run, markStep);
  yield* call(
    context,
    activities.markImageVersion,
    {
      cluster,
      ref: version,
      kind: rejected ? 'rejected' : 'abandoned',
      // The version's tag names them too: the status page's and `status`'s history show it once they are gone.
      reason: withOthers(rejected ? `canary: ${reason}` : reason, others),
      at: isoNow(run),
    },
    { step: markStep, retry: RESTORE_RETRY },
  );
  noteGivenBack(
    context,
    `version ${version.versionName} (hidden from \`latest\`, marked ${rejected ? 'rejected' : 'abandoned'})`,
  );
  if (record !== undefined) {
    yield* call(
      context,
      activities.clearCanaryRecord,
      { cluster, scaleSet, run: run.runId },
      {
        step: markStep,
        retry: RESTORE_RETRY,
      },
    );
  }
  return { instancesNow, others };
}

/** `; built from it by an outside scale-out: a, b` (nothing when there are none). */
export function othersClause(others: readonly OtherFromVersion[]): string {
  return others.length === 0
    ? ''
    : `; built from it by an outside scale-out while pinned: ${others.map((other) => other.node).join(', ')}`;
}

/** The verdict's reason with the others named; a long reason is cut so that the names fit a tag's 256. */
function withOthers(reason: string, others: readonly OtherFromVersion[]): string {
  const clause = othersClause(others);
  if (reason.length + clause.length <= 256) return `${reason}${clause}`;
  return `${reason.slice(0, Math.max(64, 255 - clause.length))}…${clause}`;
}

/** After a passed canary: the check pods go; the canaries stay, or are cordoned, drained and deleted. */
export function* removePassedCanaries(
  run: RefreshRun,
  progress: CanaryProgress,
): Generator<Task, 'kept' | 'removed', unknown> {
  const { plan } = run;
  yield* deleteCheckPods(run, progress);
  if (plan.settings.canary.afterPass !== 'remove') return 'kept';
  const step = 'removing-canaries';
  setStatus(run, step, progress.instances.join(', '));
  yield* drainCanaryNodes(run, progress, step);
  yield* deleteInstances(run, progress.instances, step);
  return 'removed';
}

export function* deleteCheckPods(run: RefreshRun, progress: CanaryProgress): Generator<Task, void, unknown> {
  const { context, cluster, plan } = run;
  for (const name of Object.values(progress.checkPods)) {
    yield* call(
      context,
      activities.deletePrepPod,
      { cluster, namespace: plan.settings.prepNamespace, name },
      { step: 'removing-canaries', retry: RESTORE_RETRY },
    );
  }
}

function* deleteInstances(
  run: RefreshRun,
  instances: readonly string[],
  step: 'removing-canaries',
): Generator<Task, void, unknown> {
  const { context, cluster } = run;
  const scaleSet = scaleSetRefOf(run);
  if (instances.length === 0) return;
  for (const instanceId of instances) {
    yield* call(
      context,
      activities.requestInstanceDeletion,
      { cluster, scaleSet, instanceId, fence: run.fence },
      {
        step,
        retry: RESTORE_RETRY,
      },
    );
  }
  yield* pollUntil(context, {
    step,
    intervalSeconds: POLL.instanceDeletion.interval,
    timeoutSeconds: POLL.instanceDeletion.timeout,
    read: () =>
      call(
        context,
        activities.listRemainingInstances,
        { cluster, scaleSet, instanceIds: [...instances] },
        { step },
      ),
    done: (left) => left.length === 0,
    describe: (left) => `canary instance(s) still present: ${left.join(', ')}`,
  });
}

/**
 * Cordons and drains the canaries' nodes, held like a donor (our annotations, fenced by the pool lease): a
 * run that dies here leaves nodes the reaper gives back, never one cordoned for good.
 */
export function* drainCanaryNodes(
  run: RefreshRun,
  progress: CanaryProgress,
  step: 'removing-canaries' | 'removing-capz-canary' | 'removing-canary-scale-set',
): Generator<Task, void, unknown> {
  const { context, cluster, plan } = run;
  for (const observation of progress.observations) {
    const node = observation.node?.name;
    if (node === undefined) continue;
    const prior = yield* call(context, activities.readNodeState, { cluster, node }, { step });
    yield* call(context, activities.protectNode, { cluster, node, prior, fence: run.fence }, { step });
    yield* pollUntil(context, {
      step,
      intervalSeconds: POLL.canaryDrain.interval,
      timeoutSeconds: POLL.canaryDrain.timeout,
      read: () =>
        call(
          context,
          activities.drainNodeStep,
          {
            cluster,
            node,
            gracePeriodSeconds: plan.settings.drainGracePeriodSeconds,
            deleteEmptyDirData: plan.settings.deleteEmptyDirData,
            // The node is going away: pods nothing would bring back go with it.
            force: true,
            fence: run.fence,
          },
          { step },
        ),
      done: (result) => result.done,
      describe: (result) => `${result.pending.length} pods left on canary node ${node}`,
    });
  }
}
