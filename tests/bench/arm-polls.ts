/**
 * Which ARM requests of a run were polls, judged request by request from the simulator's request log in
 * the order they were served:
 *
 * - a read of an asynchronous operation's status (`…/operations/…`, `…/capsOperations/…`);
 * - a read of a resource (or of the list holding it) that a write answered `201 Created` or `202
 *   Accepted` started a long-running operation on, from that write until the run's next write after it
 *   read it (the run has moved on) or the next write to that resource
 *   (https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations);
 * - a repeated wait: the same read (path and query) as the run's request just before it.
 *
 * Everything else counts: every write, action and delete, and every other read.
 */

/** One ARM request as the simulator served it. */
export interface ArmRequest {
  /** The RBAC action (`Microsoft.Compute/snapshots/read`), or `METHOD path` for a path with no route. */
  readonly operation: string;
  readonly method: string;
  /** Path and query, without `api-version`. */
  readonly path: string;
  readonly status: number;
}

export interface ArmPollSplit {
  readonly total: number;
  /** `total` less the three kinds below. */
  readonly excludingPolls: number;
  /** Reads of an asynchronous operation's status. */
  readonly operationStatusReads: number;
  /** Reads of a resource, or of its list, while a long-running operation the run started on it went. */
  readonly resourcePolls: number;
  /** The same read as the run's request just before it. */
  readonly repeatedReads: number;
}

/** What `excludingPolls` leaves out, for people reading the figures. */
export const EXCLUDED_AS_POLLS =
  'operation-status reads; reads of a resource (or its list) after a write answered 201/202 started a ' +
  'long-running operation on it, until the next write; a read repeating the request just before it';

function isRead(request: ArmRequest): boolean {
  return request.method === 'GET' || request.method === 'HEAD';
}

function isOperationStatusRead(request: ArmRequest): boolean {
  return isRead(request) && /operations\/read$/i.test(request.operation);
}

/** The resource a request acts on, lower case, no query: a POST action's is its parent (`…/vm/0/start` → `…/vm/0`). */
function resourceOf(request: ArmRequest): string {
  const path = (request.path.split('?')[0] ?? '').toLowerCase().replace(/\/+$/, '');
  return request.method === 'POST' ? parentOf(path) : path;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

export function splitArmPolls(requests: readonly ArmRequest[]): ArmPollSplit {
  let operationStatusReads = 0;
  let resourcePolls = 0;
  let repeatedReads = 0;
  /** Resources a long-running operation of the run may still be going on → read since its write. */
  const running = new Map<string, boolean>();
  let previous: ArmRequest | undefined;
  for (const request of requests) {
    if (isOperationStatusRead(request)) {
      operationStatusReads += 1;
    } else if (isRead(request)) {
      const resource = resourceOf(request);
      const polled = [...running.keys()].filter((id) => id === resource || parentOf(id) === resource);
      if (polled.length > 0) {
        resourcePolls += 1;
        for (const id of polled) running.set(id, true);
      } else if (
        previous !== undefined &&
        isRead(previous) &&
        previous.path.toLowerCase() === request.path.toLowerCase()
      ) {
        repeatedReads += 1;
      }
    } else {
      const written = resourceOf(request);
      for (const [id, read] of running) if (read || id === written) running.delete(id);
      if (request.status === 201 || request.status === 202) running.set(written, false);
    }
    previous = request;
  }
  return {
    total: requests.length,
    excludingPolls: requests.length - operationStatusReads - resourcePolls - repeatedReads,
    operationStatusReads,
    resourcePolls,
    repeatedReads,
  };
}
