/**
 * `canary.afterPass: keep-size` (the default; docs/retirement.md): a passed canary stays as a normal
 * node, and the pool keeps its size — one node of the oldest generations is retired in each canary's
 * place, under retirement's rules (its marks, its PodDisruptionBudgets; retire-pool/retire-node.ts with
 * the canary as the surge). A canary no node could make room for is drained and deleted instead. On a
 * pool the cluster-autoscaler sizes, the canaries just stay. Runs after the version is published, so a
 * failure here never undoes the refresh: it is reported, and the pool stays one node larger.
 */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { isCancel } from '../cancel.js';
import type { RetireRun } from '../retire-pool/retire-node.js';
import { giveBackRetirement, retireNode } from '../retire-pool/retire-node.js';
import { giveBackSurplus } from '../retire-pool/surplus.js';
import { StepFailure } from '../step-failure.js';
import type { CanaryProgress } from './canary-state.js';
import type { PointedModel } from './model.phase.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

export interface KeptSize {
  readonly retired: readonly string[];
  readonly removedCanaries: boolean;
  readonly detail: string;
}

export function* keepPoolSize(
  run: RefreshRun,
  progress: CanaryProgress,
  published: PointedModel,
): Generator<Task, KeptSize, unknown> {
  const canaries = progress.observations.flatMap((observation) =>
    observation.node === undefined || !progress.instances.includes(observation.instanceId)
      ? []
      : [{ instanceId: observation.instanceId, node: observation.node.name }],
  );
  if (canaries.length === 0) {
    return { retired: [], removedCanaries: false, detail: 'no canary node to keep the pool size with' };
  }
  try {
    return yield* retireInPlaceOf(run, canaries, published);
  } catch (error) {
    if (!(error instanceof StepFailure) || isCancel(error) || error.code === 'LeaseLost') throw error;
    return {
      retired: [],
      removedCanaries: false,
      detail: `keeping the pool size failed (${error.message}); the canary stays and the pool is one node larger`,
    };
  }
}

function* retireInPlaceOf(
  run: RefreshRun,
  canaries: { instanceId: string; node: string }[],
  published: PointedModel,
): Generator<Task, KeptSize, unknown> {
  const { context, input } = run;
  setStatus(run, 'planning-retirement', `in place of canary ${canaries.map((c) => c.node).join(', ')}`);
  const plan = yield* call(
    context,
    activities.planRetirement,
    {
      cluster: input.cluster,
      pool: input.pool,
      inPlaceOfCanaries: canaries.length,
      // The node that proved the patches stays: it is what the new version was built from.
      keep: [{ node: run.donor.node, why: 'the donor of the version just published' }],
      // The model as the read that saw it point at the version found it, a moment ago: not read again.
      ...(published.kind === 'pointed' && published.model !== undefined
        ? {
            model: {
              scaleSet: {
                subscriptionId: run.plan.scaleSet.subscriptionId,
                resourceGroup: run.plan.scaleSet.resourceGroup,
                name: run.plan.scaleSet.name,
              },
              ...published.model,
            },
          }
        : {}),
    },
    { step: 'planning-retirement' },
  );
  // Listed after the publication: what the pruning would list again (model.phase.ts).
  if (plan.versions !== undefined) run.versionsListed = plan.versions;
  if (plan.refused !== undefined) return { retired: [], removedCanaries: false, detail: plan.refused };
  const retireRun: RetireRun = {
    context,
    input,
    fence: run.fence,
    runId: run.runId,
    plan,
    priorCapacity: Math.max(0, plan.capacity - canaries.length),
  };
  const spares = [...canaries];
  const retired: string[] = [];
  const givenBack: string[] = [];
  try {
    // A node given back (its drain refused) makes room for the next due one, as in a retirement run.
    for (const retiree of [...plan.retire, ...plan.next]) {
      if (retired.length >= canaries.length) break;
      retireRun.spare ??= spares.shift();
      if (retireRun.spare === undefined) break;
      const done = yield* retireNode(retireRun, retiree);
      if (done.kind === 'retired') retired.push(retiree.node);
      else givenBack.push(`${retiree.node}: ${done.detail}`);
    }
  } catch (error) {
    // The node being retired and the canary standing in for it go back; the run then reports why.
    if (!(error instanceof StepFailure) || error.code !== 'LeaseLost') yield* giveBackRetirement(retireRun);
    throw error;
  }
  if (retireRun.spare !== undefined) spares.unshift(retireRun.spare);
  const removed: string[] = [];
  for (const spare of spares) {
    setStatus(run, 'giving-back-surge', spare.node);
    const given = yield* giveBackSurplus(
      context,
      {
        cluster: input.cluster,
        scaleSet: plan.scaleSet,
        fence: run.fence,
        instanceId: spare.instanceId,
        node: spare.node,
        drainTimeoutSeconds: plan.drainTimeoutSeconds,
        drainGracePeriodSeconds: plan.drainGracePeriodSeconds,
      },
      'giving-back-surge',
    );
    removed.push(given.detail);
  }
  if (spares.length > 0 || retired.length > 0) {
    yield* call(
      context,
      activities.clearRetirement,
      { cluster: input.cluster, fence: run.fence },
      {
        step: 'giving-back-surge',
      },
    );
  }
  const parts = [
    ...(retired.length === 0 ? [] : [`retired ${retired.join(', ')} in the canary's place`]),
    ...givenBack.map((line) => `gave back ${line}`),
    ...(removed.length === 0
      ? []
      : [`no older node could go for ${spares.length} canary(ies): ${removed.join('; ')}`]),
  ];
  return { retired, removedCanaries: removed.length > 0, detail: parts.join('; ') || 'nothing to do' };
}
