/**
 * What a run tells the outside world: the CloudEvents the orchestrations emit at their
 * milestones, built here from the runs' own results. Pure: the orchestrators call these with their
 * deterministic time and ids, so a replay builds the very same events (same ids: Event Grid subscribers
 * and our own retries dedupe on them). docs/events.md documents every type and its data.
 *
 * Only named, non-secret fields are copied into `data` (names, versions, counts, seconds, reasons the
 * product itself wrote); never a setting, a pod spec, a token or anything read from a cluster's secrets.
 */
import type { Freshness } from '../domain/freshness.js';
import { definedOnly } from '../domain/optional.js';
import type { RunEvent } from '../ports/run-events.js';
import type { PoolRefreshResult, PoolRollbackResult } from './refresh-contracts.js';
import { redactText } from './sensitive-text.js';

const PREFIX = 'io.vmss-prototype';

export const RUN_EVENT_TYPES = {
  refreshStarted: `${PREFIX}.refresh.started`,
  refreshSucceeded: `${PREFIX}.refresh.succeeded`,
  refreshFailed: `${PREFIX}.refresh.failed`,
  refreshRefused: `${PREFIX}.refresh.refused`,
  versionPublished: `${PREFIX}.version.published`,
  versionRejected: `${PREFIX}.version.rejected`,
  versionRolledBack: `${PREFIX}.version.rolled-back`,
  nodeReleased: `${PREFIX}.node.released`,
} as const;

export type RunEventType = (typeof RUN_EVENT_TYPES)[keyof typeof RUN_EVENT_TYPES];

/** How long each phase of a run took (simulated or real seconds, from the orchestration's clock). */
export interface PhaseTiming {
  readonly phase: string;
  readonly seconds: number;
}

/** Where an event comes from: one pool of one cluster. */
export function poolSource(cluster: string, pool: string): string {
  return `/clusters/${encodeURIComponent(cluster)}/pools/${encodeURIComponent(pool)}`;
}

interface EventBase {
  readonly cluster: string;
  readonly pool: string;
  /**
   * What makes the id unique per run: the run's id, or (for runs that never got one) the orchestration
   * instance and its start time. Deterministic on replay.
   */
  readonly key: string;
  /** The orchestration's current time (deterministic), RFC 3339. */
  readonly time: string;
}

function event(
  base: EventBase,
  type: RunEventType,
  subject: string,
  data: Readonly<Record<string, unknown>>,
): RunEvent {
  return {
    // The type's last two segments keep two events of one run (and one subject) apart.
    id: `${base.key}/${type.slice(PREFIX.length + 1)}/${subject}`,
    type,
    source: poolSource(base.cluster, base.pool),
    subject,
    time: base.time,
    data: { cluster: base.cluster, pool: base.pool, ...data },
  };
}

export function refreshStarted(
  base: EventBase & { readonly runId: string },
  started: { readonly trigger: string; readonly donor: string; readonly scaleSetId: string },
): RunEvent {
  return event(base, RUN_EVENT_TYPES.refreshStarted, `runs/${base.runId}`, {
    runId: base.runId,
    trigger: started.trigger,
    donor: started.donor,
    scaleSetId: started.scaleSetId,
  });
}

export function refreshRefused(base: EventBase, reason: string, trigger: string): RunEvent {
  return event(base, RUN_EVENT_TYPES.refreshRefused, 'runs/refused', { reason, trigger });
}

/** The end of a run that held the pool and did not fail: refreshed, or found nothing to do after all. */
export function refreshSucceeded(
  base: EventBase & { readonly runId: string },
  result: PoolRefreshResult,
  phases: readonly PhaseTiming[],
): RunEvent {
  return event(base, RUN_EVENT_TYPES.refreshSucceeded, `runs/${base.runId}`, {
    runId: base.runId,
    outcome: result.outcome,
    reason: result.reason,
    ...(result.version === undefined ? {} : { version: result.version.versionName }),
    ...definedOnly({ donor: result.donor, donorOutOfServiceSeconds: result.donorOutOfServiceSeconds }),
    ...(result.freshness === undefined ? {} : { freshness: freshnessData(result.freshness) }),
    // A CAPZ pool: how many machines CAPZ replaced with ones from the version, and how long it took.
    ...(result.capzRollout === undefined ? {} : { capzRollout: { ...result.capzRollout } }),
    phases: phases.map(({ phase, seconds }) => ({ phase, seconds })),
    durationSeconds: totalSeconds(phases),
  });
}

/**
 * A run that ended without refreshing the pool because something went wrong: a step failed (`step`,
 * `message`: the product's own failure text) or the canary rejected the version (`errorType`
 * `rejected-by-canary`).
 */
export function refreshFailed(
  base: EventBase & { readonly runId: string },
  failure: {
    readonly errorType: string;
    readonly step?: string;
    readonly message: string;
    readonly donor?: string;
    readonly donorOutOfServiceSeconds?: number;
  },
  phases: readonly PhaseTiming[],
): RunEvent {
  return event(base, RUN_EVENT_TYPES.refreshFailed, `runs/${base.runId}`, {
    runId: base.runId,
    errorType: failure.errorType,
    ...definedOnly({ step: failure.step }),
    message: failure.message,
    ...definedOnly({ donor: failure.donor, donorOutOfServiceSeconds: failure.donorOutOfServiceSeconds }),
    phases: phases.map(({ phase, seconds }) => ({ phase, seconds })),
    durationSeconds: totalSeconds(phases),
  });
}

export function versionPublished(
  base: EventBase & { readonly runId: string },
  version: { readonly versionName: string; readonly id: string },
): RunEvent {
  return event(base, RUN_EVENT_TYPES.versionPublished, `versions/${version.versionName}`, {
    runId: base.runId,
    version: version.versionName,
    imageVersionId: version.id,
  });
}

export function versionRejected(
  base: EventBase & { readonly runId: string },
  version: { readonly versionName: string; readonly id: string },
  reason: string,
): RunEvent {
  return event(base, RUN_EVENT_TYPES.versionRejected, `versions/${version.versionName}`, {
    runId: base.runId,
    version: version.versionName,
    imageVersionId: version.id,
    reason,
  });
}

export function versionRolledBack(base: EventBase, result: PoolRollbackResult): RunEvent {
  return event(base, RUN_EVENT_TYPES.versionRolledBack, `versions/${result.to ?? 'unknown'}`, {
    ...definedOnly({ from: result.from, to: result.to }),
    reason: result.reason,
    rejected: [...result.rejected],
    ...(result.freshness === undefined ? {} : { freshness: freshnessData(result.freshness) }),
  });
}

/** One thing the reaper gave back (a node uncordoned, a marker removed…), as it describes it. */
export function nodeReleased(base: EventBase, action: string, index: number): RunEvent {
  return event(base, RUN_EVENT_TYPES.nodeReleased, `releases/${index}`, { action });
}

function freshnessData(freshness: Freshness): Readonly<Record<string, unknown>> {
  return {
    basis: freshness.basis,
    ...definedOnly({ since: freshness.since, ageSeconds: freshness.ageSeconds }),
  };
}

function totalSeconds(phases: readonly PhaseTiming[]): number {
  return phases.reduce((sum, phase) => sum + phase.seconds, 0);
}

/**
 * The event with every occurrence of a sensitive value (a canary check pod's environment values, which
 * its output or failure message may echo into a reason) and every secret-looking part replaced by
 * `[redacted]`, in every string of its data. Defence in depth: the reasons are scrubbed where a pod's
 * output is first read (`observeCanaries`); the fields are otherwise the product's own texts.
 */
export function redactEvent(event: RunEvent, sensitive: readonly string[]): RunEvent {
  const redact = (value: unknown): unknown => {
    if (typeof value === 'string') return redactText(value, sensitive);
    if (Array.isArray(value)) return value.map(redact);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, redact(entry)]));
    }
    return value;
  };
  return {
    ...event,
    subject: redact(event.subject) as string,
    data: redact(event.data) as Record<string, unknown>,
  };
}
