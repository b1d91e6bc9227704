/**
 * The product's OpenTelemetry metrics, recorded through @opentelemetry/api only: whichever
 * SDK the composition registered (Azure Monitor in the function app, console or OTLP in the CLI, an
 * in-memory reader in tests) exports them; with none, the API's no-op meter drops them.
 *
 * Where they are recorded, given durable replays: from the run events, inside the `reportRunEvents`
 * activity (activities/events.ts), never in orchestrator code. An orchestrator replays its code many
 * times; an activity's result is replayed from history without running it again. An activity is
 * at-least-once, so a worker crash between recording and completing can count a run twice: accepted
 * (rare, and a counter that over-counts by one beats a gauge that replays).
 *
 * Names and units follow the OpenTelemetry semantic conventions' rules: lowercase dotted names under our
 * own `vmssp.` namespace, UCUM units (`s`, `{refresh}`), `error.type` for why a run failed.
 * docs/metrics.md lists them.
 */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';

import { parseRfc3339 } from '../domain/rfc3339.js';
import type { RunEvent, RunEventRecorder } from '../ports/run-events.js';
import { RUN_EVENT_TYPES } from './run-events.js';

export const METRIC_NAMES = {
  freshness: 'vmssp.pool.image.freshness',
  refreshDuration: 'vmssp.refresh.duration',
  phaseDuration: 'vmssp.refresh.phase.duration',
  donorOutOfService: 'vmssp.donor.out_of_service.duration',
  refreshes: 'vmssp.refreshes',
  armThrottled: 'vmssp.arm.throttled_requests',
} as const;

export const METRIC_ATTRIBUTES = {
  cluster: 'vmssp.cluster',
  pool: 'vmssp.pool',
  phase: 'vmssp.refresh.phase',
  outcome: 'vmssp.refresh.outcome',
  errorType: 'error.type',
} as const;

export type RefreshOutcomeAttribute = 'succeeded' | 'failed' | 'refused';

export class RunMetrics implements RunEventRecorder {
  readonly #refreshes;
  readonly #duration;
  readonly #phase;
  readonly #donor;
  /** The patch time of what each pool's new nodes boot with, as the last run reported it. */
  readonly #freshSince = new Map<string, { readonly attributes: Attributes; readonly sinceMs: number }>();

  constructor(
    meter: Meter,
    private readonly now: () => Date,
  ) {
    this.#refreshes = meter.createCounter(METRIC_NAMES.refreshes, {
      description: 'Pool refresh runs that ended, by outcome',
      unit: '{refresh}',
    });
    this.#duration = meter.createHistogram(METRIC_NAMES.refreshDuration, {
      description: 'How long a pool refresh run took, from holding the pool to its end',
      unit: 's',
    });
    this.#phase = meter.createHistogram(METRIC_NAMES.phaseDuration, {
      description: 'How long each phase of a pool refresh run took',
      unit: 's',
    });
    this.#donor = meter.createHistogram(METRIC_NAMES.donorOutOfService, {
      description: 'How long the donor node was out of service (cordon to uncordon)',
      unit: 's',
    });
    // Observed, not set: the age grows between runs, so it is computed at each collection.
    meter
      .createObservableGauge(METRIC_NAMES.freshness, {
        description: 'Age of the patches a node created now in the pool boots with',
        unit: 's',
      })
      .addCallback((result: ObservableResult) => {
        const nowMs = this.now().getTime();
        for (const { attributes, sinceMs } of this.#freshSince.values()) {
          result.observe(Math.max(0, (nowMs - sinceMs) / 1000), attributes);
        }
      });
  }

  /** Records what the run events of one milestone say. */
  record(events: readonly RunEvent[]): void {
    for (const event of events) this.#recordOne(event);
  }

  #recordOne(event: RunEvent): void {
    const data = event.data;
    const pool: Attributes = {
      [METRIC_ATTRIBUTES.cluster]: stringOf(data['cluster']),
      [METRIC_ATTRIBUTES.pool]: stringOf(data['pool']),
    };
    switch (event.type) {
      case RUN_EVENT_TYPES.refreshSucceeded:
      case RUN_EVENT_TYPES.refreshFailed: {
        const failed = event.type === RUN_EVENT_TYPES.refreshFailed;
        const outcome: Attributes = {
          ...pool,
          [METRIC_ATTRIBUTES.outcome]: failed ? 'failed' : 'succeeded',
          ...(failed ? { [METRIC_ATTRIBUTES.errorType]: stringOf(data['errorType']) } : {}),
        };
        this.#refreshes.add(1, outcome);
        const duration = data['durationSeconds'];
        if (typeof duration === 'number') this.#duration.record(duration, outcome);
        for (const phase of phasesOf(data['phases'])) {
          this.#phase.record(phase.seconds, { ...pool, [METRIC_ATTRIBUTES.phase]: phase.phase });
        }
        const donor = data['donorOutOfServiceSeconds'];
        if (typeof donor === 'number') this.#donor.record(donor, pool);
        this.#noteFreshness(pool, data['freshness']);
        return;
      }
      case RUN_EVENT_TYPES.refreshRefused:
        this.#refreshes.add(1, { ...pool, [METRIC_ATTRIBUTES.outcome]: 'refused' });
        return;
      case RUN_EVENT_TYPES.versionRolledBack:
        this.#noteFreshness(pool, data['freshness']);
        return;
      default:
        return;
    }
  }

  #noteFreshness(pool: Attributes, freshness: unknown): void {
    if (typeof freshness !== 'object' || freshness === null) return;
    const since = (freshness as Record<string, unknown>)['since'];
    const sinceMs = typeof since === 'string' ? parseRfc3339(since) : undefined;
    if (sinceMs === undefined) return;
    const key = `${String(pool[METRIC_ATTRIBUTES.cluster])}/${String(pool[METRIC_ATTRIBUTES.pool])}`;
    this.#freshSince.set(key, { attributes: pool, sinceMs });
  }
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : 'unknown';
}

function phasesOf(value: unknown): { phase: string; seconds: number }[] {
  if (!Array.isArray(value)) return [];
  const phases: { phase: string; seconds: number }[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { phase, seconds } = entry as Record<string, unknown>;
    if (typeof phase === 'string' && typeof seconds === 'number') phases.push({ phase, seconds });
  }
  return phases;
}
