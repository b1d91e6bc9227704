/**
 * The pool lease's lasting record of which nodes the open retirement window has retired
 * (LEASE_ANNOTATIONS.retiredInWindow): `<window opened at, RFC 3339> <node>,<node>…`, e.g.
 * `2026-11-28T02:00:00.000Z k8s-pool2-vmss000002`. Names, so that recording one twice (a retried
 * activity) counts it once. The record belongs to the window that opened then: once another window is
 * open, it counts nothing. Pure.
 */
import { parseRfc3339 } from './rfc3339.js';

function nodesOf(record: string | undefined, openedAt: string): string[] {
  const [at = '', nodes = ''] = (record ?? '').trim().split(/\s+/);
  const recordMs = parseRfc3339(at);
  if (recordMs === undefined || recordMs !== parseRfc3339(openedAt)) return [];
  return nodes.split(',').filter((node) => node !== '');
}

/** How many nodes the window that opened at `openedAt` has retired, by the record; 0 for any other. */
export function retiredInWindow(record: string | undefined, openedAt: string): number {
  return nodesOf(record, openedAt).length;
}

/** The record after node `node` retired in the window that opened at `openedAt`. */
export function retiredInWindowRecord(current: string | undefined, openedAt: string, node: string): string {
  const nodes = new Set(nodesOf(current, openedAt));
  nodes.add(node);
  return `${openedAt} ${[...nodes].join(',')}`;
}
