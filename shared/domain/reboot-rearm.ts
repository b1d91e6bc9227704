/**
 * When a reboot debounce plans a pool again (docs/design.md#triggers-and-the-event-path). Notices arrive at the reboot,
 * about a minute before the node is Ready again, so the planned refresh can find the rebooted node Ready a
 * little too briefly; instead of waiting for the next timer (hours), the debounce re-arms for the
 * shortfall: it plans again when the first such node becomes a candidate. Pure.
 */
import { parseRfc3339 } from './rfc3339.js';

/**
 * The time to plan again: the earliest `eligibleAt` among nodes that were only Ready too briefly, plus a
 * margin; undefined when there is none, or when it lies more than `maxWaitSeconds` ahead.
 */
export function rearmAt(
  verdicts: readonly { readonly eligibleAt?: string }[],
  now: Date,
  options: { readonly marginSeconds: number; readonly maxWaitSeconds: number },
): Date | undefined {
  const times = verdicts
    .map((verdict) => (verdict.eligibleAt === undefined ? undefined : parseRfc3339(verdict.eligibleAt)))
    .filter((ms): ms is number => ms !== undefined);
  if (times.length === 0) return undefined;
  const at = Math.max(Math.min(...times), now.getTime()) + options.marginSeconds * 1000;
  return at - now.getTime() > options.maxWaitSeconds * 1000 ? undefined : new Date(at);
}
