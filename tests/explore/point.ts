/**
 * One point of the fault space, explored on its own simulated world (manual clock, so every point is
 * deterministic): the variant's run starts, the fault strikes right before the chosen activity boundary,
 * the run goes on (or dies), and then only unattended recovery acts — a resume for a killed-and-resumed
 * run, reaper ticks every 5 simulated minutes, the next timer run, the next retirement tick — before
 * every invariant is checked.
 * Right after the run, whatever the world still shows as held must also be reported by `release
 * --dry-run` (a holding nobody can see is a holding nobody gives back).
 */
import type { ActivityHandler } from 'durable-functions';

import type { DurableRunner, InstanceStore, OrchestrationStatus } from '../../cli/runner/index.js';
import type { Clock } from '../../cli/runner/index.js';
import { createDurableRunner, createMemoryStore } from '../../cli/runner/index.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { EVENT, ORCHESTRATION, reapInstanceId } from '../../shared/application/orchestration-ids.js';
import { poolScope } from '../../shared/application/pool-holdings.js';
import { requestPoolCancel } from '../../shared/application/pool-lease.js';
import type { ReapClusterResult, ReleasePoolResult } from '../../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION } from '../../shared/domain/cluster-node.js';
import { LEASE_ANNOTATIONS } from '../../shared/domain/ownership.js';
import { findCapzCluster } from '../../shared/domain/scale-set.js';
import type { FaultRuleSpec } from '../../sim/world/faults.js';
import { arm429Storm, kubeApiDown } from '../../sim/world/faults.js';
import { checkInvariants, takeBefore } from '../chaos/invariants.js';
import type { Harness } from '../e2e/harness.js';
import { startHarness } from '../e2e/harness.js';
import type { Boundary, ExploredRun, FaultKind, SetupWorld, Variant } from './space.js';
import { boundaryLabel } from './space.js';
import { checkExploreInvariants, takeExploreBefore } from './world-checks.js';

const CLUSTER = 'prod';
/** Reaper ticks after the run: every 5 simulated minutes for an hour (past the longest outage). */
const REAPER_TICKS = 12;
const REAPER_PERIOD_SECONDS = 5 * 60;
/**
 * Ticks in a row that found every pool with nothing left and no holder before the ticks up to the last
 * are spared. Two, not one: an activity the killed run had in flight may still land during the first.
 */
const IDLE_TICKS_TO_SETTLE = 2;

export interface PointResult {
  readonly variant: string;
  readonly boundary: string;
  readonly fault: FaultKind;
  /** How the faulted run ended: its runtime status and outcome or failure, or `killed`. */
  readonly runEnd: string;
  /** The fault struck (the run reached the boundary). */
  readonly reached: boolean;
  readonly violations: readonly string[];
  readonly wallMs: number;
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * Calls that change Azure or the cluster and must be fenced by the pool lease: once another runner took
 * the lease the explored run held (lease-lost, clock-skew), the explored run — a refresh, a rollback, a
 * retirement, whatever it is — may not complete any of them.
 */
const FENCED_CHANGES: ReadonlySet<string> = new Set([
  'protectNode',
  'drainNodeStep',
  'startDiskPrep',
  'recordInstanceStop',
  'requestInstancePowerOff',
  'requestInstanceStart',
  'requestSnapshot',
  'requestCopyDisk',
  'requestImageVersion',
  'requestImageVersionExclusion',
  'pinCanaryVersion',
  'createCanaryScaleSet',
  'requestScaleSetImageUpdate',
  'startRetirementSurge',
  'requestInstanceDeletion',
]);

/** How long a run may go on once its image definition was deleted: it must fail at its first read. */
const DEFINITION_GONE_GRACE_SECONDS = 30 * 60;

/** The skew of the clock-skew fault's other runner. */
const SKEW_SECONDS = 16 * 60;

/**
 * The outside-scale-out fault's scale-outs: one instance at the boundary, one more right before the run's
 * next call (an autoscaler that scales out twice, or an admin's `az vmss scale` by two in two steps).
 */
const OUTSIDE_SCALE_OUTS = 2;

/** The uninterrupted run's activity calls, in the order they were made. */
export async function activityCallsOf(variant: Variant): Promise<{ calls: string[]; status: string }> {
  const harness = await startHarness(variant.harness);
  try {
    const calls: string[] = [];
    const registry = durableRegistry(harness.composition.dependencies);
    await variant.setup?.(setupWorld(harness, registry, variant.pool));
    const runner = createDurableRunner({
      ...registry,
      activities: wrapActivities(registry.activities, (name) => {
        calls.push(name);
        return Promise.resolve();
      }),
      clock: harness.sim.clock,
      store: createMemoryStore(),
      maxConcurrentActivities: 8,
    });
    const run = exploredRun(variant);
    const status = await runner.startOrchestration(
      run.orchestration,
      run.input(variant.pool, 'baseline'),
      run.instanceId(variant.pool),
    );
    return { calls, status: endOf(status) };
  } finally {
    await harness.stop();
  }
}

const REFRESH: ExploredRun = {
  orchestration: ORCHESTRATION.refreshPool,
  input: (pool, seed) => ({ cluster: CLUSTER, pool, trigger: 'explore', runSeed: seed }),
  instanceId: (pool) => `refresh:${CLUSTER}:${pool}`,
};

function exploredRun(variant: Variant): ExploredRun {
  return variant.run ?? REFRESH;
}

/** Runs an orchestration in a process of its own, killed right before `killAt` when given. */
export function setupWorld(
  harness: Harness,
  registry: ReturnType<typeof durableRegistry>,
  pool: string,
): SetupWorld {
  return {
    harness,
    pool,
    run: async (name, input, instanceId, killAt) => {
      const worker = mortal(createMemoryStore(), harness.sim.clock);
      let killed: () => void = () => undefined;
      const killedSignal = new Promise<'killed'>((resolve) => (killed = () => resolve('killed')));
      const counts = new Map<string, number>();
      const runner = createDurableRunner({
        ...registry,
        activities: wrapActivities(registry.activities, async (activity) => {
          if (worker.dead()) return never();
          const count = (counts.get(activity) ?? 0) + 1;
          counts.set(activity, count);
          if (killAt !== undefined && activity === killAt.activity && count === killAt.occurrence) {
            worker.kill();
            killed();
            return never();
          }
        }),
        clock: worker.clock,
        store: worker.store,
        maxConcurrentActivities: 8,
      });
      const raced = await Promise.race([runner.startOrchestration(name, input, instanceId), killedSignal]);
      return raced === 'killed' ? 'killed' : endOf(raced);
    },
  };
}

function wrapActivities(
  activities: Readonly<Record<string, ActivityHandler>>,
  before: (name: string) => Promise<void>,
  after?: (name: string, result: unknown) => void,
): Record<string, ActivityHandler> {
  return Object.fromEntries(
    Object.entries(activities).map(([name, handler]) => [
      name,
      (async (input: unknown, context: Parameters<ActivityHandler>[1]): Promise<unknown> => {
        await before(name);
        const result = (await handler(input, context)) as unknown;
        // A catalogue activity answers `{ ok, value | failure }`: only one that succeeded changed anything.
        if ((result as { ok?: unknown } | undefined)?.ok !== false) after?.(name, result);
        return result;
      }) as ActivityHandler,
    ]),
  );
}

function endOf(status: OrchestrationStatus): string {
  if (status.runtimeStatus === 'Completed') {
    const outcome = (status.output as { outcome?: unknown } | undefined)?.outcome;
    return `Completed ${typeof outcome === 'string' ? outcome : ''}`.trim();
  }
  const message = status.failure?.ErrorMessage ?? '';
  return `${status.runtimeStatus} ${message.split(':')[0] ?? ''}`.trim();
}

function armDown(harness: Harness, seconds: number): FaultRuleSpec {
  const fromMs = harness.sim.running.clock.nowMs();
  return {
    api: 'arm',
    operation: '*',
    status: 503,
    code: 'ServiceUnavailable',
    message: 'The service is unavailable. Please retry later.',
    // Longer than the SDK sleeps through inline (10 s): a durable timer waits, on the simulated clock.
    retryAfterSeconds: 30,
    fromMs,
    untilMs: fromMs + seconds * 1000,
  };
}

/** A process that can die: after `kill`, nothing it runs persists, calls out or moves time again. */
function mortal(
  store: InstanceStore,
  clock: Clock,
): { store: InstanceStore; clock: Clock; kill(): void; dead(): boolean } {
  let dead = false;
  return {
    store: {
      load: (instanceId) => (dead ? never() : store.load(instanceId)),
      save: (record) => (dead ? never() : store.save(record)),
      list: () => (dead ? never() : store.list()),
      remove: (instanceId) => (dead ? never() : store.remove(instanceId)),
    },
    clock: {
      virtual: clock.virtual,
      now: () => clock.now(),
      sleepUntil: (epochMs, signal) => (dead ? never() : clock.sleepUntil(epochMs, signal)),
    },
    kill: () => {
      dead = true;
    },
    dead: () => dead,
  };
}

export async function explorePoint(
  variant: Variant,
  boundary: Boundary,
  fault: FaultKind,
): Promise<PointResult> {
  const startedWall = performance.now();
  const harness = await startHarness(variant.harness);
  try {
    const running = harness.sim.running;
    const registry = durableRegistry(harness.composition.dependencies);
    const run = exploredRun(variant);
    const instanceId = run.instanceId(variant.pool);
    let before = takeBefore(running);
    let exploreBefore = takeExploreBefore(running);
    await variant.setup?.(setupWorld(harness, registry, variant.pool));
    if (variant.comparedBeforeSetup !== true) {
      before = takeBefore(running);
      exploreBefore = takeExploreBefore(running);
    }
    const store = createMemoryStore();
    const process1 = mortal(store, harness.sim.clock);
    let killed: () => void = () => undefined;
    const killedSignal = new Promise<'killed'>((resolve) => (killed = () => resolve('killed')));
    const counts = new Map<string, number>();
    let reached = false;
    let extraRuns = 0;
    /** Nodes the fault deleted (node-deleted): their VMs must run again and their kubelets register them. */
    let deletedNodes: readonly string[] = [];
    /** Another runner took the lease (lease-lost, clock-skew): the explored run must change nothing more. */
    let leaseTaken = false;
    const changedAfterLoss: string[] = [];
    /** What a runner with a skewed clock got wrong about the lease (clock-skew, clock-behind). */
    let skewedJudgement: string | undefined;
    /** When the definition-deleted fault struck (simulated ms). */
    let definitionDeletedAtMs: number | undefined;
    /** Instances an outsider (autoscaler, admin) added to the pool's scale set during the run (outside-scale-out). */
    let outsideAdded = 0;
    let outsideTarget: string | undefined;
    /** Deletions the run asked for while the pool had no surge of its own for them (outside-scale-out). */
    const deletedShort: string[] = [];
    /** Versions published when an operator asked the run to stop (Ctrl-C, cancel). */
    let publishedAtCancel: ReadonlySet<string> | undefined;
    // eslint-disable-next-line prefer-const -- the hook needs the runner it is installed in
    let runner: DurableRunner;

    const scaleOutOutside = (): void => {
      if (outsideTarget === undefined || outsideAdded >= OUTSIDE_SCALE_OUTS) return;
      running.world.compute.scaleOut(outsideTarget, 1);
      outsideAdded += 1;
    };
    /** The pool's capacity against its demand: what it had before the run plus what outsiders added. */
    const demandOf = (id: string): number =>
      (exploreBefore.capacities.get(id.toLowerCase()) ?? 0) + outsideAdded;

    /** The pool lease's holder when the explored run (or a run it started) holds it, else undefined. */
    const exploredHolder = async (): Promise<string | undefined> => {
      const handle = await harness.composition.dependencies.cluster(CLUSTER);
      const { lease: ref } = await poolScope(handle, variant.pool);
      const lease = await handle.kube.leases.get(ref.namespace, ref.name);
      const holderInstance = lease?.annotations[LEASE_ANNOTATIONS.instanceId] ?? '';
      const ours = holderInstance === instanceId || holderInstance.startsWith(`${instanceId}:`);
      return ours && lease?.holder !== undefined && lease.holder !== '' ? lease.holder : undefined;
    };
    /**
     * Another runner took the lease the explored run held (`held`): the lease names another holder now, or
     * none (the other run released it). A run the other runner left the lease to (it found nothing to do)
     * lost nothing; a run that did not hold the lease yet acquires it afterwards like any run.
     */
    const takenFrom = async (held: string | undefined): Promise<boolean> => {
      if (held === undefined) return false;
      const handle = await harness.composition.dependencies.cluster(CLUSTER);
      const { lease: ref } = await poolScope(handle, variant.pool);
      return (await handle.kube.leases.get(ref.namespace, ref.name))?.holder !== held;
    };

    const strike = async (): Promise<void> => {
      switch (fault) {
        case 'kill':
        case 'kill-resume':
          process1.kill();
          killed();
          return never();
        case 'kube-down-1m':
        case 'kube-down-20m':
        case 'kube-down-45m': {
          const minutes = Number(/(\d+)m$/.exec(fault)?.[1] ?? '1');
          running.faults.add(kubeApiDown(running.clock, { seconds: minutes * 60 }));
          return;
        }
        case 'arm-down-20m':
          running.faults.add(armDown(harness, 20 * 60));
          return;
        case 'throttle-storm':
          running.faults.add(arm429Storm(running.clock, { seconds: 30 * 60 }));
          return;
        case 'ctrl-c':
          publishedAtCancel = publishedVersions(harness);
          void runner.raiseEvent(instanceId, EVENT.cancel, 'interrupted with Ctrl-C').catch(() => undefined);
          return;
        case 'cancel': {
          const handle = await harness.composition.dependencies.cluster(CLUSTER);
          const scope = await poolScope(handle, variant.pool);
          const published = publishedVersions(harness);
          // Before the run holds the lease there is nobody to ask: `cancel` says so ("no live run holds
          // pool …") and the run, which starts afterwards, is not stopped.
          const requested = await requestPoolCancel(
            handle.kube,
            scope.lease,
            'explorer: cancel',
            harness.composition.dependencies.now(),
          );
          if (requested.kind === 'requested') publishedAtCancel = published;
          return;
        }
        case 'node-deleted':
          deletedNodes = deleteMarkedNodes(harness);
          process1.kill();
          killed();
          return never();
        case 'definition-deleted': {
          const handle = await harness.composition.dependencies.cluster(CLUSTER);
          const { definition: d } = await poolScope(handle, variant.pool);
          const id =
            `/subscriptions/${d.subscriptionId}/resourceGroups/${d.resourceGroup}/providers/Microsoft.Compute` +
            `/galleries/${d.galleryName}/images/${d.imageName}`;
          // Only while a version of it is unpublished (being built: the finding) and no model is pinned to
          // one of its versions: that would break the pool whatever a run does, which is not the run's harm.
          const compute = running.world.compute;
          const building = compute
            .listImageVersions(id)
            .some((v) => v.excludeFromLatest || v.provisioningState !== 'Succeeded');
          const pinned = compute
            .listScaleSets()
            .some((s) =>
              JSON.stringify(s.imageReference).toLowerCase().includes(`${id.toLowerCase()}/versions/`),
            );
          if (!building || pinned) return;
          compute.deleteImageDefinitionWithVersions(id);
          definitionDeletedAtMs = running.clock.nowMs();
          return;
        }
        case 'outside-scale-out': {
          const handle = await harness.composition.dependencies.cluster(CLUSTER);
          const { scaleSet: ref } = await poolScope(handle, variant.pool);
          const scaleSet = running.world.compute
            .listScaleSets()
            .find(
              (candidate) =>
                candidate.name.toLowerCase() === ref.name.toLowerCase() &&
                candidate.resourceGroup.toLowerCase() === ref.resourceGroup.toLowerCase(),
            );
          // A CAPZ pool's scale set is sized by CAPZ from the MachinePool's replicas (which its autoscaler
          // changes): a capacity written on the scale set is not an outsider's demand there.
          if (scaleSet === undefined || findCapzCluster(scaleSet.tags) !== undefined) return;
          outsideTarget = scaleSet.id;
          scaleOutOutside();
          return;
        }
        case 'clock-skew': {
          // The other runner runs what the explored run does (a refresh, a rollback, a retirement): a run
          // that would find nothing to do would never take the lease.
          const held = await exploredHolder();
          const other = recoveryRunner(harness, skewedRegistry(harness, SKEW_SECONDS), SKEW_SECONDS);
          await other.startOrchestration(
            run.orchestration,
            run.input(variant.pool, 'skewed-runner'),
            run.instanceId(variant.pool),
          );
          extraRuns += 1;
          leaseTaken = await takenFrom(held);
          // The explored run is alive and renewing: on the API server's clock its lease is live.
          if (leaseTaken)
            skewedJudgement = "a runner whose clock is 16 minutes ahead took the live run's lease";
          return;
        }
        case 'clock-behind': {
          // The explored run dies; once its lease expired on the server's clock, a runner whose clock is
          // as far behind runs the same (its clock says the lease was renewed a moment ago).
          // Checked where it asks for the lease: a run that finds nothing to do never asks.
          const held = await exploredHolder();
          process1.kill();
          running.clock.advanceBy(SKEW_SECONDS);
          const behind = skewedRegistry(harness, -SKEW_SECONDS);
          let refusedBy: string | undefined;
          const watched = wrapActivities(
            behind.activities,
            () => Promise.resolve(),
            (name, result) => {
              const value = (result as { value?: { kind?: string; holder?: string } }).value;
              if (name === 'acquirePoolLease' && value?.kind === 'held') refusedBy = value.holder;
            },
          );
          const other = recoveryRunner(harness, { ...behind, activities: watched }, -SKEW_SECONDS);
          const end = await other.startOrchestration(
            run.orchestration,
            run.input(variant.pool, 'behind-runner'),
            run.instanceId(variant.pool),
          );
          extraRuns += 1;
          if (held !== undefined && refusedBy === held) {
            skewedJudgement =
              `a runner whose clock is 16 minutes behind saw the dead run's expired lease live ` +
              `(${endOf(end)})`;
          }
          killed();
          return never();
        }
        case 'lease-lost': {
          const held = await exploredHolder();
          running.clock.advanceBy(16 * 60);
          const other = recoveryRunner(harness, registry);
          await other.startOrchestration(
            run.orchestration,
            run.input(variant.pool, 'other-runner'),
            run.instanceId(variant.pool),
          );
          extraRuns += 1;
          leaseTaken = await takenFrom(held);
          return;
        }
      }
    };

    runner = createDurableRunner({
      ...registry,
      activities: wrapActivities(
        registry.activities,
        async (name) => {
          if (process1.dead()) return never();
          const count = (counts.get(name) ?? 0) + 1;
          counts.set(name, count);
          if (reached) scaleOutOutside();
          if (!reached && name === boundary.activity && count === boundary.occurrence) {
            reached = true;
            await strike();
          }
          // Each instance the run deletes while an outsider grows the pool must be one it added (its
          // surge, a canary): deleted with no surge of its own, the pool ends a node short of demand.
          if (name === 'requestInstanceDeletion' && outsideTarget !== undefined) {
            const scaleSet = running.world.compute.getScaleSet(outsideTarget);
            const demand = demandOf(outsideTarget);
            if (scaleSet !== undefined && scaleSet.capacity <= demand) {
              deletedShort.push(`capacity ${scaleSet.capacity}, demand ${demand}`);
            }
          }
        },
        (name) => {
          if (leaseTaken && !process1.dead() && FENCED_CHANGES.has(name)) changedAfterLoss.push(name);
        },
      ),
      clock: process1.clock,
      store: process1.store,
      maxConcurrentActivities: 8,
    });

    const raced = await Promise.race([
      runner.startOrchestration(run.orchestration, run.input(variant.pool, 'explored'), instanceId),
      killedSignal,
    ]);
    let runEnd = raced === 'killed' ? 'killed' : endOf(raced);
    if (raced === 'killed' && fault === 'kill-resume') {
      const resumer = createDurableRunner({
        ...registry,
        clock: harness.sim.clock,
        store,
        maxConcurrentActivities: 8,
      });
      runEnd = `killed, resumed: ${endOf(await resumer.resume(instanceId))}`;
    }

    const outsideAddedBy = (): ReadonlyMap<string, number> =>
      outsideTarget === undefined ? new Map() : new Map([[outsideTarget.toLowerCase(), outsideAdded]]);
    const violations: string[] = [];
    if (deletedShort.length > 0) {
      violations.push(
        `the run deleted an instance with no surge of its own while an outsider grew the pool (${deletedShort.join('; ')})`,
      );
    }
    if (definitionDeletedAtMs !== undefined) {
      const heldSeconds = (running.clock.nowMs() - definitionDeletedAtMs) / 1000;
      if (heldSeconds > DEFINITION_GONE_GRACE_SECONDS) {
        violations.push(
          `the run went on ${Math.round(heldSeconds / 60)} minutes after its image definition was deleted (${runEnd})`,
        );
      }
    }
    if (skewedJudgement !== undefined) violations.push(skewedJudgement);
    if (changedAfterLoss.length > 0) {
      violations.push(
        `after losing its lease the run still changed the pool: ${changedAfterLoss.join(', ')}`,
      );
    }
    // A deleted Node comes back as a new object (what an outsider did to it is not the run's to restore).
    if (deletedNodes.length > 0) {
      before = {
        ...before,
        nodes: new Map([...before.nodes].filter(([name]) => !deletedNodes.includes(name))),
      };
    }
    if (publishedAtCancel !== undefined && runEnd.startsWith('Completed')) {
      const since = [...publishedVersions(harness)].filter((version) => !publishedAtCancel?.has(version));
      if (since.length > 0) {
        violations.push(
          `asked to stop at ${boundaryLabel(boundary)}, the run went on and published ${since.map((v) => v.split('/').at(-1) ?? v).join(', ')}`,
        );
      }
    }
    // What the world holds right after the run must be visible to `release --dry-run`, once the outage
    // injected is over (during it the dry run fails, saying which call failed).
    const outageEnd = Math.max(0, ...running.faults.rules().map((rule) => rule.untilMs ?? 0));
    if (outageEnd > running.clock.nowMs()) running.clock.advanceTo(outageEnd);
    const heldNow = [
      ...checkInvariants(running, before, { runsPerPool: 1 + extraRuns }),
      ...checkExploreInvariants(running, exploreBefore, outsideAddedBy()),
    ].filter((c) => !c.ok);
    if (heldNow.length > 0) {
      const dry = await recoveryRunner(harness, registry).startOrchestration(
        ORCHESTRATION.releasePool,
        { cluster: CLUSTER, pool: variant.pool, trigger: 'explore', dryRun: true },
        `release-plan:${CLUSTER}:${variant.pool}`,
      );
      const result = dry.output as ReleasePoolResult | undefined;
      if (dry.runtimeStatus !== 'Completed' || result === undefined) {
        violations.push(
          `release --dry-run failed while something was held: ${dry.failure?.ErrorMessage ?? ''}`,
        );
      } else if (result.actions.length === 0 && result.holder === undefined) {
        violations.push(
          `release --dry-run reports nothing while the world holds: ${heldNow.map((c) => `${c.name} (${c.detail ?? ''})`).join('; ')}`,
        );
      }
    }

    const registeredNodes = (): Set<string> =>
      new Set(
        [...running.world.clusters.values()].flatMap((handle) =>
          handle.world.store
            .list('nodes')
            .map((object) => (object as { metadata: { name: string } }).metadata.name),
        ),
      );
    // Unattended recovery only: reaper ticks, then the next timer run, then the reaper once more.
    // Once two ticks in a row found nothing held anywhere and no injected fault is to end, the ticks up
    // to the last would read the same and do nothing: the clock still moves through them (every world
    // event on the way runs) and the last tick runs, but the reads in between are spared.
    const recovery = recoveryRunner(harness, registry);
    let idleTicks = 0;
    for (let tick = 0; tick < REAPER_TICKS; tick += 1) {
      running.clock.advanceBy(REAPER_PERIOD_SECONDS);
      const last = tick === REAPER_TICKS - 1;
      if (!last && idleTicks >= IDLE_TICKS_TO_SETTLE && faultsOver(running)) continue;
      idleTicks = nothingHeld(await reapTick(recovery, tick)) ? idleTicks + 1 : 0;
    }
    // A deleted node is back once its kubelet registered it again, after the reaper ticks or at the end: the
    // timer run may roll a CAPZ pool out after the ticks, and CAPZ replaces every machine, that one too.
    const registeredAfterReaper = registeredNodes();
    const timerRun = await recovery.startOrchestration(
      ORCHESTRATION.refreshCluster,
      { cluster: CLUSTER, trigger: 'timer', runSeed: 'explore-timer' },
      `refresh:${CLUSTER}`,
    );
    if (timerRun.runtimeStatus !== 'Completed') {
      violations.push(`the next timer run ${endOf(timerRun)}: ${timerRun.failure?.ErrorMessage ?? ''}`);
    }
    extraRuns += 1;
    running.clock.advanceBy(REAPER_PERIOD_SECONDS);
    await reapTick(recovery, REAPER_TICKS);
    // The retirement timer's next tick: it continues what a PoolImagePolicy asked for (docs/pool-policy.md).
    const retirementTick = await recovery.startOrchestration(
      ORCHESTRATION.retireCluster,
      { cluster: CLUSTER, trigger: 'retirement-timer', runSeed: 'explore-retirement-tick' },
      `retire:${CLUSTER}`,
    );
    if (retirementTick.runtimeStatus !== 'Completed') {
      violations.push(
        `the next retirement tick ${endOf(retirementTick)}: ${retirementTick.failure?.ErrorMessage ?? ''}`,
      );
    }
    const registered = registeredNodes();
    const missing = deletedNodes.filter((name) => !registered.has(name) && !registeredAfterReaper.has(name));
    if (missing.length > 0) {
      violations.push(
        `the pool stays a node short: ${missing.join(', ')} (deleted while its VM was held) never registered again`,
      );
    }
    for (const c of (await variant.checks?.(harness)) ?? []) {
      if (!c.ok) violations.push(`${c.name}: ${c.detail ?? ''}`);
    }

    for (const c of [
      ...checkInvariants(running, before, { runsPerPool: 1 + extraRuns }),
      ...checkExploreInvariants(running, exploreBefore, outsideAddedBy()),
    ]) {
      if (!c.ok) violations.push(`${c.name}: ${c.detail ?? ''}`);
    }
    return {
      variant: variant.name,
      boundary: boundaryLabel(boundary),
      fault,
      runEnd,
      reached,
      violations,
      wallMs: Math.round(performance.now() - startedWall),
    };
  } finally {
    await harness.stop();
  }
}

/** `kubectl delete node` on every node a run holds (carries our marker): the marker goes with it. */
function deleteMarkedNodes(harness: Harness): string[] {
  const deleted: string[] = [];
  const compute = harness.sim.running.world.compute;
  const off = new Set(['stopping', 'stopped', 'deallocating', 'deallocated']);
  for (const handle of harness.sim.running.world.clusters.values()) {
    for (const object of handle.world.store.list('nodes')) {
      const { metadata, spec } = object as {
        metadata: { name: string; annotations?: Record<string, string> };
        spec?: { providerID?: string };
      };
      const { name, annotations } = metadata;
      if (annotations?.[CAPTURE_RUN_ANNOTATION] === undefined) continue;
      // Only a node whose VM we stopped (or are stopping): a running kubelet does not register its deleted
      // Node again until it restarts, which no run of ours is asked to do.
      const vmId = (spec?.providerID ?? '').replace(/^azure:\/\//i, '').toLowerCase();
      const vm = compute
        .listScaleSets()
        .flatMap((s) => compute.listInstances(s.id))
        .find((candidate) => candidate.id.toLowerCase() === vmId);
      if (vm === undefined || !off.has(vm.powerState)) continue;
      handle.world.store.remove('nodes', undefined, name);
      deleted.push(name);
    }
  }
  return deleted;
}

/** Ids of the published image versions (Succeeded, not excluded from latest) of every definition. */
function publishedVersions(harness: Harness): Set<string> {
  const compute = harness.sim.running.world.compute;
  const published = new Set<string>();
  for (const scaleSet of compute.listScaleSets()) {
    for (const gallery of compute.listGalleries(scaleSet.subscriptionId, scaleSet.resourceGroup)) {
      for (const definition of compute.listImageDefinitions(gallery.id)) {
        for (const version of compute.listImageVersions(definition.id)) {
          if (version.provisioningState === 'Succeeded' && !version.excludeFromLatest)
            published.add(version.id);
        }
      }
    }
  }
  return published;
}

/**
 * The same deployment on a machine whose clock is `skewSeconds` ahead (behind when negative): its
 * activities see that time.
 */
function skewedRegistry(harness: Harness, skewSeconds: number): ReturnType<typeof durableRegistry> {
  const deps = harness.composition.dependencies;
  return durableRegistry({ ...deps, now: () => new Date(deps.now().getTime() + skewSeconds * 1000) });
}

/** Another process of the same deployment (its own task hub): the reaper, the timer, another runner. */
function recoveryRunner(
  harness: Harness,
  registry: ReturnType<typeof durableRegistry>,
  skewSeconds = 0,
): DurableRunner {
  const clock = harness.sim.clock;
  const skew = skewSeconds * 1000;
  return createDurableRunner({
    ...registry,
    clock:
      skew === 0
        ? clock
        : {
            virtual: clock.virtual,
            now: () => clock.now() + skew,
            sleepUntil: (epochMs, signal) => clock.sleepUntil(epochMs - skew, signal),
          },
    store: createMemoryStore(),
    maxConcurrentActivities: 8,
  });
}

/** One tick of the function app's reaper timer: the reaper over every pool of the cluster. */
async function reapTick(runner: DurableRunner, tick: number): Promise<OrchestrationStatus> {
  return runner.startOrchestration(
    ORCHESTRATION.reapCluster,
    { cluster: CLUSTER, trigger: 'reaper', runSeed: `reap-${tick}` },
    reapInstanceId(CLUSTER),
  );
}

/**
 * The tick found nothing held in any pool: no live holder, nothing to give back. Only a run takes a
 * pool's lease or leaves a holding (simulated time alone brings heartbeats, boots and ends of units:
 * never a holding), so with no run alive the next tick finds the same.
 */
function nothingHeld(status: OrchestrationStatus): boolean {
  const result = status.output as ReapClusterResult | undefined;
  return (
    status.runtimeStatus === 'Completed' &&
    result !== undefined &&
    result.pools.every((pool) => pool.outcome === 'nothing-left')
  );
}

/** Every fault injected has ended (an outage still on, or still to come, changes what a tick reads). */
function faultsOver(running: Harness['sim']['running']): boolean {
  const now = running.clock.nowMs();
  return running.faults.rules().every((rule) => rule.untilMs !== undefined && rule.untilMs <= now);
}
