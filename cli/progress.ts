/**
 * Live progress of runs on stderr, one line per change of an instance's step: the time, the time since
 * the run started, the instance and its step. With `--json` each change is one JSON object per line
 * (NDJSON) instead, so a pipeline can follow a run of tens of minutes while the result stays on stdout.
 * Times are the runner's clock: simulated time under `--sim`. Never prints orchestration inputs.
 */
import { outputOf } from '../functions/orchestration.js';
import { orchestrations } from '../functions/orchestrations/index.js';
import { runStatusOf } from '../functions/orchestrations/run-status.js';
import { formatDuration } from '../shared/config/duration.js';
import { definedOnly } from '../shared/domain/optional.js';
import type { OrchestrationStatus } from './runner/index.js';

/** One progress event as `--json` writes it (one per line on stderr). */
export interface ProgressEvent {
  readonly event: 'progress';
  /** When the instance reached this step (ISO 8601, UTC; simulated time under --sim). */
  readonly time: string;
  /** Seconds since the first run this command started or resumed. */
  readonly elapsedSeconds: number;
  readonly instanceId: string;
  readonly orchestration: string;
  readonly runtimeStatus: string;
  readonly step: string;
  readonly cluster?: string;
  readonly pool?: string;
  readonly node?: string;
  readonly detail?: string;
}

export interface ProgressOptions {
  /** NDJSON events instead of text lines. */
  readonly json: boolean;
}

/** Where progress is written: stderr, or anything with `write` (tests). */
export interface ProgressStream {
  write(text: string): unknown;
}

export function createProgressPrinter(
  stream: ProgressStream,
  options: ProgressOptions = { json: false },
): (status: OrchestrationStatus) => void {
  const lastStep = new Map<string, string>();
  let startedMs: number | undefined;
  return (status) => {
    const event = progressEventOf(status, () => {
      const createdMs = status.createdTime.getTime();
      startedMs = startedMs === undefined ? createdMs : Math.min(startedMs, createdMs);
      return startedMs;
    });
    const key = `${event.step}|${event.node ?? ''}|${event.detail ?? ''}|${event.runtimeStatus}`;
    if (lastStep.get(status.instanceId) === key) return;
    lastStep.set(status.instanceId, key);
    stream.write(`${options.json ? JSON.stringify(event) : progressLine(event)}\n`);
  };
}

function progressEventOf(status: OrchestrationStatus, runStart: () => number): ProgressEvent {
  const custom = runStatusOf(status.customStatus);
  const finished = status.runtimeStatus !== 'Running' && status.runtimeStatus !== 'Pending';
  const step = finished
    ? status.runtimeStatus.toLowerCase()
    : (custom.step ?? status.runtimeStatus.toLowerCase());
  const at = status.lastUpdatedTime;
  const { cluster, pool, node } = custom;
  const detail = finished ? finishedDetail(status) : custom.detail;
  return {
    event: 'progress',
    time: at.toISOString(),
    elapsedSeconds: Math.max(0, Math.round((at.getTime() - runStart()) / 1000)),
    instanceId: status.instanceId,
    orchestration: status.name,
    runtimeStatus: status.runtimeStatus,
    step,
    ...definedOnly({ cluster, pool, node, detail }),
  };
}

/** What a finished run ended with: its outcome, or the failure. */
function finishedDetail(status: OrchestrationStatus): string | undefined {
  if (status.failure !== undefined) return status.failure.ErrorMessage.split('\n')[0];
  const run =
    outputOf(orchestrations.refreshPool, status) ??
    outputOf(orchestrations.rollbackPool, status) ??
    outputOf(orchestrations.retirePool, status);
  if (run !== undefined) return `${run.outcome}: ${run.reason}`;
  return outputOf(orchestrations.releasePool, status)?.outcome;
}

/** `14:03:12Z  +3m12s  refresh:prod:agents: draining node n1 (2 pods left)` */
export function progressLine(event: ProgressEvent): string {
  const clock = event.time.slice(11, 19);
  const node = event.node === undefined ? '' : ` node ${event.node}`;
  const detail = event.detail === undefined ? '' : ` (${event.detail})`;
  return `${clock}Z  +${formatDuration(event.elapsedSeconds)}  ${event.instanceId}: ${event.step}${node}${detail}`;
}
