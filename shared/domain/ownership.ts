/**
 * Who holds a pool, as every runner sees it (docs/design.md#ownership-the-pool-lease-and-the-run-id). Pure.
 *
 * - A **run id** names one run of a pool refresh (unique per run, unlike the instance id
 *   `refresh:<cluster>:<pool>` every run of a pool shares). It is carried by the donor's marker annotation,
 *   the prep pod's labels, the snapshot's and the image version's tags, and the lease.
 * - A **lease** (coordination.k8s.io/v1 Lease) per scale set, in the product's namespace, is the one lock
 *   every runner honours: the function app in any task hub, the CLI with any state dir, and two clusters
 *   of settings that share a scale set (its name derives from the scale set's resource id only). Its
 *   holder identity is `<runner kind>/<host>/<run id>`.
 * - The donor's **prior state** is recorded on the node itself (an annotation written in the same patch
 *   as the marker), so giving it back needs no local file.
 */
import { fnv1a32Hex } from './gallery-naming.js';
import { definedOnly } from './optional.js';
import { parseRfc3339 } from './rfc3339.js';

/** The node's state before a run touched it (JSON), written in the same patch as the marker. */
export const PRIOR_STATE_ANNOTATION = 'vmss-prototype.io/prior-state';

/** Labels of the prep pod: which run created it, for which lease (pool). */
export const RUN_LABEL = 'vmss-prototype.io/run';
export const LEASE_LABEL = 'vmss-prototype.io/lease';
export const PREP_POD_APP_LABEL = { key: 'app.kubernetes.io/name', value: 'vmss-prototype-prep' } as const;

/**
 * The labels of every pod a run creates on a node (prep, image pull, live capture's freeze and scrub): the
 * reaper finds the pods of runs that are gone by app, run and lease.
 */
export function runPodLabels(fence: {
  readonly runId: string;
  readonly name: string;
}): Record<string, string> {
  return {
    [PREP_POD_APP_LABEL.key]: PREP_POD_APP_LABEL.value,
    'app.kubernetes.io/managed-by': 'vmss-prototype',
    [RUN_LABEL]: fence.runId,
    [LEASE_LABEL]: fence.name,
  };
}

/** Azure tag names (no `/` allowed in tag names) on snapshots; image versions carry the run id too. */
export const SNAPSHOT_TAG_KEYS = {
  sourceNode: 'vmss-prototype.source-node',
  runId: 'vmss-prototype.run-id',
  lease: 'vmss-prototype.lease',
} as const;

/**
 * Versions rejected on purpose (safe promotion keeps them, hidden): the reaper never deletes them. Both
 * spellings are honoured (Azure refuses `/` in tag names, so the first one is what a real gallery holds).
 */
export const REJECTED_TAG_KEYS: readonly string[] = ['vmss-prototype.rejected', 'vmss-prototype.io/rejected'];

/** Annotations on the lease: what the holding run is doing, and an operator's request to stop it. */
export const LEASE_ANNOTATIONS = {
  instanceId: 'vmss-prototype.io/instance-id',
  cluster: 'vmss-prototype.io/cluster',
  pool: 'vmss-prototype.io/pool',
  purpose: 'vmss-prototype.io/purpose',
  cancelRequested: 'vmss-prototype.io/cancel-requested',
  lastHolder: 'vmss-prototype.io/last-holder',
  releasedAt: 'vmss-prototype.io/released-at',
  /** The process id of a holder that is one process (the CLI), written with every acquisition and renewal. */
  holderPid: 'vmss-prototype.io/holder-pid',
  /**
   * Records that outlive a holder (every acquisition and release carries them over): how many nodes the
   * open retirement window has retired (`<window opened at> <count>`), and the pool's nodes per generation
   * as the last runs saw them (JSON, newest last).
   */
  retiredInWindow: 'vmss-prototype.io/retired-in-window',
  generationSamples: 'vmss-prototype.io/generation-samples',
  /**
   * A retirement in progress (JSON, shared/domain/retirement-record.ts): the run, the node it retires, the
   * scale set's capacity before its surge and the surge instance, so that the reaper can give the pool its
   * size back when the run is gone.
   */
  retirement: 'vmss-prototype.io/retirement',
  /**
   * The VMs runs stopped on a pool whose scale set the product does not write (a CAPZ pool's, docs/capz.md):
   * JSON, instance id → run id (shared/domain/stop-record.ts), the record a scale-set pool keeps in tags.
   */
  stoppedVms: 'vmss-prototype.io/stopped-vms',
} as const;

/** The lease's records that outlive a holder (LEASE_ANNOTATIONS.retiredInWindow, generationSamples). */
export const LASTING_LEASE_ANNOTATIONS: readonly string[] = [
  LEASE_ANNOTATIONS.retiredInWindow,
  LEASE_ANNOTATIONS.generationSamples,
  LEASE_ANNOTATIONS.retirement,
  LEASE_ANNOTATIONS.stoppedVms,
];

/**
 * How long a lease lasts without renewal. Longer than the longest single durable wait of a run (a
 * Retry-After is honoured up to 10 minutes) with margin, short enough that a dead runner's pool is free
 * again within a quarter of an hour.
 */
export const LEASE_DURATION_SECONDS = 15 * 60;

/** Who runs a refresh: the runner kind (`cli`, `function-app`) and its host. */
export interface RunnerIdentity {
  readonly kind: string;
  readonly host: string;
  /**
   * The process, for a runner that is one process (the CLI): recorded on the lease, so that `release` on
   * the same host can tell that the run holding the pool is gone. The function app has none (its runs
   * move between workers).
   */
  readonly pid?: number;
}

/** The lease as the product reads it (plain JSON). */
export interface PoolLease {
  readonly namespace: string;
  readonly name: string;
  /** `<runner kind>/<host>/<run id>`; absent when released. */
  readonly holder?: string;
  readonly acquiredAt?: string;
  readonly renewedAt?: string;
  readonly durationSeconds: number;
  readonly resourceVersion?: string;
  readonly annotations: Readonly<Record<string, string>>;
  /**
   * The API server's clock when it sent this copy (RFC 3339, from its answer's `Date` header): the time a
   * lease is judged at and its times are written in. Not part of the object (never written); absent when
   * the answer had no `Date` header.
   */
  readonly serverTime?: string;
}

/** A holder identity, split. */
export interface Holder extends RunnerIdentity {
  readonly runId: string;
}

/** The lease of a pool's scale set: `vmssp-<scale set name>-<hash of its id>`, a DNS label (≤ 63). */
export function leaseNameFor(scaleSetId: string): string {
  const id = scaleSetId.toLowerCase();
  const name = (id.split('/').at(-1) ?? '')
    .replaceAll(/[^a-z0-9-]/g, '-')
    .replaceAll(/-{2,}/g, '-')
    .slice(0, 40)
    .replaceAll(/^-+|-+$/g, '');
  return name === '' ? `vmssp-${fnv1a32Hex(id)}` : `vmssp-${name}-${fnv1a32Hex(id)}`;
}

/** Runner kinds and hosts never contain `/`: it separates the parts of a holder identity. */
function part(text: string): string {
  const cleaned = text.replaceAll(/[^A-Za-z0-9_.:-]/g, '-').slice(0, 80);
  return cleaned === '' ? 'unknown' : cleaned;
}

export function holderIdentity(runner: RunnerIdentity, runId: string): string {
  return `${part(runner.kind)}/${part(runner.host)}/${runId}`;
}

export function parseHolder(identity: string | undefined): Holder | undefined {
  if (identity === undefined || identity === '') return undefined;
  const parts = identity.split('/');
  const runId = parts.at(-1) ?? '';
  if (parts.length < 3 || runId === '') return undefined;
  return { kind: parts[0] ?? '', host: parts.slice(1, -1).join('/'), runId };
}

/** What a lease means at `now`. */
export type LeaseState =
  | { readonly kind: 'free'; readonly lastHolder?: string; readonly releasedAt?: string }
  | {
      readonly kind: 'held';
      readonly holder: Holder;
      readonly identity: string;
      readonly since?: string;
      readonly renewedAt?: string;
      readonly expiresAt: string;
      /** False once `expiresAt` has passed: any runner may take it (and give back what the run held). */
      readonly live: boolean;
      readonly cancelRequested?: string;
    };

/**
 * The time a lease is judged at and written in: the API server's clock when it answered the read
 * (`lease.serverTime`), or `now`, the caller's clock, when the answer carried none.
 *
 * Why the server's clock: runners on different machines (the function app's workers, any operator's
 * command line) have clocks that may be minutes apart. Judged on the caller's clock, a runner whose clock
 * is ahead takes a live run's lease, one whose clock is behind never sees a dead run's lease expire, and a
 * renewer whose clock is off writes renew times every other runner misjudges. Every lease read and write
 * returns the server's time (its `Date` header), every acquire, renew and release writes that time, and
 * expiry is `serverTime - renewTime > duration`: one clock, the API server's, on both sides. client-go's
 * leader election instead times how long it has watched the record unchanged on its own monotonic clock;
 * that needs a process that keeps watching, and an activity is a fresh call that reads the lease once.
 */
export function leaseClock(lease: PoolLease | undefined, now: Date): Date {
  const serverMs = parseRfc3339(lease?.serverTime ?? '');
  return serverMs === undefined ? now : new Date(serverMs);
}

/**
 * What a lease means when it was read: live while the server's time of the read (leaseClock; `now`, the
 * caller's clock, only for an answer without one) is before its renew time plus its duration.
 */
export function leaseState(lease: PoolLease | undefined, now: Date): LeaseState {
  const holder = parseHolder(lease?.holder);
  if (lease === undefined || holder === undefined) {
    const lastHolder = lease?.annotations[LEASE_ANNOTATIONS.lastHolder];
    const releasedAt = lease?.annotations[LEASE_ANNOTATIONS.releasedAt];
    return {
      kind: 'free',
      ...definedOnly({ lastHolder, releasedAt }),
    };
  }
  const renewedMs = parseRfc3339(lease.renewedAt ?? lease.acquiredAt ?? '') ?? 0;
  const expiresMs = renewedMs + lease.durationSeconds * 1000;
  const cancelRequested = lease.annotations[LEASE_ANNOTATIONS.cancelRequested];
  return {
    kind: 'held',
    holder,
    identity: lease.holder ?? '',
    ...definedOnly({ since: lease.acquiredAt, renewedAt: lease.renewedAt }),
    expiresAt: new Date(expiresMs).toISOString(),
    live: leaseClock(lease, now).getTime() < expiresMs,
    ...definedOnly({ cancelRequested }),
  };
}

/** The run that is alive on a pool (the holder of a live lease, judged as leaseState does), if any. */
export function liveRunId(lease: PoolLease | undefined, now: Date): string | undefined {
  const state = leaseState(lease, now);
  return state.kind === 'held' && state.live ? state.holder.runId : undefined;
}

/** A live lease's holder that is a CLI run on `host` with its process recorded: its process may be gone. */
export interface ProcessHolder {
  readonly runId: string;
  readonly host: string;
  readonly pid: number;
}

/**
 * The live holder of `lease` when it is a CLI run on the same host as `runner` with a recorded pid other
 * than `runner.pid`: the only holder whose death the CLI can see (its pid no longer runs). Never a
 * function-app holder, never another host's, never an expired lease (anyone may take that anyway).
 */
export function processHolderOnHost(
  lease: PoolLease | undefined,
  now: Date,
  runner: RunnerIdentity,
): ProcessHolder | undefined {
  const state = leaseState(lease, now);
  if (lease === undefined || state.kind !== 'held' || !state.live) return undefined;
  if (state.holder.kind !== 'cli' || state.holder.host !== part(runner.host)) return undefined;
  const text = lease.annotations[LEASE_ANNOTATIONS.holderPid] ?? '';
  const pid = /^[1-9]\d{0,9}$/.test(text) ? Number(text) : undefined;
  if (pid === undefined || pid === runner.pid) return undefined;
  return { runId: state.holder.runId, host: state.holder.host, pid };
}

/** One line for people: who holds the pool, since when, until when. */
export function describeHolder(state: Extract<LeaseState, { kind: 'held' }>, instanceId?: string): string {
  const what = instanceId === undefined ? '' : ` (instance ${instanceId})`;
  const since = state.since === undefined ? '' : ` since ${state.since}`;
  const until = state.live
    ? `its lease expires at ${state.expiresAt} unless renewed`
    : `its lease expired at ${state.expiresAt}`;
  return `run ${state.holder.runId} of ${state.holder.kind} on ${state.holder.host}${what}${since}; ${until}`;
}

/** The node's state before a run touched it: restored exactly, never "uncordoned" blindly. */
export interface NodePriorState {
  readonly unschedulable: boolean;
  /** Value of the scale-down-disabled annotation before we touched it; null when absent. */
  readonly scaleDownDisabled: string | null;
}

export function encodePriorState(prior: NodePriorState): string {
  return JSON.stringify({ unschedulable: prior.unschedulable, scaleDownDisabled: prior.scaleDownDisabled });
}

/** The prior state from its annotation; undefined when absent or not what we write. */
export function decodePriorState(text: string | undefined): NodePriorState | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { unschedulable, scaleDownDisabled } = value as Record<string, unknown>;
  if (typeof unschedulable !== 'boolean') return undefined;
  if (scaleDownDisabled !== null && typeof scaleDownDisabled !== 'string') return undefined;
  return { unschedulable, scaleDownDisabled };
}
