/**
 * Every wait of the orchestrations in one place: how often each step polls and how long it may take,
 * and how activity calls are retried. Seconds for polls, milliseconds for retries (as the runtime's).
 */
import type { PollSchedule } from '../../shared/domain/poll-schedule.js';

export { pollDelaySeconds, type PollSchedule } from '../../shared/domain/poll-schedule.js';

/** How one activity call is retried on transient failures (terminal ones fail at once). */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly firstDelayMs: number;
  readonly backoffCoefficient: number;
  readonly maxDelayMs: number;
  /** No attempt starts later than this after the first one. */
  readonly withinMs?: number;
}

/** How often each wait polls, and how long it may take before the run fails (seconds). */
export const POLL = {
  drain: { interval: 5 /* timeout from settings: capture.drainTimeout */ },
  /**
   * The prep image pulled on the donor before its cordon: at once when the donor's image cache holds it
   * (a node built from our image does), else seconds to a minute, a slow registry more. Read 2 s after
   * the pod was made, then as long again as waited so far, at most every 15 s (PREP_IMAGE_PULL).
   */
  prepImagePull: { interval: 2, timeout: 15 * 60 },
  powerOff: { interval: 15, timeout: 20 * 60 },
  /**
   * Until the cluster says the donor's guest went down (shared/domain/power-off-signal.ts): the prep pod
   * and the node read every 5 s (Kubernetes reads, nothing of ARM's budget); a pod that ended is checked
   * again 60 s later (the node lifecycle controller's grace, 40–50 s, and its 5 s period, passed) to tell
   * a script that did not power off. Without a signal, ARM is read first as before (EXPECTED.powerOff).
   */
  powerOffSignals: { interval: 5, nodeMonitorGrace: 40, stillUpAfter: 60 },
  runCommand: { interval: 10 /* timeout from settings: capture.runCommandTimeout */ },
  snapshot: { interval: 15, timeout: 60 * 60 },
  start: { interval: 15, timeout: 20 * 60 },
  imageVersion: { interval: 60, timeout: 8 * 60 * 60 },
  imageVersionDeletion: { interval: 30, timeout: 60 * 60 },
  publication: { interval: 10, timeout: 30 * 60 },
  /** Read first when expected (EXPECTED.scaleSetUpdate), then at its interval. */
  scaleSetUpdate: { timeout: 30 * 60 },
  /** Read first when expected (EXPECTED.extensionDeletion), then at its interval. */
  extensionDeletion: { timeout: 60 * 60 },
  /** The canary instances appear in the scale set once the scale-out is accepted. */
  canaryScaleOut: { interval: 15, timeout: 15 * 60 },
  /**
   * Canary health: observed this often (the deadline comes from settings: promotion.canary.deadline), and
   * not before a soak is due; ARM is not read once every canary is provisioned and running, while its node
   * stays Ready (canary.phase.ts), so a soak costs cluster reads, not ARM's.
   */
  canaryObservation: { interval: 30 },
  instanceDeletion: { interval: 15, timeout: 30 * 60 },
  /** Cordon-and-drain of a passed canary that settings remove (afterPass: remove). */
  canaryDrain: { interval: 5, timeout: 15 * 60 },
  /**
   * Retirement (docs/retirement.md): the surge's instance created and its node Ready (a boot and a join:
   * minutes), read every 15 s; a node's drain read every 5 s until promotion.retirement.drainTimeout.
   */
  retirementSurge: { interval: 15, timeout: 20 * 60 },
  retirementDrain: { interval: 5 /* timeout from settings: promotion.retirement.drainTimeout */ },
  /**
   * CAPZ's rollout of a new template image (docs/capz.md): one machine replaced takes a boot and a join
   * (minutes), a pool many; read every minute. A new machine not Ready this long after it was created
   * failed to join (CAPZ would wait for ever); the whole rollout is bounded by the pool's size.
   */
  capzRollout: { interval: 60, joinDeadline: 20 * 60, timeoutPerMachine: 30 * 60 },
  /** The canary pool's machines appear once CAPZ created its scale set. */
  capzCanary: { interval: 15, timeout: 15 * 60 },
} as const;

/**
 * Long-running waits whose usual length is known: the first read is made when the operation is usually
 * done (`expectedSeconds` after it was asked for), then again on the schedule's backoff until it is.
 * Reading earlier only spends ARM's read budget (those reads are what it throttles first:
 * https://learn.microsoft.com/azure/virtual-machines/compute-throttling-limits) and history.
 * Microsoft publishes no expected durations ("highly variable"): the figures are kamino's logged runs
 * (stop 113–183 s, snapshot 6–65 s, image version 664 s, extension deletion 13–67 s;
 * docs/design.md#timings). An operation's length is spread around its usual one, mostly late: a first read
 * at the quickest or most common length seen misses most runs, and each miss costs a read. So the first
 * read is placed where most runs are done (a little past the usual, or the longest seen where the range is
 * narrow), and a miss is read again after a share of the time waited so far (`lateShare`, shared/domain/
 * poll-schedule.ts): an operation a few percent late costs one more read, minutes late a few, not one per
 * interval. The image version's wait also reads again when its replication progress says it should be
 * done (image.phase.ts). A throttled read's Retry-After is honoured by the call itself (call.ts).
 */
export const EXPECTED = {
  /**
   * Prep pod created → instance stopped: pod start and script (seconds), then `vmss stop` (113–183 s):
   * read first at 135 s, a little past the quickest stops, then a quarter of the wait later each time
   * (135, 169, 211 s…): a stop at the slow end of the range costs two reads, not seven.
   */
  powerOff: { expectedSeconds: 135, intervalSeconds: 10, lateShare: 0.25, backoffToSeconds: 60 },
  /**
   * The guest's own power-off (the prep script's last command, as the cluster dates it:
   * shared/domain/power-off-signal.ts) → ARM reports the instance stopped. No published figure for a stop
   * the guest started; kamino's stops (113–183 s) are of the API's, which shut the guest down the same
   * way, and the simulator models it so (sim/README.md). The donor is out of service for every second
   * between the stop and the read that sees it, so the wait reads first at 114 s, just past the quickest
   * seen (a usual stop costs one read), then every 8 s across the range (to 190 s, past its slow end): a
   * stop is seen at most 8 s late, for one read per 8 s it runs past 114 s (a stop at the range's middle,
   * 150 s, costs six single-VM GETs). Past the range, a quarter of the wait,
   * at most a minute apart. Before: reads at 115 and 161 s, 25–41 s late under the timing model's jitter.
   */
  guestHalt: {
    expectedSeconds: 114,
    intervalSeconds: 8,
    steadyUntilSeconds: 190,
    lateShare: 0.25,
    backoffToSeconds: 60,
  },
  /**
   * Snapshot requested → Succeeded (6–65 s; full copies of a stopped disk): read at the longest seen,
   * then 13 s later.
   */
  snapshot: { expectedSeconds: 65, intervalSeconds: 5, lateShare: 0.2, backoffToSeconds: 15 },
  /**
   * Start asked → running (kamino's one start: 30 s; the simulator's spread 24–39 s; ARM's Retry-After
   * for it says the usual 30 s): read at 31 s, then every 4 s to 45 s, then a fifth of the wait (at most
   * 10 s) apart. The donor is out of service until the read that sees it running: a start is seen at most
   * 4 s late (at 35 s first, 5–8 s late under the jitter).
   */
  start: {
    expectedSeconds: 31,
    intervalSeconds: 4,
    steadyUntilSeconds: 45,
    lateShare: 0.2,
    backoffToSeconds: 10,
  },
  /** Image version requested → Succeeded and replicated (664 s for one region; hours with more). */
  imageVersion: { expectedSeconds: 670, intervalSeconds: 15, backoffToSeconds: 60 },
  /**
   * A model change (image reference, tags, capacity) written → `Succeeded` (seconds: the model alone is
   * written, no instance is upgraded under the manual policy).
   */
  scaleSetUpdate: { expectedSeconds: 10, intervalSeconds: 10 },
  /**
   * Bootstrap extensions' deletion asked → gone from the model (13–67 s; docs/design.md#timings): read at
   * the longest seen (nothing but the run's end waits for it).
   */
  extensionDeletion: { expectedSeconds: 67, intervalSeconds: 10, backoffToSeconds: 20 },
  /**
   * An instance's deletion asked → gone: a shutdown and the disk's release (about as long as a
   * power-off, powerOff above, 113–183 s). Nothing is out of service meanwhile (the node was drained):
   * read where most are done, as the power-off, then a quarter of the wait later (135, 169, 212 s). Before:
   * at 90 s then every 15 s, seven reads for a deletion of 180 s.
   */
  instanceDeletion: { expectedSeconds: 135, intervalSeconds: 10, lateShare: 0.25, backoffToSeconds: 60 },
  /** A scale-out asked → the new instance's node Ready: provisioning, boot and join (minutes). */
  surgeReady: { expectedSeconds: 120, intervalSeconds: 15 },
  /**
   * Live capture's copy disk asked (from the snapshot) → Succeeded: no published figure (the simulator's
   * guess is 10 s, sim/README.md). Read first at 10 s, then every 5 s (LIVE_POLL): before, from 5 s, a
   * read that never found it done. Nothing is out of service meanwhile. (Its deletion, as the snapshot's,
   * is asked for and not waited for: refresh-pool/copy-disk.ts.)
   */
  copyDisk: { expectedSeconds: 10, intervalSeconds: 5 },
  /**
   * The copy's attach to the running donor, and its detach, asked → settled (the simulator's guess 15 s):
   * read first at 15 s, then every 5 s. The donor stays in service (live capture): a late read costs the
   * run seconds, never the donor's. Before, from 5 s: two reads that found it Updating.
   */
  dataDisk: { expectedSeconds: 15, intervalSeconds: 5 },
} as const satisfies Record<string, PollSchedule>;

/**
 * The longest sleep an estimate from an operation's progress may ask for (shared/domain/progress-estimate.ts):
 * progress need not be linear, so a wrong estimate costs at most this much waiting.
 */
export const PROGRESS_ESTIMATE_MAX_SECONDS = 10 * 60;

/** The prep image pull's schedule (POLL.prepImagePull): 2, 4, 8, 16, 31, 46… s after the pod was made. */
export const PREP_IMAGE_PULL: PollSchedule = {
  expectedSeconds: POLL.prepImagePull.interval,
  intervalSeconds: POLL.prepImagePull.interval,
  growToSeconds: 15,
};

/**
 * Retries of one activity call on transient failures: 5, 10, 20, 40, 60 s between six attempts, about
 * 2¼ minutes of throttling or an API server restart. A server's Retry-After is waited when longer.
 */
export const STEP_RETRY: RetryPolicy = {
  maxAttempts: 6,
  firstDelayMs: 5_000,
  backoffCoefficient: 2,
  maxDelayMs: 60_000,
};

/**
 * Giving the donor back outlasts an API server outage: retried on transient failures for 4 hours, about
 * once a minute (then the run reports that the node could not be restored, and how to do it by hand). The
 * run keeps its lease meanwhile (renewed as soon as the API server answers again), so nobody else touches
 * the pool; the custom status says what it waits for. Why not end the run and leave the node to the
 * reaper: the next timer tick that runs it may be a day away, and a CLI run has no tick at all.
 */
export const RESTORE_RETRY: RetryPolicy = {
  maxAttempts: Number.POSITIVE_INFINITY,
  firstDelayMs: 5_000,
  backoffCoefficient: 2,
  maxDelayMs: 60_000,
  withinMs: 4 * 60 * 60_000,
};

/** A restore that waited longer than this (the API server was away) says so in the run's failure. */
export const RESTORE_WAIT_WORTH_TELLING_MS = 5 * 60_000;

/**
 * The pool lease (domain/ownership.ts: 15 minutes): renewed before an activity or a sleep once this much
 * orchestration time passed since the last renewal (also how soon a run sees a cancel asked through the
 * lease), and before any sleep that would otherwise outlast it (less this margin).
 */
export const LEASE_RENEWAL = {
  everyMs: 2 * 60_000,
  marginMs: 2 * 60_000,
} as const;

/** The longest Retry-After honoured for one wait: a server asking for more is asked again after this. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * The cluster run's window of pool refreshes: while pools wait for a free slot it wakes this often (s)
 * to start the next one when one finished (a finished child cannot be raced against the others without
 * sending them again, parallel.ts). Short next to a pool refresh (15–30 min).
 */
export const CLUSTER_WINDOW_CHECK_SECONDS = 60;

/** Reboot debounce (pool-signal): bounds on history size and on waiting for another trigger's refresh. */
export const POOL_SIGNAL = {
  /** A notice storm beyond this many notices in one cycle refreshes anyway. */
  maxNoticesPerCycle: 200,
  /** Notices that arrive while the refresh runs start one more cycle; at most this many in all. */
  maxCycles: 3,
  /** A refresh started by someone else (timer, HTTP, another runner) is waited for, polling this often (s)… */
  busyRetrySeconds: 300,
  /** …this many times. */
  maxBusyWaits: 48,
  /**
   * A refresh that found a node Ready too briefly (it rebooted just before) is planned again when the
   * node has been Ready long enough, at most this many times per debounce…
   */
  maxRearms: 2,
  /** …and at most this long after the refresh (s). */
  maxRearmSeconds: 2 * 60 * 60,
  /** Margin after the node becomes old enough, for clock skew between the API server and us (s). */
  rearmMarginSeconds: 30,
} as const;

/**
 * Live capture's waits (seconds): short intervals, because every step but the image version takes
 * seconds and the freeze's window is bounded by how soon the snapshot is requested.
 */
export const LIVE_POLL = {
  /**
   * Until the freeze pod runs (seconds: its image was pulled on the donor just before). Short, so that
   * the snapshot is asked for well inside the freeze.
   */
  freezePod: { interval: 2, timeout: 10 * 60 },
  /**
   * From the freeze pod seen Running to the snapshot request: its script installs the guards and runs
   * `sync` (seconds on a busy host) before `fsfreeze` meanwhile. No signal says it froze (the pod cannot
   * write to the API); a copy taken before is crash-consistent, which the scrub's first mount repairs.
   */
  freezeSettleSeconds: 5,
  copyDisk: { interval: 5, timeout: 30 * 60 },
  dataDisk: { interval: 5, timeout: 30 * 60 },
  scrub: { interval: 5, timeout: 15 * 60 },
  diskDeletion: { interval: 5, timeout: 30 * 60 },
} as const;

/**
 * A subscription's run (refresh-subscription): each cluster's first start waits a delay in [0, this)
 * derived from the run's instance id and the cluster's name (shared/domain/admission.ts), so that the
 * subscriptions' first waves do not reach Azure Resource Manager in the same second (s).
 */
export const ADMISSION_JITTER_SECONDS = 120;
