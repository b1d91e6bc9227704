/**
 * Canary phase of a pool refresh, between building the version (hidden from `latest`) and
 * publishing it: read the model, pin it to the version and add the canary instances in one write with
 * If-Match (recording in the scale set's tags what it was), and watch them until every one passed (joined
 * under its own name, Ready, Ready for the soak, its DaemonSet pods running, the check pod succeeded) or
 * one failed or the deadline passed. Passed: the canaries stay or are removed, and the version is
 * published (`publish`, the caller's: model.phase.ts). Rejected: the model goes back to exactly what it
 * was, the canaries are deleted (or kept cordoned), the version is tagged rejected and stays hidden. Any
 * other failure (a scale-out that never happens, Azure down for long), and a cancel at any boundary until
 * the publication is asked for, gives everything back the same way, marks the version abandoned, and fails
 * the run.
 * Every wait is a pollUntil (durable timers), every step an idempotent activity: a crash anywhere resumes
 * to one of the two end states.
 */
import type { Task } from 'durable-functions';

import type { CanaryVerdict } from '../../../shared/domain/canary.js';
import type { CanaryRecord } from '../../../shared/domain/canary-record.js';
import { CONCURRENT_CHANGE } from '../../../shared/domain/errors.js';
import { definedOnly } from '../../../shared/domain/optional.js';
import { activities, type ActivityOutput } from '../../activities.js';
import { call } from '../call.js';
import { isCancel, pastReturn } from '../cancel.js';
import { asStepFailure, StepFailure } from '../step-failure.js';
import { EXPECTED, POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import { giveBackCanary, removePassedCanaries } from './canary-cleanup.js';
import { keepPoolSize } from './canary-keep-size.js';
import type { OthersOutcome } from './canary-others.js';
import { dealWithOthers } from './canary-others.js';
import type { CanaryProgress } from './canary-state.js';
import { newCanaryProgress, scaleSetRefOf } from './canary-state.js';
import { watchCanaries } from './canary-watch.js';
import type { BuiltVersion } from './image.phase.js';
import type { PointedModel } from './model.phase.js';
import type { RefreshRun } from './run.js';
import { isoNow, setStatus } from './run.js';

export interface CanaryPhaseOutput<Published = unknown> {
  readonly verdict: 'passed' | 'rejected';
  /** What `publish` returned (passed only). */
  readonly published?: Published;
  readonly reason?: string;
  readonly instances: readonly string[];
  readonly instancesNow: 'kept' | 'removed' | 'deleted' | 'kept-cordoned';
  readonly seconds: number;
  readonly othersFromVersion: readonly string[];
  /** Not passed: the nodes an outside scale-out built from the version, by name (canary-others.ts). */
  readonly othersFromVersionNodes?: readonly string[];
  /** What became of them (`canary.othersAfterFail`). */
  readonly othersAfterFail?: OthersOutcome;
  readonly keptSize?: { readonly retired: readonly string[]; readonly detail: string };
}

export function* canaryPhase<Published extends PointedModel>(
  run: RefreshRun,
  version: BuiltVersion,
  publish: () => Generator<Task, Published, unknown>,
): Generator<Task, CanaryPhaseOutput<Published>, unknown> {
  const { context, cluster, plan } = run;
  const policy = plan.settings.canary;
  const scaleSet = scaleSetRefOf(run);
  const startedAtMs = context.df.currentUtcDateTime.getTime();
  const progress: CanaryProgress = newCanaryProgress();
  let verdict: CanaryVerdict | undefined;
  let failure: StepFailure | undefined;
  try {
    setStatus(run, 'pinning-canary-version', `${policy.instances} canary instance(s)`);
    // The pin and the scale-out are one write (pinCanaryVersion): from here on, canaries may exist. No
    // separate wait for the model: the canaries are only counted once built from the version, which
    // proves the pin took.
    progress.scaleOutRequested = true;
    yield* pinVersion(run, version, progress);

    setStatus(run, 'adding-canaries');
    const scaleOutInput = { cluster, scaleSet, versionId: version.id, count: policy.instances };
    const record = progress.record;
    if (record === undefined)
      throw StepFailure.terminal('adding-canaries', 'CanaryNotPinned', 'the canary was not recorded');
    const recorded = yield* pollUntil(context, {
      step: 'adding-canaries',
      // New instances are listed once the model change is done (seconds), then every interval.
      expectedSeconds: EXPECTED.scaleSetUpdate.expectedSeconds,
      intervalSeconds: POLL.canaryScaleOut.interval,
      timeoutSeconds: POLL.canaryScaleOut.timeout,
      advice: 'the scale set did not add the canary instances: check its quota and activity log',
      read: () =>
        call(
          context,
          activities.recordCanaryInstances,
          {
            ...scaleOutInput,
            baseline: baselineIdsOf(run),
            record,
            ...(progress.pinned === undefined ? {} : { pinned: { ...progress.pinned } }),
          },
          { step: 'adding-canaries' },
        ),
      done: (result) => result.instances.length >= policy.instances,
      describe: (result) => `${result.instances.length} of ${policy.instances} canary instance(s) created`,
    });
    progress.instances = [...recorded.instances];
    progress.others = [...recorded.others];
    // A history recorded before the record returned what it wrote has none.
    const written: Partial<NonNullable<typeof recorded.written>> | undefined = recorded.written;
    if (written?.etag !== undefined && written.tags !== undefined) {
      progress.recorded = { tags: { ...written.tags }, etag: written.etag };
    }
    // The deadline counts from the moment the canaries exist: a scale-out ARM was slow to accept (a
    // throttled write) is not held against the image.
    const addedAtMs = context.df.currentUtcDateTime.getTime();

    verdict = yield* watchCanaries(run, version, scaleSet, progress, addedAtMs);
  } catch (error) {
    failure = asStepFailure('testing-canaries', error);
  }
  const seconds = Math.round((context.df.currentUtcDateTime.getTime() - startedAtMs) / 1000);
  const base = { instances: progress.instances, seconds, othersFromVersion: progress.others };

  if (failure === undefined && verdict?.kind === 'passed') {
    try {
      let instancesNow: CanaryPhaseOutput['instancesNow'] = yield* removePassedCanaries(run, progress);
      // The canaries kept, the pool's model is as the record left it: its update is written from that
      // (If-Match; a model written since is read again), with the version the canary pinned as its image.
      if (instancesNow === 'kept' && progress.recorded !== undefined) {
        run.modelSeen = { ...progress.recorded, image: { id: version.id } };
      }
      const published = yield* publish();
      if (policy.afterPass !== 'keep-size') return { verdict: 'passed', ...base, instancesNow, published };
      // Published first: the canaries are then the newest generation, and the oldest go in their place.
      const keptSize = yield* keepPoolSize(run, progress, published);
      if (keptSize.removedCanaries) instancesNow = 'removed';
      return {
        verdict: 'passed',
        ...base,
        instancesNow,
        published,
        keptSize: { retired: keptSize.retired, detail: keptSize.detail },
      };
    } catch (error) {
      // Until the publication is asked for, a cancel gives the canary back like any other end.
      if (!isCancel(error) || pastReturn(context)) throw error;
      failure = error;
    }
  }
  const rejection = failure === undefined && verdict?.kind === 'failed' ? verdict.reason : undefined;
  const { instancesNow, others } = yield* giveBackCanary(run, version, progress, {
    ...(rejection === undefined
      ? {
          abandoned:
            failure?.message ?? `the canary of version ${version.versionName} ended without a verdict`,
        }
      : { rejected: rejection }),
  });
  const named = {
    othersFromVersion: [...new Set([...progress.others, ...others.map((other) => other.instanceId)])],
    ...(others.length === 0 ? {} : { othersFromVersionNodes: others.map((other) => other.node) }),
  };
  if (rejection !== undefined) {
    const outcome = yield* dealWithOthers(run, version, progress, others, 'rejected');
    return {
      verdict: 'rejected',
      reason: rejection,
      ...base,
      ...named,
      instancesNow,
      ...(outcome === undefined ? {} : { othersAfterFail: outcome }),
    };
  }
  // A canary that ended without a verdict names them too (its version is abandoned: they are due for
  // every retirement), but replaces nothing: the run is failing.
  const outcome = isCancel(failure)
    ? undefined
    : yield* dealWithOthers(run, version, progress, others, 'abandoned');
  const ended =
    failure ??
    StepFailure.terminal('testing-canaries', 'CanaryUndecided', 'the canary ended without a verdict');
  // A cancelled run lists what it gave back itself (cancel.ts cancelReport).
  if (isCancel(ended)) throw ended;
  throw ended.withFollowUp(
    `the model is back on its prior image, the canaries are gone, version ${version.versionName} is hidden and marked abandoned` +
      (others.length === 0
        ? ''
        : `; an outside scale-out built ${others.map((other) => other.node).join(', ')} from it while pinned: ${outcome?.detail ?? 'they stay'}`),
  );
}

/**
 * Reads the model and pins it to the version with If-Match on that read. Another tool's write in between
 * makes ARM refuse (412): the model is read again and, while its image is still what it was, pinned again
 * (at most three times); an image moved by someone else stops the run, nothing overwritten.
 */
function* pinVersion(
  run: RefreshRun,
  version: BuiltVersion,
  progress: CanaryProgress,
): Generator<Task, void, unknown> {
  const { context, cluster, plan } = run;
  const scaleSet = scaleSetRefOf(run);
  const step = 'pinning-canary-version';
  // The pin writes the model: what an earlier write left is stale from here (the record's is kept below).
  run.modelSeen = undefined;
  let firstImage: Readonly<Record<string, string>> | undefined;
  for (let attempt = 1; ; attempt++) {
    const baseline = yield* call(
      context,
      activities.readCanaryBaseline,
      { cluster, scaleSet, run: run.runId, version: version.versionName },
      { step },
    );
    run.canaryBaseline ??= baseline.instanceIds;
    firstImage ??= baseline.record?.priorImage ?? baseline.image;
    const image = baseline.record?.priorImage ?? baseline.image;
    if (JSON.stringify(image) !== JSON.stringify(firstImage)) {
      throw StepFailure.terminal(
        step,
        'ScaleSetChangedElsewhere',
        `scale set ${plan.scaleSet.name}'s image was changed by another tool while the canary started ` +
          `(now ${JSON.stringify(image)}); nothing was overwritten`,
        'run again once the other change is done',
      );
    }
    const record: CanaryRecord = {
      run: run.runId,
      version: version.versionName,
      startedAt: baseline.record?.startedAt ?? isoNow(run),
      priorImage: image,
      priorCapacity: baseline.record?.priorCapacity ?? baseline.capacity,
      count: plan.settings.canary.instances,
    };
    progress.record = record;
    try {
      // A history recorded before the pin returned what it wrote has no output here.
      const pinned: Partial<ActivityOutput<'pinCanaryVersion'>> | undefined = yield* call(
        context,
        activities.pinCanaryVersion,
        {
          cluster,
          scaleSet,
          versionId: version.id,
          record: { ...record, priorImage: { ...record.priorImage } },
          fence: run.fence,
          baseline: {
            ...definedOnly({ etag: baseline.etag }),
            tags: { ...baseline.tags },
          },
        },
        { step },
      );
      if (pinned?.etag !== undefined && pinned.tags !== undefined) {
        progress.pinned = { tags: { ...pinned.tags }, etag: pinned.etag };
      }
      return;
    } catch (error) {
      if (!(error instanceof StepFailure) || error.code !== CONCURRENT_CHANGE || attempt >= 3) throw error;
    }
  }
}

function baselineIdsOf(run: RefreshRun): string[] {
  return [...(run.canaryBaseline ?? [])];
}
