/**
 * The pool lease's lasting record of how many nodes the open retirement window has retired
 * (LEASE_ANNOTATIONS.retiredInWindow, issue 31): `<window opened at, RFC 3339> <count>`, e.g.
 * `2026-11-28T02:00:00.000Z 1`. The count belongs to the window that opened then: once another window
 * is open, the record counts nothing. Pure.
 */
import { parseRfc3339 } from './rfc3339.js';

/** How many nodes the window that opened at `openedAt` has retired, by the record; 0 for any other. */
export function retiredInWindow(record: string | undefined, openedAt: string): number {
  const [at = '', count] = (record ?? '').trim().split(/\s+/);
  const parsed = Number(count);
  const recordMs = parseRfc3339(at);
  const same = recordMs !== undefined && recordMs === parseRfc3339(openedAt);
  return same && Number.isInteger(parsed) && parsed >= 0 ? parsed : 0;
}

/** The record after one more node retired in the window that opened at `openedAt`. */
export function retiredInWindowRecord(current: string | undefined, openedAt: string): string {
  return `${openedAt} ${retiredInWindow(current, openedAt) + 1}`;
}
