/**
 * The refresh bench's `--trace-arm`: every ARM request of a run in the order the simulator served it, with
 * the simulated second since the run's start, its status, method and path (shortened: the pool's scale set
 * is `POOL`, the cluster's gallery `GAL`) and the activity (or activities, when several ran at once) that
 * sent it, as the local durable runner reported them. Where a refresh's requests go, request by request.
 */
import type { HistoryEvent } from '../../cli/runner/history.js';
import { HistoryEventType } from '../../cli/runner/history.js';
import type { WorldClock } from '../../sim/world/clock.js';
import type { World } from '../../sim/world/world.js';

export interface ArmTraceEntry {
  readonly index: number;
  /** Simulated seconds since the trace began. */
  readonly atS: number;
  readonly status: number;
  readonly method: string;
  readonly path: string;
  /** The activities running when the request was served, `?` when none (the orchestration's own). */
  readonly activity: string;
}

export interface ArmTracer {
  /** For the runner's `onEvent`: which activities are running. */
  readonly onEvent: (instanceId: string, event: HistoryEvent) => void;
  /** Records the ARM requests from now on, until the returned stop, which gives them. */
  readonly start: (world: World, clock: WorldClock, pool: string) => () => ArmTraceEntry[];
}

/** The path from the resource provider on, the pool and the gallery named by role, as the notes print it. */
export function shortPath(path: string, pool: string): string {
  const provider = /\/providers\/Microsoft\.Compute\//i.exec(path);
  const short = provider === null ? path : path.slice(provider.index + provider[0].length);
  return short
    .split(pool)
    .join('POOL')
    .replace(/galleries\/[^/?]+/i, 'galleries/GAL');
}

export function createArmTracer(): ArmTracer {
  const running = new Map<string, string>();
  return {
    onEvent: (instanceId, event) => {
      if (event.EventType === HistoryEventType.TaskScheduled && event.Name !== undefined)
        running.set(`${instanceId}#${event.EventId}`, event.Name);
      else if (
        (event.EventType === HistoryEventType.TaskCompleted ||
          event.EventType === HistoryEventType.TaskFailed) &&
        event.TaskScheduledId !== undefined
      )
        running.delete(`${instanceId}#${event.TaskScheduledId}`);
    },
    start: (world, clock, pool) => {
      const startMs = clock.nowMs();
      const entries: ArmTraceEntry[] = [];
      const stop = world.log.subscribe((request) => {
        if (request.api !== 'arm') return;
        const names = [...new Set(running.values())];
        const query = request.target?.query;
        entries.push({
          index: entries.length + 1,
          atS: Math.round((clock.nowMs() - startMs) / 1000),
          status: request.status,
          method: request.target?.method ?? 'GET',
          path: shortPath(`${request.target?.path ?? ''}${query === undefined ? '' : `?${query}`}`, pool),
          activity: names.length === 0 ? '?' : names.join(' + '),
        });
      });
      return () => {
        stop();
        return entries;
      };
    },
  };
}

export function printArmTrace(title: string, entries: readonly ArmTraceEntry[]): void {
  console.log(`## ${title}: ${entries.length} requests`);
  for (const entry of entries) {
    console.log(
      `${String(entry.index).padStart(3)} ${String(entry.atS).padStart(5)} ${entry.status} ` +
        `${entry.method.padEnd(6)} ${entry.path.slice(0, 110).padEnd(110)} ${entry.activity}`,
    );
  }
}
