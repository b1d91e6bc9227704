/**
 * Is the run holding a pool a CLI run on this machine whose process is gone (killed, closed terminal, a
 * second Ctrl-C)? Only this machine can tell: its pid no longer runs. Then `release` need not wait for
 * the run's lease to expire: it takes the pool over at once, as `--force` would, but only from that run
 * (ReleasePoolInput.holderGone). A function-app holder, another machine's run, or a process that still runs
 * (or that this user may not signal: it exists) is never judged gone.
 */
import { poolScope } from '../shared/application/pool-holdings.js';
import type { HolderGone } from '../shared/application/refresh-contracts.js';
import { processHolderOnHost } from '../shared/domain/ownership.js';
import type { Session } from './session.js';

/** True only when no process has this pid (`kill(pid, 0)` answers ESRCH). */
export function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * The pool's holder when it is a CLI run on this machine (the session's runner host) whose process is
 * gone; undefined otherwise, and when the pool or its lease cannot be read (the release then says why).
 */
export async function goneHolderOf(
  session: Pick<Session, 'composition'>,
  cluster: string,
  pool: string,
  isGone: (pid: number) => boolean = processIsGone,
): Promise<HolderGone | undefined> {
  const { dependencies } = session.composition;
  try {
    const handle = await dependencies.cluster(cluster);
    const { lease: ref } = await poolScope(handle, pool);
    const lease = await handle.kube.leases.get(ref.namespace, ref.name);
    const holder = processHolderOnHost(lease, dependencies.now(), dependencies.runner);
    return holder !== undefined && isGone(holder.pid) ? holder : undefined;
  } catch {
    return undefined;
  }
}
