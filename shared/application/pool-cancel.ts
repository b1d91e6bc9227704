/**
 * A cancel asked through the pool's lease (`vmss-prototype cancel`, from any machine; pool-lease.ts
 * `requestPoolCancel`), seen at every activity boundary of the run that holds the pool.
 *
 * The run does not spend an activity of its own on it: every activity it calls while it may still be
 * cancelled carries the lease to read (`withCancelWatch`), and reads it first — one GET — before it does
 * its work. A cancel asked there answers `CANCEL_REQUESTED` instead, with nothing done: the run stops
 * before the step it was about to take. The read is recorded with the activity's result, so the run
 * stays deterministic on replay. The same read serves the activity's fence (activity-lease-read.ts): one
 * lease GET per activity, and none for the activity right after a renewal of the lease at its boundary,
 * which has just read it (functions/orchestrations/call.ts). A lease that cannot be read (the API server is away) asks nothing: the
 * activity does its work, and the next one reads again. The read is waited for a few seconds at most, so
 * that an API server that does not answer does not hold up a step that needs only Azure.
 */
import { z } from 'zod';

import { LEASE_ANNOTATIONS, parseHolder, type PoolLease } from '../domain/ownership.js';
import type { RefreshDependencies } from './refresh-dependencies.js';

/** The failure code of an activity that found a cancel asked on the lease (its message: the reason). */
export const CANCEL_REQUESTED = 'CancelRequested';

/** Which lease to read, and the run that must hold it for its cancel request to be this run's. */
export interface CancelWatch {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
  readonly runId: string;
}

/** How long an activity waits for the lease before it does its work anyway (ms). */
export const LEASE_READ_WAIT_MS = 5_000;

/** The field of an activity's input that carries the watch (no activity's own input has it). */
const FIELD = 'vmsspCancelWatch';

const WatchSchema = z.object({
  cluster: z.string().min(1),
  namespace: z.string().min(1),
  name: z.string().min(1),
  runId: z.string().min(1),
});

/** The activity input with the lease to read first. */
export function withCancelWatch<Input>(input: Input, watch: CancelWatch): Input {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return { ...input, [FIELD]: { ...watch } };
}

/** Splits an activity's input into its own input and the watch it carries, if any. */
export function splitCancelWatch(input: unknown): { readonly input: unknown; readonly watch?: CancelWatch } {
  if (typeof input !== 'object' || input === null || !(FIELD in input)) return { input };
  const { [FIELD]: carried, ...rest } = input as Record<string, unknown>;
  const watch = WatchSchema.safeParse(carried);
  return watch.success ? { input: rest, watch: watch.data } : { input: rest };
}

/**
 * The cancel asked on the lease for the run it names, or undefined: none asked, the lease is another
 * run's (its request is not this run's), or the lease could not be read within `waitMs`.
 */
export async function cancelAskedOn(
  deps: RefreshDependencies,
  watch: CancelWatch,
  waitMs = LEASE_READ_WAIT_MS,
  readLease: () => Promise<PoolLease | undefined> = async () =>
    (await deps.cluster(watch.cluster)).kube.leases.get(watch.namespace, watch.name),
): Promise<string | undefined> {
  const read = async (): Promise<string | undefined> => {
    try {
      const lease = await readLease();
      if (lease === undefined || parseHolder(lease.holder)?.runId !== watch.runId) return undefined;
      return lease.annotations[LEASE_ANNOTATIONS.cancelRequested];
    } catch {
      return undefined;
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  try {
    return await Promise.race([read(), late]);
  } finally {
    clearTimeout(timer);
  }
}
