/**
 * Rolls a pool back to a retained earlier version (issue 13): plan (the domain's planRollback: the
 * previous usable version, or the operator's `to`, refused when it is not Succeeded, was rejected or is
 * gone, or a canary is running), then — unless it is a dry run — put the target back in `latest` if an
 * earlier rollback hid it, point a pinned model at it (If-Match on the planned read), hide the newer
 * versions from `latest` and mark them rejected (so neither `latest` nor auto mode brings them back), and
 * verify by reading everything back. No capture: seconds of ARM time. Every step is idempotent: a crash
 * resumes to the same end state.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { PoolRollbackResult, RollbackPoolInput } from '../../shared/application/refresh-contracts.js';
import { sameResourceId } from '../../shared/domain/resource-id.js';
import { activities } from '../activities.js';
import { call } from './call.js';
import { generationsPhase } from './refresh-pool/generations.phase.js';
import { isoNow, setStatus } from './refresh-pool/run.js';
import { StepFailure } from './step-failure.js';
import { POLL } from './timing.js';
import { pollUntil } from './waits.js';

export function* rollbackPoolOrchestration(
  context: OrchestrationContext,
): Generator<Task, PoolRollbackResult, unknown> {
  const input = context.df.getInput<RollbackPoolInput>();
  const { cluster, pool } = input;
  const run = { context, input };

  setStatus(run, 'planning-rollback', input.to === undefined ? 'to the previous version' : `to ${input.to}`);
  const planned = yield* call(
    context,
    activities.planRollback,
    { cluster, pool, ...(input.to === undefined ? {} : { to: input.to }) },
    { step: 'planning-rollback' },
  );
  const plan = planned.plan;
  if (plan.kind === 'refused') {
    setStatus(run, 'done', `refused: ${plan.reason}`);
    return {
      cluster,
      pool,
      outcome: 'refused',
      reason: plan.reason,
      ...(planned.modelImageId === undefined ? {} : { modelImageId: planned.modelImageId }),
      hidden: [],
      rejected: [],
    };
  }
  const planView = {
    from: plan.from,
    to: plan.to,
    modelImageId: plan.modelImageId,
    hidden: plan.hide,
    rejected: plan.reject,
  };
  if (input.dryRun === true) {
    setStatus(run, 'done', `planned: ${plan.from} → ${plan.to}`);
    return {
      cluster,
      pool,
      outcome: 'planned',
      reason: `would roll back from ${plan.from} to ${plan.to}${describeChanges(plan.hide, plan.reject)}`,
      ...planView,
    };
  }

  const step = 'rolling-back';
  setStatus(run, step, `${plan.from} → ${plan.to}`);
  const versionRef = (versionName: string) => ({ ...planned.definition, versionName });
  // The target first: a model on the definition must never find `latest` empty.
  if (plan.unhideTarget) {
    yield* call(
      context,
      activities.requestImageVersionExclusion,
      { cluster, ref: versionRef(plan.to), excludeFromLatest: false },
      { step },
    );
  }
  if (!sameResourceId(planned.modelImageId, plan.modelImageId)) {
    const pointed = yield* call(
      context,
      activities.pointModelAt,
      {
        cluster,
        scaleSet: planned.scaleSet,
        imageId: plan.modelImageId,
        ...(planned.etag === undefined ? {} : { etag: planned.etag }),
      },
      { step },
    );
    if (pointed === 'changed-elsewhere') {
      throw StepFailure.terminal(
        step,
        'ScaleSetChangedElsewhere',
        `scale set ${planned.scaleSet.name} was changed by another tool after the rollback was planned; nothing was overwritten`,
        'check the scale set, then run the rollback again',
      );
    }
  }
  // Hidden before marked: new instances stop getting the newer versions first.
  for (const name of plan.hide) {
    yield* call(
      context,
      activities.requestImageVersionExclusion,
      { cluster, ref: versionRef(name), excludeFromLatest: true },
      { step },
    );
  }
  for (const name of plan.reject) {
    yield* call(
      context,
      activities.markImageVersion,
      {
        cluster,
        ref: versionRef(name),
        kind: 'rejected',
        reason: `rolled back to ${plan.to} (${input.trigger})`,
        at: isoNow(run),
      },
      { step },
    );
  }

  setStatus(run, 'verifying-rollback');
  yield* pollUntil(context, {
    step: 'verifying-rollback',
    intervalSeconds: POLL.publication.interval,
    timeoutSeconds: POLL.publication.timeout,
    read: () =>
      call(
        context,
        activities.verifyRollback,
        {
          cluster,
          scaleSet: planned.scaleSet,
          definition: planned.definition,
          modelImageId: plan.modelImageId,
          to: plan.to,
          hide: [...plan.hide],
        },
        { step: 'verifying-rollback' },
      ),
    done: (check) => check.done,
    describe: (check) => check.detail,
  });

  const after = yield* generationsPhase(run);
  setStatus(run, 'done', `rolled back: ${plan.from} → ${plan.to}`);
  return {
    cluster,
    pool,
    outcome: 'rolled-back',
    reason: `rolled back from ${plan.from} to ${plan.to}${describeChanges(plan.hide, plan.reject)}`,
    ...planView,
    ...after,
  };
}

function describeChanges(hide: readonly string[], reject: readonly string[]): string {
  const parts = [
    ...(hide.length === 0 ? [] : [`hidden from latest: ${hide.join(', ')}`]),
    ...(reject.length === 0 ? [] : [`marked rejected: ${reject.join(', ')}`]),
  ];
  return parts.length === 0 ? '' : `; ${parts.join('; ')}`;
}
