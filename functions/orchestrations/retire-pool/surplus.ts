/**
 * Giving the pool back its size (docs/retirement.md): a surge instance that no retired node paid for — its
 * node's drain was refused, or the run that made it is gone — is held, drained with evictions and deleted,
 * which takes the capacity back to what it was. Used by the retirement run at its end and by the reaper
 * for a dead run's record. A drain that does not finish in time gives the node back and leaves the
 * instance (the pool stays one node larger, reported): nothing is forced.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import type { StepName } from '../step-failure.js';
import { StepFailure } from '../step-failure.js';
import type { RetryPolicy } from '../timing.js';
import { EXPECTED, POLL, RESTORE_RETRY } from '../timing.js';
import { pollUntil } from '../waits.js';

export interface Surplus {
  readonly cluster: string;
  readonly scaleSet: ScaleSetRef;
  readonly fence: { readonly namespace: string; readonly name: string; readonly runId: string };
  readonly instanceId: string;
  /** Its node, when it joined. */
  readonly node?: string;
  readonly drainTimeoutSeconds: number;
  readonly drainGracePeriodSeconds?: number;
}

/** What became of the surplus instance, in words. */
export function* giveBackSurplus(
  context: OrchestrationContext,
  surplus: Surplus,
  step: 'giving-back-surge' | 'giving-back-leftovers',
): Generator<Task, { readonly deleted: boolean; readonly detail: string }, unknown> {
  const { cluster, scaleSet, fence, instanceId, node } = surplus;
  if (node !== undefined) {
    const prior = yield* call(context, activities.readNodeState, { cluster, node }, { step });
    yield* call(context, activities.protectNode, { cluster, node, prior, fence }, { step });
    let blocked = '';
    try {
      const last = yield* pollUntil(context, {
        step,
        intervalSeconds: POLL.retirementDrain.interval,
        timeoutSeconds: surplus.drainTimeoutSeconds,
        read: () =>
          call(
            context,
            activities.drainNodeStep,
            {
              cluster,
              node,
              ...(surplus.drainGracePeriodSeconds === undefined
                ? {}
                : { gracePeriodSeconds: surplus.drainGracePeriodSeconds }),
              deleteEmptyDirData: true,
              force: false,
              fence,
            },
            { step },
          ),
        // Pods nothing would bring back block at once (kubectl drain's check): no waiting changes that.
        done: (result) => result.done || result.blockers.length > 0,
        describe: (result) =>
          [...result.blockers.map((b) => b.pod), ...result.pending.map((p) => p.pod)].join(', ') ||
          'pods left',
      });
      if (!last.done)
        blocked = `pods nothing would bring back: ${last.blockers.map((b) => b.pod).join(', ')}`;
    } catch (error) {
      if (!(error instanceof StepFailure) || error.code !== 'Timeout') throw error;
      blocked = error.message;
    }
    if (blocked !== '') {
      yield* call(
        context,
        activities.restoreNode,
        { cluster, node, runId: fence.runId, prior },
        { step, retry: RESTORE_RETRY },
      );
      return {
        deleted: false,
        detail:
          `surge instance ${instanceId} (node ${node}) stays: its drain did not finish within ` +
          `${surplus.drainTimeoutSeconds} s (${blocked}); the pool is one node larger until it can go`,
      };
    }
  }
  yield* call(
    context,
    activities.requestInstanceDeletion,
    { cluster, scaleSet, instanceId, fence },
    { step, retry: RESTORE_RETRY },
  );
  yield* waitForInstanceGone(context, { cluster, scaleSet, instanceId, step });
  return {
    deleted: true,
    detail: `surge instance ${instanceId}${node === undefined ? '' : ` (node ${node})`} deleted: the pool is back to its size`,
  };
}

/** Waits until the scale set no longer lists `instanceId` (its deletion asked for): first read at the expected end. */
export function* waitForInstanceGone(
  context: OrchestrationContext,
  target: {
    readonly cluster: string;
    readonly scaleSet: ScaleSetRef;
    readonly instanceId: string;
    readonly step: StepName;
    readonly retry?: RetryPolicy;
  },
): Generator<Task, void, unknown> {
  const { cluster, scaleSet, instanceId, step } = target;
  yield* pollUntil(context, {
    step,
    ...EXPECTED.instanceDeletion,
    timeoutSeconds: POLL.instanceDeletion.timeout,
    read: () =>
      call(
        context,
        activities.listRemainingInstances,
        { cluster, scaleSet, instanceIds: [instanceId] },
        { step, ...(target.retry === undefined ? {} : { retry: target.retry }) },
      ),
    done: (left) => left.length === 0,
    describe: () => `instance ${instanceId} is still being deleted`,
  });
}
