/**
 * The end of a canary that ran apart from the pool, in a CAPZ canary pool (capz-canary.phase.ts) or a
 * canary scale set (canary-scale-set.phase.ts), once its instances are gone: a pass publishes; a
 * rejection marks the version rejected and hides it; a canary that ended without a verdict (a failure, a
 * cancel before the publication) marks it abandoned and fails the run, saying what was left untouched.
 */
import type { Task } from 'durable-functions';

import type { CanaryVerdict } from '../../../shared/domain/canary.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { isCancel, pastReturn, shielded } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import { RESTORE_RETRY } from '../timing.js';
import type { CanaryPhaseOutput } from './canary.phase.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { isoNow } from './run.js';

export interface SeparateCanaryEnd {
  readonly verdict: CanaryVerdict | undefined;
  readonly failure: StepFailure | undefined;
  readonly instances: readonly string[];
  readonly seconds: number;
  /** What the run did not touch, for the failure's follow-up (the template or model, the canary gone). */
  readonly untouched: string;
}

export function* concludeSeparateCanary<Published>(
  run: RefreshRun,
  version: BuiltVersion,
  publish: () => Generator<Task, Published, unknown>,
  end: SeparateCanaryEnd,
): Generator<Task, CanaryPhaseOutput<Published>, unknown> {
  const { context, cluster } = run;
  const base = { instances: end.instances, seconds: end.seconds, othersFromVersion: [] };
  let failure = end.failure;
  if (end.failure === undefined && end.verdict?.kind === 'passed') {
    try {
      const published = yield* publish();
      return { verdict: 'passed', ...base, instancesNow: 'removed', published };
    } catch (error) {
      if (!isCancel(error) || pastReturn(context)) throw error;
      failure = error;
    }
  }
  const rejection = failure === undefined && end.verdict?.kind === 'failed' ? end.verdict.reason : undefined;
  const reason =
    rejection ?? failure?.message ?? `the canary of version ${version.versionName} ended without a verdict`;
  yield* shielded(
    context,
    call(
      context,
      activities.markImageVersion,
      {
        cluster,
        ref: version,
        kind: rejection === undefined ? 'abandoned' : 'rejected',
        reason: rejection === undefined ? reason : `canary: ${reason}`,
        at: isoNow(run),
      },
      { step: 'rejecting-version', retry: RESTORE_RETRY },
    ),
  );
  if (rejection !== undefined)
    return { verdict: 'rejected', reason: rejection, ...base, instancesNow: 'deleted' };
  const ended =
    failure ??
    StepFailure.terminal('testing-canaries', 'CanaryUndecided', 'the canary ended without a verdict');
  if (isCancel(ended)) throw ended;
  throw ended.withFollowUp(`${end.untouched}, version ${version.versionName} is hidden and marked abandoned`);
}
