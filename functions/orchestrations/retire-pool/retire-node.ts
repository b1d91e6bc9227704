/**
 * Retiring one node (docs/retirement.md), while the run holds the pool's lease: record the retirement on
 * the lease, surge (one more instance, built from the model: the newest generation) and wait until its
 * node is Ready, then hold the old node like a donor (our marker, its prior state, cordon), drain it with
 * evictions (PodDisruptionBudgets decide; nothing is forced) and delete its instance through the scale set,
 * which takes the capacity back to what it was. A drain that does not finish within the drain timeout gives
 * the node back as it was and is reported; the surge instance then stays for the next node, or is given
 * back at the end of the run (surplus.ts). Every step is an idempotent activity; a run that dies anywhere
 * leaves a record the reaper gives back from (give-back-leftovers.ts).
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import type { PlannedRetiree, PoolRetirementPlan } from '../../../shared/application/pool-retirement.js';
import type { RefreshStep } from '../../../shared/application/refresh-contracts.js';
import type { RetirePoolInput } from '../../../shared/application/retirement-contracts.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, notePastReturn, pastReturn, shielded } from '../cancel.js';
import { isoNow, setStatus } from '../refresh-pool/run.js';
import { StepFailure } from '../step-failure.js';
import { EXPECTED, POLL, RESTORE_RETRY } from '../timing.js';
import { pollUntil } from '../waits.js';
import { giveBackSurplus, waitForInstanceGone } from './surplus.js';

export interface RetireRun {
  readonly context: OrchestrationContext;
  readonly input: Pick<RetirePoolInput, 'cluster' | 'pool' | 'trigger'>;
  /** The pool lease this run holds (every write is fenced by it). */
  readonly fence: { readonly namespace: string; readonly name: string; readonly runId: string };
  readonly runId: string;
  readonly plan: PoolRetirementPlan;
  /** The surge instance that joined and is not yet paired with a retired node. */
  spare?: { readonly instanceId: string; readonly node: string };
  /**
   * The scale set's capacity before any surge of this run (what the record reports). The pool ends at it
   * plus what others (an autoscaler, an admin) added meanwhile: each surge asks one more than the capacity
   * it reads, and each retired node's deletion takes exactly one back.
   */
  readonly priorCapacity: number;
  /** The node being retired now: what a run that fails or is cancelled gives back (giveBackRetirement). */
  current?: {
    readonly node: string;
    readonly instanceId: string;
    /** A surge was asked for it and its instance not seen yet. */
    surgeUnseen: boolean;
    /** Its instance's deletion was asked for: the spare is its replacement, nothing to give back. */
    deletionRequested: boolean;
  };
}

export type NodeRetirement =
  | { readonly kind: 'retired'; readonly replacement?: string }
  | { readonly kind: 'given-back'; readonly detail: string };

export function* retireNode(
  run: RetireRun,
  retiree: PlannedRetiree,
): Generator<Task, NodeRetirement, unknown> {
  const { context, input, plan } = run;
  const { cluster } = input;
  const fence = run.fence;
  const scaleSet = plan.scaleSet;

  run.current = {
    node: retiree.node,
    instanceId: retiree.instanceId,
    surgeUnseen: false,
    deletionRequested: false,
  };
  // The record first: from here on the reaper knows what this run may leave.
  retireStatus(run, 'surging', `${retiree.node} (${retiree.generation})`);
  const started = yield* call(
    context,
    activities.startRetirementSurge,
    {
      cluster,
      scaleSet,
      fence,
      surge: plan.surge && run.spare === undefined,
      // A spare stands in (keep-size's canary, a surge kept from a node given back): no scale-out of ours
      // is told apart from the baseline, so the plan's instance ids serve, unread.
      ...(run.spare === undefined ? {} : { plannedInstanceIds: [...plan.instanceIds] }),
      record: {
        run: run.runId,
        node: retiree.node,
        instanceId: retiree.instanceId,
        priorCapacity: run.priorCapacity,
        startedAt: isoNow(run),
        // A spare surge stays on the record from its first write: a run that dies next leaves it known.
        ...(run.spare === undefined ? {} : { surgeInstanceId: run.spare.instanceId }),
      },
    },
    { step: 'surging' },
  );
  if (run.spare !== undefined) {
    // The surge of a node given back earlier stands in for this one.
    yield* call(
      context,
      activities.noteRetirementSurge,
      { cluster, fence, instanceId: run.spare.instanceId },
      { step: 'surging' },
    );
  }
  let replacement: string | undefined = run.spare?.node;
  if (plan.surge && run.spare === undefined) {
    run.current.surgeUnseen = true;
    const joined = yield* pollUntil(context, {
      step: 'surging',
      expectedSeconds: EXPECTED.surgeReady.expectedSeconds,
      intervalSeconds: EXPECTED.surgeReady.intervalSeconds,
      timeoutSeconds: POLL.retirementSurge.timeout,
      advice: 'the scale set did not add a Ready node: check its quota, activity log and the new node',
      read: () =>
        call(
          context,
          activities.observeRetirementSurge,
          { cluster, scaleSet, baseline: [...started.baseline] },
          { step: 'surging' },
        ),
      done: (seen) => seen.some((instance) => instance.node?.ready === true),
      describe: (seen) =>
        seen.length === 0
          ? `no new instance yet (capacity ${started.capacityAsked ?? '?'} asked)`
          : seen
              .map((instance) => `${instance.instanceId}: ${instance.node?.name ?? 'no node yet'}`)
              .join(', '),
    });
    const ready = joined.find((instance) => instance.node?.ready === true);
    if (ready?.node !== undefined) {
      run.spare = { instanceId: ready.instanceId, node: ready.node.name };
      run.current.surgeUnseen = false;
      replacement = ready.node.name;
      yield* call(
        context,
        activities.noteRetirementSurge,
        { cluster, fence, instanceId: ready.instanceId },
        { step: 'surging' },
      );
    }
  }

  if (retiree.joined === false && (yield* deleteUnjoined(run, retiree))) {
    return { kind: 'retired', ...(replacement === undefined ? {} : { replacement }) };
  }
  retireStatus(run, 'retiring-node', retiree.node);
  const prior = yield* call(
    context,
    activities.readNodeState,
    { cluster, node: retiree.node },
    {
      step: 'retiring-node',
    },
  );
  yield* call(
    context,
    activities.protectNode,
    { cluster, node: retiree.node, prior, fence },
    {
      step: 'retiring-node',
    },
  );
  let drained = true;
  let blockedBy = '';
  try {
    const last = yield* pollUntil(context, {
      step: 'retiring-node',
      intervalSeconds: POLL.retirementDrain.interval,
      timeoutSeconds: plan.drainTimeoutSeconds,
      read: () =>
        call(
          context,
          activities.drainNodeStep,
          {
            cluster,
            node: retiree.node,
            gracePeriodSeconds: plan.drainGracePeriodSeconds,
            deleteEmptyDirData: plan.deleteEmptyDirData,
            // Pods nothing would bring back block, as kubectl drain's default: retirement forces nothing.
            force: false,
            fence,
          },
          { step: 'retiring-node' },
        ),
      // A pod nothing would bring back blocks before anything is evicted (kubectl drain's check): no
      // waiting changes that, so the node is given back at once rather than at the timeout.
      done: (result) => result.done || result.blockers.length > 0,
      describe: (result) =>
        [
          ...result.blockers.map((blocker) => `${blocker.pod}: ${blocker.reason}`),
          ...result.pending.map(
            (pod) => `${pod.pod} ${pod.state}${pod.message === undefined ? '' : ` (${pod.message})`}`,
          ),
        ].join('; ') || 'pods left',
    });
    if (!last.done) {
      drained = false;
      blockedBy = `the drain cannot start: ${last.blockers
        .map((blocker) => `${blocker.pod}: ${blocker.reason}`)
        .join('; ')}`;
    }
  } catch (error) {
    if (!(error instanceof StepFailure) || error.code !== 'Timeout') throw error;
    drained = false;
    blockedBy = error.message;
  }
  if (!drained) {
    // Given back exactly as it was; the surge instance stays spare for the next node (or goes at the end).
    yield* call(
      context,
      activities.restoreNode,
      { cluster, node: retiree.node, runId: run.runId, prior },
      { step: 'retiring-node', retry: RESTORE_RETRY },
    );
    // The record stays while a spare surge exists: it is what lets the reaper give the spare back.
    if (run.spare === undefined) {
      yield* call(context, activities.clearRetirement, { cluster, fence }, { step: 'retiring-node' });
    }
    delete run.current;
    return {
      kind: 'given-back',
      detail: blockedBy.startsWith('the drain cannot start')
        ? `${blockedBy}; it was uncordoned and left as it was`
        : `its drain did not finish within ${plan.drainTimeoutSeconds} s, so it was uncordoned and left as it was: ${blockedBy}`,
    };
  }

  retireStatus(run, 'deleting-retired-instance', `${retiree.node} (instance ${retiree.instanceId})`);
  yield* call(
    context,
    activities.requestInstanceDeletion,
    { cluster, scaleSet, instanceId: retiree.instanceId, fence },
    { step: 'deleting-retired-instance' },
  );
  // Only once ARM took the request: a cancel acted on before the call leaves the node to give back.
  run.current.deletionRequested = true;
  yield* waitForInstanceGone(context, {
    cluster,
    scaleSet,
    instanceId: retiree.instanceId,
    step: 'deleting-retired-instance',
  });
  // Its node object goes with the instance (the cloud node controller); our marker goes with it. A node
  // object that stays is given back so that nothing of ours is left on it.
  yield* call(
    context,
    activities.restoreNode,
    { cluster, node: retiree.node, runId: run.runId, prior },
    { step: 'deleting-retired-instance', retry: RESTORE_RETRY },
  );
  delete run.spare;
  delete run.current;
  yield* call(context, activities.clearRetirement, { cluster, fence }, { step: 'deleting-retired-instance' });
  return { kind: 'retired', ...(replacement === undefined ? {} : { replacement }) };
}

/**
 * An instance no node registered for: nothing runs there to drain, so it goes once its replacement is
 * Ready. False when a node registered for it meanwhile: the caller then drains it like any node.
 */
function* deleteUnjoined(run: RetireRun, retiree: PlannedRetiree): Generator<Task, boolean, unknown> {
  const { context, input, plan, fence } = run;
  const { cluster } = input;
  const step = 'deleting-retired-instance';
  retireStatus(run, step, `${retiree.node} (instance ${retiree.instanceId}, no node registered)`);
  const asked = yield* call(
    context,
    activities.requestInstanceDeletion,
    { cluster, scaleSet: plan.scaleSet, instanceId: retiree.instanceId, fence, unlessJoinedAs: retiree.node },
    { step },
  );
  if (asked === 'joined') return false;
  if (run.current !== undefined) run.current.deletionRequested = true;
  yield* waitForInstanceGone(context, {
    cluster,
    scaleSet: plan.scaleSet,
    instanceId: retiree.instanceId,
    step,
  });
  delete run.spare;
  delete run.current;
  yield* call(context, activities.clearRetirement, { cluster, fence }, { step });
  return true;
}

/** The run's custom status: the step and what it acts on. */
export function retireStatus(
  run: Pick<RetireRun, 'context' | 'input' | 'runId'>,
  step: RefreshStep,
  detail?: string,
): void {
  setStatus({ context: run.context, input: run.input, runId: run.runId }, step, detail);
}

/**
 * A retirement that failed or was cancelled gives back at once, shielded from the cancel: the node it was
 * retiring (its marker says whether it held it) and the spare surge instance, unless the node's instance
 * is already being deleted (the spare is then its replacement). A surge asked for and not seen yet is left
 * with the record on the lease: the reaper finds the instance (retire-pool/surplus.ts via the leftovers).
 */
export function giveBackRetirement(run: RetireRun): Generator<Task, readonly string[], unknown> {
  return shielded(run.context, giveBack(run));
}

function* giveBack(run: RetireRun): Generator<Task, readonly string[], unknown> {
  const { context, input, plan, fence } = run;
  const cluster = input.cluster;
  const step = 'giving-back-surge';
  const current = run.current;
  const gaveBack: string[] = [];
  if (current?.deletionRequested === true) {
    // Past return: the node's instance is being deleted and the spare is its replacement. Its end is
    // awaited, so that the node leaves with nothing of ours on it (a node object that stays is given back).
    yield* waitForInstanceGone(context, {
      cluster,
      scaleSet: plan.scaleSet,
      instanceId: current.instanceId,
      step,
      retry: RESTORE_RETRY,
    });
    yield* call(
      context,
      activities.restoreNode,
      { cluster, node: current.node, runId: run.runId, prior: 'recorded-on-node' },
      { step, retry: RESTORE_RETRY },
    );
    yield* call(context, activities.clearRetirement, { cluster, fence }, { step, retry: RESTORE_RETRY });
    // A refresh's keep-size is past its return already (the version is published): that note stays.
    if (!pastReturn(context)) {
      notePastReturn(context, `node ${current.node} was retired (its instance deleted) before the stop`);
    }
    delete run.spare;
    delete run.current;
    return [`node ${current.node} retired before the stop`];
  }
  if (current !== undefined) {
    // A deletion ARM took while its activity was reported failed: the spare is then the replacement.
    const left = yield* call(
      context,
      activities.listRemainingInstances,
      { cluster, scaleSet: plan.scaleSet, instanceIds: [current.instanceId] },
      { step, retry: RESTORE_RETRY },
    );
    if (left.length === 0) return gaveBack;
  }
  if (current !== undefined) {
    const restored = yield* call(
      context,
      activities.restoreNode,
      { cluster, node: current.node, runId: run.runId, prior: 'recorded-on-node' },
      { step, retry: RESTORE_RETRY },
    );
    if (restored === 'restored') {
      gaveBack.push(`node ${current.node} (uncordoned)`);
      noteGivenBack(context, `node ${current.node} (uncordoned)`);
    }
  }
  const spare = run.spare;
  if (spare !== undefined) {
    const given = yield* giveBackSurplus(
      context,
      {
        cluster,
        scaleSet: plan.scaleSet,
        fence,
        instanceId: spare.instanceId,
        node: spare.node,
        drainTimeoutSeconds: plan.drainTimeoutSeconds,
        drainGracePeriodSeconds: plan.drainGracePeriodSeconds,
      },
      step,
    );
    gaveBack.push(given.detail);
    if (given.deleted) noteGivenBack(context, given.detail);
    if (!given.deleted) return gaveBack;
    delete run.spare;
  }
  if (current?.surgeUnseen !== true) {
    yield* call(context, activities.clearRetirement, { cluster, fence }, { step, retry: RESTORE_RETRY });
  }
  delete run.current;
  return gaveBack;
}
