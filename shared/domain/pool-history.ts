/**
 * A pool's recent history as the status page shows it, rebuilt from what the runs leave in
 * Azure and the cluster, never from a runner's files: each image version we built names its run, donor and
 * patch time in its tags and its creation second in its name; ARM records when it was created; a rejection
 * or abandonment is a tag with its reason; the pool lease names the last run and when it let go. Pure:
 * `now` comes in.
 */
import type { CaptureMode } from './capture-mode.js';
import { parseImageVersion, parseImageVersionTags, runTimelineTagsOf } from './image-version.js';
import { definedOnly } from './optional.js';
import { parseHolder } from './ownership.js';
import { parseRfc3339 } from './rfc3339.js';
import { versionVerdictOf } from './version-verdict.js';

/** What the history needs of one gallery image version. */
export interface VersionFacts {
  readonly name: string;
  readonly provisioningState: string;
  readonly excludeFromLatest: boolean;
  /** ARM's `publishingProfile.publishedDate`: when the version was created. */
  readonly publishedAt?: string;
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * - `current`: new nodes get it. `usable`: retained, a rollback target.
 * - `rejected` (its canary failed or an operator rolled back from it), `abandoned` (its canary never ended).
 * - `building`: not Succeeded yet; `failed`: ARM failed to build it; `hidden`: excluded from latest
 *   without a verdict (a canary still judging it).
 */
export type VersionState = 'current' | 'usable' | 'rejected' | 'abandoned' | 'building' | 'failed' | 'hidden';

export interface VersionEntry {
  readonly name: string;
  readonly state: VersionState;
  /** The verdict's reason (rejected, abandoned) or ARM's state (failed, building). */
  readonly reason?: string;
  readonly rejectedAt?: string;
  /** Provenance, when we built it. */
  readonly sourceNode?: string;
  readonly patchedAt?: string;
  readonly runId?: string;
  readonly builtAt?: string;
  /** How old the donor's patches were when the version was created. */
  readonly patchAgeAtBuildSeconds?: number;
  /** How its run captured the donor, when recorded. */
  readonly captureMode?: CaptureMode;
  /** When its run published it to `latest`, when recorded. */
  readonly inLatestAt?: string;
}

/** One step of a run's timeline: from one recorded moment to the next. */
export interface RunStep {
  readonly step:
    'capture' | 'build-and-roll-out' | 'build-and-canary' | 'build-and-publish' | 'roll-out' | 'running';
  /** In words, for the page. */
  readonly label: string;
  readonly from: string;
  /** Absent when the end was not recorded (the step's bar stays open). */
  readonly to?: string;
  readonly seconds?: number;
}

/** `interrupted`: it holds the pool's lease still, but the lease expired (or its process is gone). */
export type RunOutcome =
  'running' | 'interrupted' | 'refreshed' | 'rejected' | 'abandoned' | 'failed' | 'building';

export interface RunRecord {
  readonly runId: string;
  readonly version?: string;
  readonly donor?: string;
  readonly outcome: RunOutcome;
  /** The verdict's reason for rejected and abandoned runs. */
  readonly reason?: string;
  readonly startedAt?: string;
  readonly endedAt?: string;
  readonly seconds?: number;
  /**
   * No end recorded (another run let go of the lease since), but it had ended by then: the next run's
   * start. `secondsAtMost` is the time from its start to that moment.
   */
  readonly endedBy?: string;
  readonly secondsAtMost?: number;
  readonly steps: readonly RunStep[];
}

/**
 * Freshness over time: while `version` was the newest usable one (from its creation to the next one's),
 * a new node booted with patches aged from `ageFromSeconds` to `ageToSeconds`.
 */
export interface FreshnessSegment {
  readonly version: string;
  readonly from: string;
  readonly to: string;
  readonly ageFromSeconds: number;
  readonly ageToSeconds: number;
}

export interface PoolHistory {
  /** Newest first, at most `limit`. */
  readonly versions: readonly VersionEntry[];
  /** Newest first, at most `limit`: runs that built a version, and a run holding the pool now. */
  readonly runs: readonly RunRecord[];
  /** Oldest first. */
  readonly freshness: readonly FreshnessSegment[];
}

export interface PoolHistoryInput {
  readonly now: Date;
  readonly versions: readonly VersionFacts[];
  /** The version new nodes get, when it is ours. */
  readonly currentVersion?: string;
  /** The pool lease: who holds it now (and since when), or who held it last and when it let go. */
  readonly lease:
    | { readonly state: 'held'; readonly runId: string; readonly since?: string }
    | {
        /** Its holder is not running any more (shared/domain/run-state.ts); it was last seen then. */
        readonly state: 'interrupted';
        readonly runId: string;
        readonly since?: string;
        readonly lastSeenAt?: string;
      }
    | { readonly state: 'free'; readonly lastHolder?: string; readonly releasedAt?: string };
  /** How many versions and runs to show. */
  readonly limit?: number;
}

export const HISTORY_LIMIT = 10;

function seconds(fromMs: number, toMs: number): number {
  return Math.max(0, Math.round((toMs - fromMs) / 1000));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Orders versions by their names (Major.Minor.Patch, numerically), newest first. */
function newestFirst(a: VersionFacts, b: VersionFacts): number {
  const pa = parseImageVersion(a.name);
  const pb = parseImageVersion(b.name);
  if (pa === undefined || pb === undefined) return b.name.localeCompare(a.name);
  return pb.major - pa.major || pb.minor - pa.minor || pb.patch - pa.patch;
}

function entryOf(version: VersionFacts, currentVersion: string | undefined): VersionEntry {
  const verdict = versionVerdictOf(version.tags);
  const tags = parseImageVersionTags(version.tags);
  const provenance = tags.kind === 'ours' ? tags.provenance : undefined;
  const patchedMs = provenance === undefined ? undefined : parseRfc3339(provenance.patchedAt);
  const timeline = runTimelineTagsOf(version.tags);
  const builtMs = version.publishedAt === undefined ? undefined : parseRfc3339(version.publishedAt);
  const state: VersionState =
    verdict.kind === 'rejected'
      ? 'rejected'
      : verdict.kind === 'abandoned'
        ? 'abandoned'
        : version.provisioningState === 'Failed'
          ? 'failed'
          : version.provisioningState !== 'Succeeded'
            ? 'building'
            : version.name === currentVersion
              ? 'current'
              : version.excludeFromLatest
                ? 'hidden'
                : 'usable';
  const reason =
    verdict.kind === 'none'
      ? state === 'failed' || state === 'building'
        ? `provisioning state ${version.provisioningState}`
        : undefined
      : verdict.reason;
  return {
    name: version.name,
    state,
    ...definedOnly({ reason }),
    ...(verdict.kind === 'rejected' && verdict.at !== undefined ? { rejectedAt: verdict.at } : {}),
    ...(provenance === undefined || provenance.sourceNode === ''
      ? {}
      : { sourceNode: provenance.sourceNode }),
    ...(patchedMs === undefined ? {} : { patchedAt: iso(patchedMs) }),
    ...(provenance === undefined || provenance.runId === '' ? {} : { runId: provenance.runId }),
    ...(builtMs === undefined ? {} : { builtAt: iso(builtMs) }),
    ...(builtMs === undefined || patchedMs === undefined
      ? {}
      : { patchAgeAtBuildSeconds: seconds(patchedMs, builtMs) }),
    ...timeline,
  };
}

/** What the capture step did, by how the run captured the donor (older versions do not say). */
const CAPTURE_LABELS: Readonly<Record<CaptureMode | 'unknown', string>> = {
  'drain-and-stop': 'capture: cordon, drain, snapshot the donor',
  'run-command': 'capture: cordon, drain, prepare by Run Command, snapshot the donor',
  live: "capture: freeze, snapshot and scrub a copy of the running donor's disk",
  unknown: 'capture the donor',
};

const OUTCOME_OF_STATE: Readonly<Record<VersionState, RunOutcome>> = {
  current: 'refreshed',
  usable: 'refreshed',
  hidden: 'building',
  rejected: 'rejected',
  abandoned: 'abandoned',
  failed: 'failed',
  building: 'building',
};

/**
 * The timeline of the run that built `entry`: capture from the version's naming second (the run names it
 * right after taking the pool) to its creation in the gallery (the snapshot is done then), then building,
 * canary and roll-out until the version's rejection or the run's release of the pool lease, when recorded.
 */
function runOf(entry: VersionEntry, input: PoolHistoryInput, nowMs: number): RunRecord | undefined {
  if (entry.runId === undefined) return undefined;
  const namedAt = parseImageVersion(entry.name)?.encodedTime;
  const namedMs = namedAt === undefined ? undefined : parseRfc3339(namedAt);
  const builtMs = entry.builtAt === undefined ? undefined : parseRfc3339(entry.builtAt);
  const lease = input.lease;
  const holdsNow = lease.state === 'held' && lease.runId === entry.runId;
  const interrupted = lease.state === 'interrupted' && lease.runId === entry.runId;
  const released =
    lease.state === 'free' && parseHolder(lease.lastHolder)?.runId === entry.runId
      ? parseRfc3339(lease.releasedAt ?? '')
      : interrupted
        ? parseRfc3339(lease.lastSeenAt ?? '')
        : undefined;
  const rejectedMs = entry.rejectedAt === undefined ? undefined : parseRfc3339(entry.rejectedAt);
  const endMs = holdsNow ? undefined : (rejectedMs ?? released);
  const steps: RunStep[] = [];
  if (namedMs !== undefined && builtMs !== undefined && builtMs >= namedMs) {
    steps.push({
      step: 'capture',
      label: CAPTURE_LABELS[entry.captureMode ?? 'unknown'],
      from: iso(namedMs),
      to: iso(builtMs),
      seconds: seconds(namedMs, builtMs),
    });
  }
  const inLatestMs = entry.inLatestAt === undefined ? undefined : parseRfc3339(entry.inLatestAt);
  if (builtMs !== undefined && inLatestMs !== undefined && inLatestMs >= builtMs) {
    // Published: building (and its canary, when on) up to the publication, then the roll-out.
    steps.push({
      step: 'build-and-publish',
      label: 'build the image version (and its canary, when on), publish it',
      from: iso(builtMs),
      to: iso(inLatestMs),
      seconds: seconds(builtMs, inLatestMs),
    });
    const to = holdsNow ? nowMs : endMs;
    steps.push({
      step: holdsNow ? 'running' : 'roll-out',
      label: holdsNow
        ? 'rolling out (running now)'
        : 'roll out: model, bootstrap extensions, pruning, node labels',
      from: iso(inLatestMs),
      ...(to === undefined || to < inLatestMs ? {} : { to: iso(to), seconds: seconds(inLatestMs, to) }),
    });
  } else if (builtMs !== undefined) {
    const to = holdsNow ? nowMs : endMs;
    const canary = entry.state === 'rejected' || entry.state === 'abandoned' || entry.state === 'hidden';
    steps.push({
      step: holdsNow ? 'running' : canary ? 'build-and-canary' : 'build-and-roll-out',
      label: holdsNow
        ? 'building, verifying, rolling out (running now)'
        : canary
          ? 'build the image version, canary'
          : 'build the image version, publish, roll out',
      from: iso(builtMs),
      ...(to === undefined || to < builtMs ? {} : { to: iso(to), seconds: seconds(builtMs, to) }),
    });
  }
  const startMs = namedMs ?? builtMs;
  const finishMs = holdsNow ? undefined : endMs;
  return {
    runId: entry.runId,
    version: entry.name,
    ...definedOnly({ donor: entry.sourceNode }),
    outcome: holdsNow ? 'running' : interrupted ? 'interrupted' : OUTCOME_OF_STATE[entry.state],
    ...(entry.state === 'rejected' || entry.state === 'abandoned' || entry.state === 'failed'
      ? entry.reason === undefined
        ? {}
        : { reason: entry.reason }
      : {}),
    ...(startMs === undefined ? {} : { startedAt: iso(startMs) }),
    ...(finishMs === undefined ? {} : { endedAt: iso(finishMs) }),
    ...(startMs === undefined || finishMs === undefined || finishMs < startMs
      ? {}
      : { seconds: seconds(startMs, finishMs) }),
    steps,
  };
}

export function poolHistoryOf(input: PoolHistoryInput): PoolHistory {
  const limit = Math.max(1, input.limit ?? HISTORY_LIMIT);
  const nowMs = input.now.getTime();
  const all = [...input.versions].sort(newestFirst).map((v) => entryOf(v, input.currentVersion));
  const runs: RunRecord[] = [];
  const lease = input.lease;
  if (lease.state !== 'free' && !all.some((entry) => entry.runId === lease.runId)) {
    // A run holding the pool that has not named its version yet: only its start is known. An interrupted
    // one held it until it was last seen.
    const sinceMs = lease.since === undefined ? undefined : parseRfc3339(lease.since);
    const running = lease.state === 'held';
    const seenMs = running ? nowMs : parseRfc3339(lease.lastSeenAt ?? '');
    const toMs = sinceMs === undefined || seenMs === undefined ? undefined : Math.max(sinceMs, seenMs);
    runs.push({
      runId: lease.runId,
      outcome: running ? 'running' : 'interrupted',
      ...(sinceMs === undefined ? {} : { startedAt: iso(sinceMs) }),
      ...(running || toMs === undefined || sinceMs === undefined
        ? {}
        : { endedAt: iso(toMs), seconds: seconds(sinceMs, toMs) }),
      steps:
        sinceMs === undefined
          ? []
          : [
              {
                step: 'running',
                label: running ? 'holding the pool (running now)' : 'held the pool until it was last seen',
                from: iso(sinceMs),
                ...(toMs === undefined ? {} : { to: iso(toMs), seconds: seconds(sinceMs, toMs) }),
              },
            ],
    });
  }
  for (const entry of all) {
    const run = runOf(entry, input, nowMs);
    if (run !== undefined) runs.push(run);
  }
  return {
    versions: all.slice(0, limit),
    runs: boundEnds(runs).slice(0, limit),
    freshness: freshnessSegments(all.slice(0, limit), nowMs),
  };
}

/** The sawtooth of patch age: each usable version from its creation until the next one's (or now). */
function freshnessSegments(entries: readonly VersionEntry[], nowMs: number): FreshnessSegment[] {
  const served = entries
    .filter((entry) => entry.state === 'current' || entry.state === 'usable')
    .flatMap((entry) => {
      const builtMs = entry.builtAt === undefined ? undefined : parseRfc3339(entry.builtAt);
      const patchedMs = entry.patchedAt === undefined ? undefined : parseRfc3339(entry.patchedAt);
      return builtMs === undefined || patchedMs === undefined ? [] : [{ entry, builtMs, patchedMs }];
    })
    .sort((a, b) => a.builtMs - b.builtMs);
  const segments: FreshnessSegment[] = [];
  for (const [index, item] of served.entries()) {
    const next = served[index + 1];
    const toMs = next === undefined ? Math.max(nowMs, item.builtMs) : next.builtMs;
    segments.push({
      version: item.entry.name,
      from: iso(item.builtMs),
      to: iso(toMs),
      ageFromSeconds: seconds(item.patchedMs, item.builtMs),
      ageToSeconds: seconds(item.patchedMs, toMs),
    });
  }
  return segments;
}

/**
 * A finished run whose end was not recorded (the lease names only the last run to let go) had ended by the
 * time the next run started: that start bounds its end. Runs are newest first.
 */
function boundEnds(runs: readonly RunRecord[]): RunRecord[] {
  let laterStartMs: number | undefined;
  return runs.map((run) => {
    const startMs = run.startedAt === undefined ? undefined : parseRfc3339(run.startedAt);
    const bounded =
      run.endedAt === undefined &&
      run.outcome !== 'running' &&
      run.outcome !== 'interrupted' &&
      startMs !== undefined &&
      laterStartMs !== undefined &&
      laterStartMs >= startMs
        ? { ...run, endedBy: iso(laterStartMs), secondsAtMost: seconds(startMs, laterStartMs) }
        : run;
    if (startMs !== undefined) laterStartMs = startMs;
    return bounded;
  });
}
