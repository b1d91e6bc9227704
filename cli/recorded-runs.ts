/**
 * The state dir's record of a refresh against the pool's lease (docs/cli.md#after-an-interrupted-run). A
 * record says "Running" from the moment the run starts until its process ends it, so a killed process
 * (SIGKILL, a closed terminal, a second Ctrl-C) leaves one behind. Whether that run still runs is decided by
 * one rule, shared/domain/run-state.ts: only while it holds the pool's live lease and its process is alive.
 * A record of a run that holds nothing any more is ended here, saying why, so that `refresh` just starts;
 * `release` ends the record of the run whose pool it gave back.
 */
import { poolInstanceId } from '../shared/application/orchestration-ids.js';
import { poolScope } from '../shared/application/pool-holdings.js';
import { processHolderOnHost } from '../shared/domain/ownership.js';
import { type HolderLiveness, type RecordedRunState, runState } from '../shared/domain/run-state.js';
import { processIsGone } from './dead-holder.js';
import type { InstanceRecord, InstanceStore } from './runner/index.js';
import type { Session } from './session.js';

const TERMINAL = new Set(['Completed', 'Failed', 'Terminated']);

function isOpen(record: InstanceRecord | undefined): record is InstanceRecord {
  return record !== undefined && !TERMINAL.has(record.runtimeStatus);
}

/** The state of the run recorded as `refresh:<cluster>:<pool>`, from the pool's lease and its holder's pid. */
export async function recordedRunState(
  session: Pick<Session, 'composition'>,
  cluster: string,
  pool: string,
  isGone: (pid: number) => boolean = processIsGone,
): Promise<RecordedRunState> {
  const { dependencies } = session.composition;
  const handle = await dependencies.cluster(cluster);
  const { lease: ref } = await poolScope(handle, pool);
  const lease = await handle.kube.leases.get(ref.namespace, ref.name);
  const now = dependencies.now();
  const holder = processHolderOnHost(lease, now, dependencies.runner);
  const liveness: HolderLiveness = holder === undefined ? 'unknown' : isGone(holder.pid) ? 'gone' : 'alive';
  return runState(lease, poolInstanceId(cluster, pool), liveness, now);
}

/**
 * Marks a recorded run (and its open sub-orchestrations) Terminated with `reason`, when it is still open;
 * true when it was. Written to the store directly: the run's process is gone, nothing replays it.
 */
export async function endRecordedRun(
  store: InstanceStore,
  instanceId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const record = await store.load(instanceId);
  if (!isOpen(record)) return false;
  for (const id of await store.list()) {
    if (id === instanceId) continue;
    const child = await store.load(id).catch(() => undefined);
    if (isOpen(child) && child.parentInstanceId === instanceId) await endRecordedRun(store, id, reason, now);
  }
  await store.save({
    ...record,
    runtimeStatus: 'Terminated',
    output: JSON.stringify(reason),
    inbox: [],
    lastUpdatedTime: now.toISOString(),
  });
  return true;
}

/** The pools whose runs a recorded instance stands for: its own pool, or its open pool children's. */
async function poolsOf(store: InstanceStore, record: InstanceRecord, cluster: string): Promise<string[]> {
  const own = /^refresh:[^:]+:(.+)$/.exec(record.instanceId)?.[1];
  if (own !== undefined) return [own];
  const pools: string[] = [];
  for (const id of await store.list()) {
    const child = await store.load(id).catch(() => undefined);
    if (!isOpen(child) || child.parentInstanceId !== record.instanceId) continue;
    const pool = new RegExp(`^refresh:${cluster}:(.+)$`).exec(id)?.[1];
    if (pool !== undefined) pools.push(pool);
  }
  return pools;
}

/**
 * Before a refresh starts instance `instanceId` of `cluster`: a recorded run that still runs, or was
 * interrupted holding its pool, refuses the start with what to run next; a record of a run that holds
 * nothing any more is ended (the returned line says so) and the refresh starts.
 */
export async function settleBeforeStart(
  session: Pick<Session, 'composition'>,
  store: InstanceStore,
  cluster: string,
  instanceId: string,
  isGone: (pid: number) => boolean = processIsGone,
): Promise<string | undefined> {
  const record = await store.load(instanceId);
  if (!isOpen(record)) return undefined;
  for (const pool of await poolsOf(store, record, cluster)) {
    const state = await recordedRunState(session, cluster, pool, isGone);
    if (state.kind === 'running') {
      throw new Error(
        `refresh of pool ${pool}: run ${state.runId} (instance ${instanceId}) is running: it holds the pool's ` +
          `live lease and its process is alive; wait for it to finish, or stop it with ` +
          `\`vmss-prototype cancel --pool ${pool}\``,
      );
    }
    if (state.kind === 'interrupted') {
      throw new Error(
        `refresh of pool ${pool}: run ${state.runId} (instance ${instanceId}) was interrupted holding the pool ` +
          `(its process is gone); either continue it with \`vmss-prototype refresh --resume ${instanceId}\` ` +
          `(same settings and --state-dir), or give back what it holds with ` +
          `\`vmss-prototype release --pool ${pool}\` and then run this refresh again: it starts at once`,
      );
    }
  }
  const now = session.composition.dependencies.now();
  const reason = 'it held its pool no longer (given back, or its lease expired); a new refresh replaced it';
  return (await endRecordedRun(store, instanceId, reason, now))
    ? `the earlier run ${instanceId} was interrupted and holds nothing any more: its record is closed, a new run starts`
    : undefined;
}
