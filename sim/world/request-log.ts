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

/** One request as it was served, for a listener (`subscribe`). */
export interface LoggedRequest {
  api: 'arm' | 'kube';
  operation: string;
  status: number;
  /**
   * ARM: the method and the path with its query, `api-version` left out; Kubernetes: the method and the
   * path (whose version a test can check, e.g. `cluster.x-k8s.io/v1beta1`) and its query, when it has
   * one (`?labelSelector=…&limit=500`: a bench tells a pool's pages from a listing of every node).
   */
  target?: { method: string; path: string; query?: string };
}

export interface WorldRequestLog extends RequestLog {
  /** Requests matching every given field (all requests when none is given). */
  count(filter?: { api?: 'arm' | 'kube'; operation?: string; status?: number }): number;
  total(): number;
  snapshot(): RequestLogSnapshot;
  reset(): void;
  /** Calls `listener` after each request is counted, in the order they were served; returns the unsubscribe. */
  subscribe(listener: (request: LoggedRequest) => void): () => void;
}

export function createRequestLog(): WorldRequestLog {
  const counts = new Map<string, RequestCount>();
  const listeners = new Set<(request: LoggedRequest) => void>();

  function entries(): RequestCount[] {
    return [...counts.values()]
      .map((entry) => ({ ...entry }))
      .sort(
        (a, b) => a.api.localeCompare(b.api) || a.operation.localeCompare(b.operation) || a.status - b.status,
      );
  }

  const log: WorldRequestLog = {
    record(api, operation, status, target) {
      const key = `${api}\u0000${operation}\u0000${status}`;
      const entry = counts.get(key);
      if (entry) entry.count += 1;
      else counts.set(key, { api, operation, status, count: 1 });
      for (const listener of [...listeners])
        listener({ api, operation, status, ...(target === undefined ? {} : { target }) });
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
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
  return log;
}
