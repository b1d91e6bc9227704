/**
 * The fault space: the runs that touch a pool (variants), the faults injected at one activity boundary of
 * such a run (fault kinds), and how a run's activity boundaries are enumerated. A point of the space is a
 * variant, a boundary of its uninterrupted run and a fault kind; point.ts explores one.
 */
import type { WorldCheck } from '../../cli/demo-checks.js';
import type { ClusterSettingsData, Harness, HarnessOptions, ScenarioData } from '../e2e/harness.js';
import { nodeOf, POOL2, withCapzPool, withKubeadmPool } from '../e2e/harness.js';
import { POLICY_VARIANTS } from './policy-variants.js';

export interface Variant {
  readonly name: string;
  readonly description: string;
  readonly harness: HarnessOptions;
  /** The pool the run works on. */
  readonly pool: string;
  /** The explored run, when it is not the pool's refresh. */
  readonly run?: ExploredRun;
  /**
   * What the world goes through before the explored run (setups.ts). The invariants compare against the
   * world before the setup when `comparedBeforeSetup` (the setup left something held to give back).
   */
  readonly setup?: (world: SetupWorld) => Promise<void>;
  readonly comparedBeforeSetup?: boolean;
  /** The variant's own invariants, checked after unattended recovery (policy-variants.ts). */
  readonly checks?: (harness: Harness) => Promise<WorldCheck[]>;
}

export interface ExploredRun {
  readonly orchestration: string;
  readonly input: (pool: string, seed: string) => Record<string, unknown>;
  readonly instanceId: (pool: string) => string;
}

/** What a setup gets: the harness, and a way to run an orchestration in a process of its own. */
export interface SetupWorld {
  readonly harness: Harness;
  readonly pool: string;
  /** Runs `name` in a new process (its own task hub); killed right before `killAt` when given. */
  run(name: string, input: Record<string, unknown>, instanceId: string, killAt?: Boundary): Promise<string>;
}

const NO_CANARY = { canary: { enabled: false } };

function settings(
  capture: Record<string, unknown>,
  promotion: Record<string, unknown>,
): (cluster: ClusterSettingsData) => void {
  return (cluster) => {
    cluster.capture = { ...cluster.capture, ...capture };
    cluster['promotion'] = promotion;
  };
}

/** A CAPZ pool's settings: the rollout accepted (docs/capz.md). */
function capzSettings(promotion: Record<string, unknown>): (cluster: ClusterSettingsData) => void {
  return (cluster) => {
    settings({ mode: 'drain-and-stop' }, promotion)(cluster);
    const capz = cluster['capz'] as Record<string, unknown> | undefined;
    if (capz === undefined) throw new Error('the simulator gave the CAPZ cluster no capz settings');
    capz['rollout'] = 'allow';
  };
}

function brokenGalleryImages(scenario: ScenarioData): void {
  const pool = scenario.clusters[0]?.scaleSets.find((entry) => entry['name'] === POOL2);
  if (pool !== undefined) pool['galleryImagesNeverJoin'] = true;
}

const REFRESH_VARIANTS: readonly Variant[] = [
  {
    name: 'refresh drain-and-stop',
    description: 'a pool refresh that drains the donor and stops its VM for the snapshot',
    harness: { clock: 'manual', settings: settings({ mode: 'drain-and-stop' }, NO_CANARY) },
    pool: POOL2,
  },
  {
    name: 'refresh live',
    description: 'a pool refresh that captures the donor live (freeze, copy disk, scrub)',
    harness: { clock: 'manual', settings: settings({ mode: 'live' }, NO_CANARY) },
    pool: POOL2,
  },
  {
    name: 'refresh kubeadm drain-and-stop',
    description:
      "a kubeadm pool's refresh: the donor stopped and snapshotted as it is, given back, its copy guarded, attached, scrubbed",
    harness: {
      clock: 'manual',
      scenario: withKubeadmPool(POOL2),
      settings: settings({ mode: 'drain-and-stop' }, NO_CANARY),
    },
    pool: POOL2,
  },
  {
    name: 'refresh capz drain-and-stop',
    description:
      "a CAPZ MachinePool pool's refresh: a scrubbed copy, the AzureMachinePool template written, CAPZ's rollout followed",
    harness: { clock: 'manual', scenario: withCapzPool(POOL2), settings: capzSettings(NO_CANARY) },
    pool: POOL2,
  },
  {
    name: 'canary capz pass',
    description: "a CAPZ pool's refresh whose canary pool joins: deleted, then the template written",
    harness: {
      clock: 'manual',
      scenario: withCapzPool(POOL2),
      settings: capzSettings({ canary: { soak: '30s', deadline: '15m' } }),
    },
    pool: POOL2,
  },
  {
    name: 'refresh run-command',
    description: 'a pool refresh that prepares the donor with Run Command instead of a prep pod',
    harness: {
      clock: 'manual',
      settings: (cluster) => {
        cluster.capture = { mode: 'run-command', drainGracePeriod: '5s' };
        cluster['promotion'] = NO_CANARY;
      },
    },
    pool: POOL2,
  },
  {
    name: 'canary pass',
    description:
      "a first refresh whose canary joins in a canary scale set made from the pool's model: deleted, then the version published",
    harness: {
      clock: 'manual',
      settings: settings({ mode: 'drain-and-stop' }, { canary: { soak: '30s', deadline: '15m' } }),
    },
    pool: POOL2,
  },
  {
    name: 'canary fail',
    description:
      'a first refresh whose canary never joins in its canary scale set: deleted, the version rejected, the model untouched',
    harness: {
      clock: 'manual',
      scenario: brokenGalleryImages,
      settings: settings({ mode: 'drain-and-stop' }, { canary: { soak: '0s', deadline: '5m' } }),
    },
    pool: POOL2,
  },
  {
    name: 'canary fail pinned kubeadm',
    description:
      "a kubeadm pool's refresh whose canary, added by the pin, never joins: the model is rolled back, the version rejected",
    harness: {
      clock: 'manual',
      scenario: (scenario) => {
        withKubeadmPool(POOL2)(scenario);
        brokenGalleryImages(scenario);
      },
      settings: settings({ mode: 'drain-and-stop' }, { canary: { soak: '0s', deadline: '5m' } }),
    },
    pool: POOL2,
  },
];

const DRAIN = { clock: 'manual', settings: settings({ mode: 'drain-and-stop' }, NO_CANARY) } as const;

/** A refresh killed while it holds the donor (drained, its VM stopping), its lease expired since. */
async function deadRunHoldingTheDonor(world: SetupWorld): Promise<void> {
  const end = await world.run(
    'refreshPool',
    { cluster: 'prod', pool: world.pool, trigger: 'explore-setup', runSeed: 'dead-run' },
    `refresh:prod:${world.pool}`,
    { activity: 'readPrepPod', occurrence: 1 },
  );
  if (end !== 'killed') throw new Error(`setup: the run to kill ended ${end}`);
  world.harness.sim.running.clock.advanceBy(16 * 60);
}

/** Two refreshes from two donors: the model on the second version, the first kept for rollback. */
async function twoVersions(world: SetupWorld): Promise<void> {
  for (const [index, node] of [1, 2].entries()) {
    const end = await world.run(
      'refreshPool',
      {
        cluster: 'prod',
        pool: world.pool,
        trigger: 'explore-setup',
        runSeed: `version-${index}`,
        node: nodeOf(world.pool, node),
      },
      `refresh:prod:${world.pool}`,
    );
    if (end !== 'Completed refreshed') throw new Error(`setup: refresh ${index + 1} ended ${end}`);
    world.harness.sim.running.clock.advanceBy(60 * 60);
  }
}

/** The runs that give back (`release`, and the reaper that runs the same) and roll back. */
export const GIVE_BACK_VARIANTS: readonly Variant[] = [
  {
    name: 'release',
    description: "`release` (the reaper's run) giving back a dead run's donor",
    harness: DRAIN,
    pool: POOL2,
    run: {
      orchestration: 'releasePool',
      input: (pool, seed) => ({ cluster: 'prod', pool, trigger: 'explore', runSeed: seed }),
      instanceId: (pool) => `release:prod:${pool}`,
    },
    setup: deadRunHoldingTheDonor,
    comparedBeforeSetup: true,
  },
  {
    name: 'rollback',
    description: 'a rollback of the model to the previous version',
    harness: {
      clock: 'manual',
      settings: (cluster) => {
        DRAIN.settings(cluster);
        cluster.history = 2;
      },
    },
    pool: POOL2,
    run: {
      orchestration: 'rollbackPool',
      input: (pool, seed) => ({ cluster: 'prod', pool, trigger: 'explore', runSeed: seed }),
      instanceId: (pool) => `rollback:prod:${pool}`,
    },
    setup: twoVersions,
  },
  {
    name: 'retire',
    description: "`retire --generation`: every node of the pool's original image replaced, surge first",
    harness: {
      clock: 'manual',
      settings: (cluster) => {
        DRAIN.settings(cluster);
        cluster.history = 2;
      },
    },
    pool: POOL2,
    run: {
      orchestration: 'retirePool',
      input: (pool, seed) => ({
        cluster: 'prod',
        pool,
        generation: 'unknown',
        trigger: 'explore',
        runSeed: seed,
      }),
      instanceId: (pool) => `retire:prod:${pool}`,
    },
    setup: twoVersions,
  },
];

/**
 * The variant on a deployment that manages the explored pool alone (the cluster's `pools` narrowed to
 * it). With every pool managed, unattended recovery's timer run also refreshed the sample's other stale
 * pool: the same fault-free refresh at every point, after every injected fault had ended, that no
 * invariant of the explored pool reads: a third of a refresh point's CPU (shard 1: 42.9 → 29.3 s).
 */
function managingOnly(variant: Variant): Variant {
  const settings = variant.harness.settings;
  return {
    ...variant,
    harness: {
      ...variant.harness,
      settings: (cluster) => {
        settings?.(cluster);
        const pools = cluster['pools'];
        const kept = Array.isArray(pools)
          ? pools.filter((pool) => (pool as { name?: unknown }).name === variant.pool)
          : [];
        cluster['pools'] = kept.length > 0 ? kept : [{ name: variant.pool }];
      },
    },
  };
}

export const VARIANTS: readonly Variant[] = [
  ...REFRESH_VARIANTS,
  ...GIVE_BACK_VARIANTS,
  ...POLICY_VARIANTS,
].map(managingOnly);

export type FaultKind =
  | 'kill'
  | 'kill-resume'
  | 'kube-down-1m'
  | 'kube-down-20m'
  | 'kube-down-45m'
  | 'arm-down-20m'
  | 'throttle-storm'
  | 'ctrl-c'
  | 'cancel'
  | 'lease-lost'
  | 'node-deleted'
  | 'clock-skew'
  | 'clock-behind'
  | 'definition-deleted'
  | 'outside-scale-out';

export const FAULT_KINDS: readonly { readonly kind: FaultKind; readonly description: string }[] = [
  { kind: 'kill', description: 'the process is killed and never resumed' },
  { kind: 'kill-resume', description: 'the process is killed and a new one resumes the run' },
  { kind: 'kube-down-1m', description: 'the Kubernetes API server answers 503 for 1 minute' },
  { kind: 'kube-down-20m', description: 'the Kubernetes API server answers 503 for 20 minutes' },
  { kind: 'kube-down-45m', description: 'the Kubernetes API server answers 503 for 45 minutes' },
  { kind: 'arm-down-20m', description: 'ARM answers 503 for 20 minutes' },
  { kind: 'throttle-storm', description: 'ARM throttles (429, Retry-After 17 s) for 30 minutes' },
  { kind: 'ctrl-c', description: 'one Ctrl-C in the CLI that runs it (the cancel event)' },
  { kind: 'cancel', description: '`vmss-prototype cancel` from another process (the lease annotation)' },
  {
    kind: 'lease-lost',
    description:
      'the run stalls 16 minutes, another runner takes the expired lease and runs the same (a refresh, a rollback, a retirement)',
  },
  {
    kind: 'node-deleted',
    description:
      'the Node object of the donor the run holds is deleted (`kubectl delete node`), the run dies',
  },
  {
    kind: 'clock-skew',
    description:
      "another runner whose clock is 16 minutes ahead runs the same on the pool (it must not take the live run's lease); the live run goes on",
  },
  {
    kind: 'clock-behind',
    description:
      "the run dies; 16 minutes later another runner whose clock is 16 minutes behind runs the same (it must take the dead run's expired lease)",
  },
  {
    kind: 'definition-deleted',
    description:
      "the pool's gallery image definition is deleted with its versions (by hand), the run goes on",
  },
  {
    kind: 'outside-scale-out',
    description:
      "an autoscaler or admin scales the pool's scale set out by one (then one more at the next call), the run goes on",
  },
];

/** One activity boundary: before the `occurrence`-th call (1-based) of `activity` in the run. */
export interface Boundary {
  readonly activity: string;
  readonly occurrence: number;
}

export function boundaryLabel(boundary: Boundary): string {
  return `${boundary.activity}#${boundary.occurrence}`;
}

/**
 * The boundaries of a run from its activity calls in order. A stretch of calls of the same activity (a
 * poll: the same step in the same state) is explored at its first and last call only.
 */
export function boundariesOf(calls: readonly string[]): Boundary[] {
  const seen = new Map<string, number>();
  const boundaries: Boundary[] = [];
  calls.forEach((activity, index) => {
    const occurrence = (seen.get(activity) ?? 0) + 1;
    seen.set(activity, occurrence);
    const first = calls[index - 1] !== activity;
    const last = calls[index + 1] !== activity;
    if (first || last) boundaries.push({ activity, occurrence });
  });
  return boundaries;
}
