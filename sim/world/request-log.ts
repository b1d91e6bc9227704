/**
 * Counts the requests the simulator served, per API, operation and status, so tests and benchmarks can
 * check how many calls a refresh costs and how it reacted to throttling.
 */
import type { RequestLog } from '../contracts.js';

export interface RequestCount {
  api: 'arm' | 'kube';
  operation: string;
  status: number;
  count: number;
}

export interface RequestLogSnapshot {
  total: number;
  byApi: Record<'arm' | 'kube', number>;
  /** Sorted by api, operation, status. */
  entries: RequestCount[];
}

export interface WorldRequestLog extends RequestLog {
  /** Requests matching every given field (all requests when none is given). */
  count(filter?: { api?: 'arm' | 'kube'; operation?: string; status?: number }): number;
  total(): number;
  snapshot(): RequestLogSnapshot;
  reset(): void;
}

export function createRequestLog(): WorldRequestLog {
  const counts = new Map<string, RequestCount>();

  function entries(): RequestCount[] {
    return [...counts.values()]
      .map((entry) => ({ ...entry }))
      .sort(
        (a, b) => a.api.localeCompare(b.api) || a.operation.localeCompare(b.operation) || a.status - b.status,
      );
  }

  const log: WorldRequestLog = {
    record(api, operation, status) {
      const key = `${api}\u0000${operation}\u0000${status}`;
      const entry = counts.get(key);
      if (entry) entry.count += 1;
      else counts.set(key, { api, operation, status, count: 1 });
    },
    count(filter = {}) {
      let sum = 0;
      for (const entry of counts.values()) {
        if (filter.api !== undefined && entry.api !== filter.api) continue;
        if (filter.operation !== undefined && entry.operation !== filter.operation) continue;
        if (filter.status !== undefined && entry.status !== filter.status) continue;
        sum += entry.count;
      }
      return sum;
    },
    total() {
      return log.count();
    },
    snapshot() {
      return {
        total: log.count(),
        byApi: { arm: log.count({ api: 'arm' }), kube: log.count({ api: 'kube' }) },
        entries: entries(),
      };
    },
    reset() {
      counts.clear();
    },
  };
  return log;
}
