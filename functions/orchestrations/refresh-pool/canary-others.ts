/**
 * The nodes an outside scale-out (the cluster-autoscaler, an admin) built from a version while its canary
 * had the model pinned (canary-cleanup.ts finds them once the model is back). They are named at once: a
 * Warning Event on each node, the run's reason, the version's verdict tag, and their generation label
 * (`status` and the status page show "rejected v…"). After a rejection, `canary.othersAfterFail: replace`
 * (the default) retires them now, under retirement's rules as `retire --generation <version>` would
 * (retire-pool/retire-node.ts: one at a time, a replacement from the restored model Ready first, the
 * node's marks and PodDisruptionBudgets respected, given back when its drain does not finish): never more
 * than one node out at once. State lives where a retirement keeps it (the pool lease's record, the
 * nodes' markers), so a run that dies here is given back by the reaper, and the nodes left stay due for
 * every later retirement (their version is rejected). A failure here does not undo the rejection: it is
 * reported, and the nodes stay named.
 */
import type { Task } from 'durable-functions';

import type { OtherFromVersion } from '../../../shared/application/canary-others.js';
import type { PlannedRetiree } from '../../../shared/application/pool-retirement.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { isCancel } from '../cancel.js';
import type { RetireRun } from '../retire-pool/retire-node.js';
import { giveBackRetirement, retireNode } from '../retire-pool/retire-node.js';
import { giveBackSurplus } from '../retire-pool/surplus.js';
import { StepFailure } from '../step-failure.js';
import { RESTORE_RETRY } from '../timing.js';
import type { CanaryProgress } from './canary-state.js';
import { generationsPhase } from './generations.phase.js';
import type { BuiltVersion } from './image.phase.js';
import type { RefreshRun } from './run.js';
import { isoNow, setStatus } from './run.js';

/** What became of the others: replaced, or left (with why and the command that retires them). */
export interface OthersOutcome {
  readonly replaced: readonly string[];
  readonly detail: string;
}

/**
 * Names the others on their nodes and, after a rejection with `othersAfterFail: replace`, replaces them.
 * Nothing to do (undefined) when there are none.
 */
export function* dealWithOthers(
  run: RefreshRun,
  version: BuiltVersion,
  progress: CanaryProgress,
  others: readonly OtherFromVersion[],
  verdict: 'rejected' | 'abandoned',
): Generator<Task, OthersOutcome | undefined, unknown> {
  if (others.length === 0) return undefined;
  const { context, cluster, plan, input } = run;
  const retireCommand = `vmss-prototype retire --pool ${input.pool} --generation ${version.versionName}`;
  const replace = verdict === 'rejected' && plan.settings.canary.othersAfterFail === 'replace';
  const then = replace
    ? 'it is being replaced now by a node of the restored model (canary.othersAfterFail: replace)'
    : `it stays until retired: \`${retireCommand}\``;
  const step = 'rejecting-version';
  setStatus(run, step, `outside nodes from ${version.versionName}: ${others.map((o) => o.node).join(', ')}`);
  // The Events are for the operator's eyes: one that cannot be recorded (the Role in `default` missing) is
  // reported, and changes nothing else.
  let untold = '';
  try {
    yield* call(
      context,
      activities.tellOthersFromVersion,
      {
        cluster,
        others: others.map((other) => ({ ...other })),
        version: version.versionName,
        verdict,
        then,
        at: isoNow(run),
      },
      { step, retry: RESTORE_RETRY },
    );
  } catch (error) {
    if (!(error instanceof StepFailure) || isCancel(error)) throw error;
    untold = `; their Events could not be recorded (${error.message})`;
  }
  if (!replace) {
    const why =
      verdict === 'rejected' ? 'canary.othersAfterFail: keep' : 'the canary ended without a verdict';
    return { replaced: [], detail: `left in place (${why}): \`${retireCommand}\` retires them${untold}` };
  }
  // Labelled first: while they are replaced, `status` and the page show each as "rejected v…".
  yield* generationsPhase(run, {}, run.fence);
  try {
    const outcome = yield* replaceOthers(run, version, progress, others, retireCommand);
    return { ...outcome, detail: `${outcome.detail}${untold}` };
  } catch (error) {
    if (!(error instanceof StepFailure) || isCancel(error) || error.code === 'LeaseLost') throw error;
    return {
      replaced: [],
      detail: `replacing them failed (${error.message}); they stay: \`${retireCommand}\` retires them`,
    };
  }
}

function* replaceOthers(
  run: RefreshRun,
  version: BuiltVersion,
  progress: CanaryProgress,
  others: readonly OtherFromVersion[],
  retireCommand: string,
): Generator<Task, OthersOutcome, unknown> {
  const { context, input } = run;
  setStatus(run, 'planning-retirement', `nodes built from ${version.versionName} by an outside scale-out`);
  // Canaries kept for inspection (afterFail: keep-cordoned) are of the same generation: not these.
  const canaryNodes = progress.observations.flatMap((observation) =>
    observation.node === undefined || others.some((other) => other.node === observation.node?.name)
      ? []
      : [{ node: observation.node.name, why: 'a canary kept for inspection (canary.afterFail)' }],
  );
  const plan = yield* call(
    context,
    activities.planRetirement,
    {
      cluster: input.cluster,
      pool: input.pool,
      generation: version.versionName,
      afterRejectedCanary: true,
      ...(canaryNodes.length === 0 ? {} : { keep: canaryNodes }),
    },
    { step: 'planning-retirement' },
  );
  if (plan.refused !== undefined) {
    return { replaced: [], detail: `not replaced: ${plan.refused}` };
  }
  const retireRun: RetireRun = {
    context,
    input,
    fence: run.fence,
    runId: run.runId,
    plan,
    priorCapacity: plan.capacity,
  };
  // One no node registered for (as broken as its canary, or still booting) is in no plan line: with a
  // surge it goes once its replacement is Ready, drained first if a node registers for it meanwhile.
  const unjoined: PlannedRetiree[] = plan.surge
    ? others
        .filter((other) => !plan.lines.some((line) => line.node === other.node))
        .map((other) => ({
          node: other.node,
          instanceId: other.instanceId,
          generation: version.versionName,
          why: `built from rejected version ${version.versionName} by an outside scale-out; no node registered for it`,
          joined: false,
        }))
    : [];
  const replaced: string[] = [];
  const givenBack: string[] = [];
  let room = plan.retire.length + unjoined.length;
  try {
    for (const retiree of [...plan.retire, ...unjoined, ...plan.next]) {
      if (room === 0) break;
      const done = yield* retireNode(retireRun, retiree);
      if (done.kind === 'retired') {
        room -= 1;
        replaced.push(retiree.node);
      } else {
        givenBack.push(`${retiree.node} (${done.detail})`);
      }
    }
    const spare = retireRun.spare;
    if (spare !== undefined) {
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
      givenBack.push(given.detail);
      if (given.deleted) {
        delete retireRun.spare;
        yield* call(
          context,
          activities.clearRetirement,
          { cluster: input.cluster, fence: run.fence },
          { step: 'giving-back-surge' },
        );
      }
    }
  } catch (error) {
    // The node being replaced and its replacement go back; the caller reports why.
    if (!(error instanceof StepFailure) || error.code !== 'LeaseLost') yield* giveBackRetirement(retireRun);
    throw error;
  }
  // Kept by a mark, or waiting (surge off: only Ready nodes above the capacity may go): with why.
  const kept = plan.lines
    .filter(
      (line) =>
        (line.outcome === 'kept' || line.outcome === 'waiting') &&
        !replaced.includes(line.node) &&
        others.some((other) => other.node === line.node),
    )
    .map((line) => `${line.node} (${line.detail})`);
  const missing = others.filter(
    (other) => !plan.lines.some((line) => line.node === other.node) && !replaced.includes(other.node),
  );
  const parts = [
    ...(replaced.length === 0 ? [] : [`replaced ${replaced.join(', ')}`]),
    ...(givenBack.length === 0 ? [] : [`gave back ${givenBack.join('; ')}`]),
    ...(kept.length === 0 ? [] : [`not replaced: ${kept.join('; ')}`]),
    ...(missing.length === 0
      ? []
      : [
          `not joined${plan.surge ? '' : ' (surge is off: a node-less instance goes only after its replacement)'}: ` +
            missing.map((other) => other.node).join(', '),
        ]),
  ];
  const left = others.length - replaced.length;
  return {
    replaced,
    detail:
      (parts.join('; ') || 'nothing could be replaced') +
      (left === 0 ? '' : `; ${left} left: \`${retireCommand}\` retires them`),
  };
}
