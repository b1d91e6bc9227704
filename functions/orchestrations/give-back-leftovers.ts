/**
 * The reaper, carried out: what a pool's dead runs left (domain/reaper.ts decides from what the cluster
 * and Azure show, never from local files) is given back by a run that holds the pool's lease — every pool
 * run first, every timer tick for the idle pools, and `release` on demand (release-pool.orchestration.ts).
 * One action failing does not stop the others; each failure is reported.
 */
import type { OrchestrationContext, Task } from 'durable-functions';

import { deadCanaryScaleSets, deadCapzCanaryPools } from '../../shared/application/leftovers.js';
import type { PoolHoldingsView, PoolScope } from '../../shared/application/pool-holdings.js';
import type { PoolPlan } from '../../shared/application/pool-plan.js';
import { messageOf } from '../../shared/domain/errors.js';
import type { Kept, ReapAction, ReapPlan } from '../../shared/domain/reaper.js';
import { describeReapAction, planReaping } from '../../shared/domain/reaper.js';
import { resourceGroupOfId } from '../../shared/domain/resource-id.js';
import { activities } from '../activities.js';
import { call } from './call.js';
import { giveBackCanaryScaleSets } from './give-back-canary-scale-sets.js';
import type { PoolHold } from './ownership.js';
import { fenceOf } from './ownership.js';
import { giveBackSurplus } from './retire-pool/surplus.js';
import { StepFailure } from './step-failure.js';
import { LIVE_POLL, POLL, RESTORE_RETRY } from './timing.js';
import { pollUntil } from './waits.js';

export interface LeftoversOutcome {
  /** What was given back, in words. */
  readonly gaveBack: readonly string[];
  readonly kept: readonly Kept[];
  /** What could not be given back, with why. */
  readonly failures: readonly string[];
  /**
   * The definition's versions as read after the lease was taken (none when it does not exist yet): what a
   * new version's name must follow. Read before the reaper deleted any, which only makes it more careful.
   */
  readonly versionNames: readonly string[];
  /** The definition did not exist then (a pool's first refresh): it is created without reading it again. */
  readonly definitionAbsent: boolean;
  /**
   * The scale set's tags, etag and image as read, when nothing was given back since (a give-back may write
   * them): the stop record is written from them, conditional on the etag (a stale one is read again).
   */
  readonly scaleSetTags?: PoolHoldingsView['scaleSetTags'];
}

const STEP = 'giving-back-leftovers';

/**
 * Reads what the pool's runs left and gives back whatever is not the holding run's own. `listedVersions`:
 * the definition's versions as the run's plan listed them (PoolPlan): the first read takes them.
 */
export function* giveBackLeftovers(
  context: OrchestrationContext,
  hold: PoolHold,
  listedVersions?: PoolPlan['listedVersions'],
): Generator<Task, LeftoversOutcome, unknown> {
  const read = (known?: PoolPlan['listedVersions']) =>
    call(
      context,
      activities.readPoolHoldings,
      {
        cluster: hold.cluster,
        pool: hold.pool,
        ...(known === undefined ? {} : { listedVersions: known === 'absent' ? known : [...known] }),
      },
      { step: STEP },
    );
  let view = yield* read(listedVersions);
  // A dead run's canary first: the model goes back to its prior image before the reaper
  // judges the versions (it keeps the one a model pins), and the canary instances go; then what is left
  // is read again.
  let canary: { gaveBack: string[]; failures: string[] } = { gaveBack: [], failures: [] };
  const record = view.canaryRecord;
  if (record !== undefined && (record === 'damaged' || record.run !== hold.runId)) {
    canary = yield* giveBackDeadCanary(context, hold);
    view = yield* read();
  }
  // A CAPZ pool: canary pools dead runs left in the management cluster (capz-canary.phase.ts).
  const capzCanaries = deadCapzCanaryPools(view, hold.runId);
  if (capzCanaries.length > 0 && view.capzCanaryPools !== undefined) {
    yield* call(
      context,
      activities.deleteCapzCanaryPools,
      {
        cluster: hold.cluster,
        namespace: view.capzCanaryPools.namespace,
        names: capzCanaries,
        fence: fenceOf(hold),
      },
      { step: STEP },
    );
  }
  // Canary scale sets dead runs made from the pool's model (canary-scale-set.phase.ts).
  const deadScaleSets = deadCanaryScaleSets(view, hold.runId);
  const scaleSets =
    deadScaleSets.length === 0
      ? { gaveBack: [], failures: [] }
      : yield* giveBackCanaryScaleSets(context, hold, view.scope, deadScaleSets);
  const outcome = yield* carryOut(context, hold, view.scope, planReaping(view.holdings, hold.runId));
  // A dead run's retirement (retire-pool/): after its node was given back above, its surge goes.
  const retirement = yield* giveBackDeadRetirement(context, hold, view.scope);
  const gaveBack = [
    ...canary.gaveBack,
    ...capzCanaries.map((name) => `the canary pool of a dead run: ${name} (deleted)`),
    ...scaleSets.gaveBack,
    ...outcome.gaveBack,
    ...retirement.gaveBack,
  ];
  return {
    gaveBack,
    kept: outcome.kept,
    failures: [...canary.failures, ...scaleSets.failures, ...outcome.failures, ...retirement.failures],
    versionNames: view.holdings.versions.map((version) => version.versionName),
    definitionAbsent: view.definitionAbsent === true,
    ...(gaveBack.length > 0 || view.scaleSetTags === undefined
      ? {}
      : { scaleSetTags: { ...view.scaleSetTags, tags: { ...view.scaleSetTags.tags } } }),
  };
}

/**
 * A retirement a dead run left on the lease (retire-pool/retire-node.ts): its node is given back (by its
 * marker), and when both the surge instance and the node's instance still exist the pool is one node
 * larger than the run found it: the surge is drained and deleted (retire-pool/surplus.ts). Then the record
 * goes. A surge whose drain does not finish keeps the record for the next reaper tick.
 */
function* giveBackDeadRetirement(
  context: OrchestrationContext,
  hold: PoolHold,
  scope: PoolScope,
): Generator<Task, { gaveBack: string[]; failures: string[] }, unknown> {
  const cluster = hold.cluster;
  try {
    const leftover = yield* call(
      context,
      activities.readRetirementLeftover,
      { cluster, lease: scope.lease, scaleSet: scope.scaleSet, holder: hold.runId },
      { step: STEP },
    );
    if (leftover === undefined) return { gaveBack: [], failures: [] };
    const gaveBack: string[] = [];
    if (leftover !== 'damaged') {
      const { record } = leftover;
      const restored = yield* call(
        context,
        activities.restoreNode,
        { cluster, node: record.node, runId: record.run, prior: 'recorded-on-node' },
        { step: STEP, retry: RESTORE_RETRY },
      );
      if (restored === 'restored') gaveBack.push(`node ${record.node} that a dead retirement held`);
      if (leftover.surge !== undefined && leftover.retiredInstanceExists) {
        const given = yield* giveBackSurplus(
          context,
          {
            cluster,
            scaleSet: scope.scaleSet,
            fence: fenceOf(hold),
            instanceId: leftover.surge.instanceId,
            ...(leftover.surge.node === undefined ? {} : { node: leftover.surge.node }),
            drainTimeoutSeconds: SURPLUS_DRAIN_SECONDS,
          },
          STEP,
        );
        if (!given.deleted) return { gaveBack, failures: [given.detail] };
        gaveBack.push(`a dead retirement's ${given.detail}`);
      }
    }
    yield* call(context, activities.clearRetirement, { cluster, fence: fenceOf(hold) }, { step: STEP });
    gaveBack.push(`the retirement record of a dead run${leftover === 'damaged' ? ' (unreadable)' : ''}`);
    return { gaveBack, failures: [] };
  } catch (error) {
    if (error instanceof StepFailure && error.code === 'LeaseLost') throw error;
    return { gaveBack: [], failures: [`a dead run's retirement: ${messageOf(error)}`] };
  }
}

/** How long the reaper lets a dead retirement's surge drain before it tries again at the next tick. */
const SURPLUS_DRAIN_SECONDS = 10 * 60;

function* giveBackDeadCanary(
  context: OrchestrationContext,
  hold: PoolHold,
): Generator<Task, { gaveBack: string[]; failures: string[] }, unknown> {
  try {
    const result = yield* call(
      context,
      activities.giveBackDeadCanary,
      { cluster: hold.cluster, pool: hold.pool, fence: fenceOf(hold) },
      { step: STEP },
    );
    return result.outcome === 'given-back'
      ? { gaveBack: [`the canary of a dead run: ${result.summary}`], failures: [] }
      : { gaveBack: [], failures: [] };
  } catch (error) {
    if (error instanceof StepFailure && error.code === 'LeaseLost') throw error;
    return {
      gaveBack: [],
      failures: [`the canary of a dead run: ${messageOf(error)}`],
    };
  }
}

function* carryOut(
  context: OrchestrationContext,
  hold: PoolHold,
  scope: PoolScope,
  plan: ReapPlan,
): Generator<Task, Omit<LeftoversOutcome, 'versionNames' | 'definitionAbsent'>, unknown> {
  const cluster = hold.cluster;
  const gaveBack: string[] = [];
  const failures: string[] = [];
  const started: { instanceId: string; node?: string }[] = [];
  /** Nodes whose VM we stopped and could not see running again: they stay held for the next reaper. */
  const notStarted = new Map<string, string>();
  /** The same by instance id: their stopped-VM record stays for the next reaper. */
  const notStartedInstances = new Map<string, string>();
  let startsAwaited = false;

  function* attempt(
    action: ReapAction,
    work: () => Generator<Task, void, unknown>,
  ): Generator<Task, void, unknown> {
    try {
      yield* work();
      gaveBack.push(describeReapAction(action));
    } catch (error) {
      // A lost lease ends the run: nothing more may be touched.
      if (error instanceof StepFailure && error.code === 'LeaseLost') throw error;
      failures.push(`${describeReapAction(action)}: ${messageOf(error)}`);
    }
  }

  function* awaitStarts(): Generator<Task, void, unknown> {
    if (startsAwaited) return;
    startsAwaited = true;
    for (const { instanceId, node } of started) {
      const instance = { cluster, scaleSet: scope.scaleSet, instanceId };
      try {
        yield* pollUntil(context, {
          step: 'starting-instance',
          intervalSeconds: POLL.start.interval,
          timeoutSeconds: POLL.start.timeout,
          read: () => call(context, activities.readInstance, instance, { step: 'starting-instance' }),
          done: (view) => !view.exists || view.powerState === 'running',
          describe: (view) => `instance ${instanceId} is ${view.powerState}`,
        });
      } catch (error) {
        if (error instanceof StepFailure && error.code === 'LeaseLost') throw error;
        const why = messageOf(error);
        if (node !== undefined) notStarted.set(node, why);
        notStartedInstances.set(instanceId, why);
        failures.push(`starting instance ${instanceId}: ${why}`);
      }
    }
  }

  for (const action of plan.actions) {
    switch (action.kind) {
      case 'delete-prep-pod':
        yield* attempt(action, function* () {
          const pod = { cluster, namespace: action.namespace, name: action.name };
          yield* action.gracePeriodSeconds === undefined
            ? call(context, activities.deletePrepPod, pod, { step: STEP })
            : call(
                context,
                activities.deleteLivePod,
                { ...pod, gracePeriodSeconds: action.gracePeriodSeconds },
                { step: STEP },
              );
        });
        break;
      case 'detach-copy-disk':
        yield* attempt(action, function* () {
          // Only the donor gets the copy: an instance of the pool's scale set (Uniform: its instance id;
          // Flexible: its VM name, both the id's last segment).
          const instanceId = lastSegment(action.instanceResourceId);
          yield* call(
            context,
            activities.requestCopyDetach,
            { cluster, scaleSet: scope.scaleSet, instanceId, diskId: action.diskId },
            { step: STEP },
          );
        });
        break;
      case 'delete-copy-disk': {
        const where = {
          cluster,
          subscriptionId: scope.scaleSet.subscriptionId,
          resourceGroup: resourceGroupOfId(action.diskId) ?? scope.scaleSet.resourceGroup,
          name: action.name,
        };
        yield* attempt(action, function* () {
          if (action.afterDetach) {
            yield* pollUntil(context, {
              step: STEP,
              intervalSeconds: LIVE_POLL.dataDisk.interval,
              timeoutSeconds: LIVE_POLL.dataDisk.timeout,
              read: () => call(context, activities.readCopyDisk, where, { step: STEP }),
              done: (view) => !view.exists || view.attachedTo === undefined,
              describe: (view) => `disk ${action.name} attached to ${view.attachedTo ?? 'nothing'}`,
            });
          }
          yield* call(context, activities.requestCopyDiskDeletion, where, { step: STEP });
          yield* pollUntil(context, {
            step: STEP,
            intervalSeconds: LIVE_POLL.diskDeletion.interval,
            timeoutSeconds: LIVE_POLL.diskDeletion.timeout,
            read: () => call(context, activities.readCopyDisk, where, { step: STEP }),
            done: (view) => !view.exists,
            describe: (view) => `disk ${action.name} ${view.provisioningState ?? 'deleting'}`,
          });
        });
        break;
      }
      case 'start-instance': {
        const node = action.node;
        if (node !== undefined) notStarted.set(node, 'its start was not requested');
        notStartedInstances.set(action.instanceId, 'its start was not requested');
        yield* attempt(action, function* () {
          yield* call(
            context,
            activities.requestInstanceStart,
            { cluster, scaleSet: scope.scaleSet, instanceId: action.instanceId, fence: fenceOf(hold) },
            { step: STEP },
          );
          if (node !== undefined) notStarted.delete(node);
          notStartedInstances.delete(action.instanceId);
          started.push({ instanceId: action.instanceId, ...(node === undefined ? {} : { node }) });
        });
        break;
      }
      case 'clear-stop-record': {
        // The record is what finds a VM with no node: it goes only once the VM runs again.
        yield* awaitStarts();
        const why = notStartedInstances.get(action.instanceId);
        if (why !== undefined) {
          failures.push(
            `the record that instance ${action.instanceId} was stopped is kept: its VM is not running again ` +
              `(${why}); the next reaper tick or \`vmss-prototype release\` tries again`,
          );
          break;
        }
        yield* attempt(action, function* () {
          yield* call(
            context,
            activities.clearInstanceStop,
            {
              cluster,
              scaleSet: scope.scaleSet,
              instanceId: action.instanceId,
              runId: action.runId,
              ...(action.place === 'pool-lease' ? { lease: scope.lease } : {}),
            },
            { step: STEP },
          );
        });
        break;
      }
      case 'restore-node': {
        // The node is given back once its VM runs again. A VM that could not be started keeps the node
        // cordoned and marked: the marker is what lets the next reaper tick find and start it.
        yield* awaitStarts();
        const why = notStarted.get(action.node);
        if (why !== undefined) {
          failures.push(
            `node ${action.node} kept cordoned and marked: its VM is not running again (${why}); the next ` +
              'reaper tick or `vmss-prototype release` tries again',
          );
          break;
        }
        yield* attempt(action, function* () {
          yield* call(
            context,
            activities.restoreNode,
            { cluster, node: action.node, runId: action.runId, prior: 'recorded-on-node' },
            { step: STEP },
          );
        });
        break;
      }
      case 'delete-snapshot': {
        const where = {
          cluster,
          subscriptionId: action.subscriptionId,
          resourceGroup: action.resourceGroup,
          name: action.name,
        };
        yield* attempt(action, function* () {
          yield* call(context, activities.requestSnapshotDeletion, where, { step: STEP });
          yield* pollUntil(context, {
            step: STEP,
            intervalSeconds: POLL.snapshot.interval,
            timeoutSeconds: POLL.snapshot.timeout,
            read: () => call(context, activities.readSnapshot, where, { step: STEP }),
            done: (view) => !view.exists,
            describe: (view) => `snapshot ${action.name} ${view.provisioningState ?? 'deleting'}`,
          });
        });
        break;
      }
      case 'delete-image-version': {
        const ref = { ...scope.definition, versionName: action.versionName };
        yield* attempt(action, function* () {
          yield* call(context, activities.requestImageVersionDeletion, { cluster, ref }, { step: STEP });
          yield* pollUntil(context, {
            step: STEP,
            intervalSeconds: POLL.imageVersionDeletion.interval,
            timeoutSeconds: POLL.imageVersionDeletion.timeout,
            read: () => call(context, activities.readImageVersion, { cluster, ref }, { step: STEP }),
            done: (view) => !view.exists,
            describe: (view) => `version ${action.versionName} ${view.provisioningState ?? 'deleting'}`,
          });
        });
        break;
      }
    }
  }
  yield* awaitStarts();
  return { gaveBack, kept: plan.kept, failures };
}

function lastSegment(id: string): string {
  return id.split('/').filter(Boolean).at(-1) ?? id;
}
