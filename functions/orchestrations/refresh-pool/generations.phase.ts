/**
 * Last phase of every pool refresh (and rollback): label every node of the pool with the image version
 * it was built from, taint older generations when the pool's policy says so, and read how fresh the
 * pool is. A failure here does not undo a refresh that already happened: it is reported as a warning and
 * the next run (or timer tick) labels again. A cancel stops the run before it.
 */
import type { Task } from 'durable-functions';

import type { GenerationsReport } from '../../../shared/application/refresh-contracts.js';
import type { ImageVersion } from '../../../shared/domain/compute.js';
import type { Freshness } from '../../../shared/domain/freshness.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { isCancel } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

export interface GenerationsPhaseOutput {
  readonly generations?: GenerationsReport;
  readonly freshness?: Freshness;
  readonly warnings?: readonly string[];
}

/**
 * `known`: the image the run just saw the model on and the versions it just listed (neither is read
 * again). `fence`: the run holds the pool (fenceOf(hold)); the step then also records the pool's nodes
 * per generation on the pool lease, for the status page's convergence chart. Without it (a run that
 * holds nothing) only the labels are kept current.
 */
export function* generationsPhase(
  run: Pick<RefreshRun, 'context' | 'input'>,
  known: { readonly modelImageId?: string; readonly versions?: readonly ImageVersion[] } = {},
  fence?: { readonly namespace: string; readonly name: string; readonly runId: string },
): Generator<Task, GenerationsPhaseOutput, unknown> {
  const step = 'labelling-generations';
  setStatus(run, step);
  try {
    return yield* call(
      run.context,
      activities.applyNodeGenerations,
      {
        cluster: run.input.cluster,
        pool: run.input.pool,
        ...known,
        ...(fence === undefined ? {} : { fence }),
      },
      { step },
    );
  } catch (error) {
    // A cancel is not a failure of the labelling: it stops the run.
    if (!(error instanceof StepFailure) || isCancel(error)) throw error;
    return { warnings: [`labelling node generations: ${error.message} (the next run labels again)`] };
  }
}
