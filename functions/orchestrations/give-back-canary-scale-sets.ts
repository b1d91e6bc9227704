/**
 * The reaper's part for canary scale sets (canary-scale-set.phase.ts): a scale set a dead run made from
 * the pool's model, found by its tags (pool-holdings.ts), is given back from Azure and the cluster alone —
 * its nodes held and drained like a canary the run removes, then the scale set deleted and waited for. A
 * failure is reported and leaves the rest for the next tick (every step is idempotent).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { CanaryScaleSetHolding, PoolScope } from '../../shared/application/pool-holdings.js';
import { messageOf } from '../../shared/domain/errors.js';
import type { ScaleSetRef } from '../../shared/domain/resource-id.js';
import { activities } from '../activities.js';
import { call } from './call.js';
import type { PoolHold } from './ownership.js';
import { fenceOf } from './ownership.js';
import { EXPECTED, POLL, RESTORE_RETRY } from './timing.js';
import { pollUntil } from './waits.js';

const STEP = 'giving-back-leftovers';

/** Gives back each canary scale set of a dead run; returns what was given back and what failed. */
export function* giveBackCanaryScaleSets(
  context: OrchestrationContext,
  hold: PoolHold,
  scope: PoolScope,
  holdings: readonly CanaryScaleSetHolding[],
): Generator<Task, { gaveBack: string[]; failures: string[] }, unknown> {
  const gaveBack: string[] = [];
  const failures: string[] = [];
  for (const holding of holdings) {
    const scaleSet: ScaleSetRef = { ...scope.scaleSet, name: holding.name };
    try {
      yield* giveBackOne(context, hold, scaleSet, holding.run);
      gaveBack.push(`the canary scale set ${holding.name} of run ${holding.run} (drained, deleted)`);
    } catch (error) {
      failures.push(`the canary scale set ${holding.name} of run ${holding.run}: ${messageOf(error)}`);
    }
  }
  return { gaveBack, failures };
}

function* giveBackOne(
  context: OrchestrationContext,
  hold: PoolHold,
  scaleSet: ScaleSetRef,
  run: string,
): Generator<Task, void, unknown> {
  const cluster = hold.cluster;
  const fence = fenceOf(hold);
  const view = yield* call(
    context,
    activities.readCanaryScaleSet,
    { cluster, scaleSet, nodes: true },
    { step: STEP },
  );
  // Deleting the scale set deletes its machines without a drain: their nodes are drained first.
  for (const node of view.nodes ?? []) {
    const prior = yield* call(context, activities.readNodeState, { cluster, node }, { step: STEP });
    yield* call(context, activities.protectNode, { cluster, node, prior, fence }, { step: STEP });
    yield* pollUntil(context, {
      step: STEP,
      intervalSeconds: POLL.canaryDrain.interval,
      timeoutSeconds: POLL.canaryDrain.timeout,
      read: () =>
        call(
          context,
          activities.drainNodeStep,
          // The node is going away: pods nothing would bring back go with it.
          { cluster, node, deleteEmptyDirData: true, force: true, fence },
          { step: STEP },
        ),
      done: (result) => result.done,
      describe: (result) => `${result.pending.length} pods left on canary node ${node}`,
    });
  }
  const remove = () =>
    call(
      context,
      activities.deleteCanaryScaleSet,
      { cluster, scaleSet, runId: run },
      { step: STEP, retry: RESTORE_RETRY },
    );
  const asked = yield* remove();
  if (asked.gone) return;
  yield* pollUntil(context, {
    step: STEP,
    ...EXPECTED.instanceDeletion,
    timeoutSeconds: POLL.instanceDeletion.timeout,
    read: remove,
    done: (result) => result.gone,
    describe: () => `canary scale set ${scaleSet.name} is being deleted`,
  });
}
