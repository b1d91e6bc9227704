/**
 * Checks before any run starts, all of them reads: what the command line names exists (the run to
 * resume, the pool in every cluster the command covers), so that a typo is a usage error (exit 2) rather
 * than a failed run; and against real Azure, that a token can be had and each cluster's Key Vault
 * secrets can be read, so a missing login or a closed vault is reported in seconds with its fix, not
 * after a run's activity retries; and before a refresh, every Azure action and Kubernetes permission it
 * needs (the checks of `doctor`), so a missing one stops it before anything is cordoned.
 */
import { createAzureCredential } from '../shared/adapters/azure/credentials.js';
import { listPoolsOfCluster, namedPool } from '../shared/application/pool-lookup.js';
import type { ConfiguredPool } from '../shared/application/refresh-dependencies.js';
import type { CliOptions } from './args.js';
import { UsageError } from './args.js';
import { requirePermissions } from './doctor.js';
import { endRecordedRun, recordedRunState } from './recorded-runs.js';
import type { OrchestrationStatus } from './runner/index.js';
import type { Session } from './session.js';

const ARM_SCOPE = 'https://management.azure.com/.default';
const TERMINAL = new Set(['Completed', 'Failed', 'Terminated']);

export async function checkPreconditions(session: Session, options: CliOptions): Promise<void> {
  if (options.resume !== undefined) {
    await checkResumable(session, options.resume, options.stateDir);
  }
  // doctor reports an unusable credential or vault as one of its findings instead.
  const simulated =
    options.sim !== undefined ||
    options.simConnect !== undefined ||
    session.composition.settings.simulator !== undefined;
  if (options.command !== 'doctor' && !simulated) {
    await checkAzureAccess(session, options);
  }
  let named: ReadonlyMap<string, ConfiguredPool> | undefined;
  if (options.command !== 'doctor' && options.pool !== undefined && options.resume === undefined) {
    named = await checkPool(session, options);
  }
  // Before a refresh's first write: every permission it needs, named when missing (cli/doctor.ts).
  if (options.command === 'refresh' && options.resume === undefined)
    await requirePermissions(session, options, named);
}

/**
 * The Azure token and every cluster's Key Vault reads (its CA; the service-account token is read with
 * the first Kubernetes call). The cluster handles are cached by the composition, so the run reuses them.
 */
async function checkAzureAccess(session: Session, options: CliOptions): Promise<void> {
  const credential = createAzureCredential(session.composition.settings.azureClientId);
  await credential.getToken(ARM_SCOPE);
  for (const cluster of clustersInScope(session, options)) {
    await session.composition.dependencies.cluster(cluster);
  }
}

function clustersInScope(session: Session, options: CliOptions): readonly string[] {
  const names = session.composition.dependencies.clusterNames;
  return options.cluster === undefined ? names : names.filter((name) => name === options.cluster);
}

async function checkResumable(session: Session, instanceId: string, stateDir: string): Promise<void> {
  const status = await session.runner.getStatus(instanceId);
  if (status !== undefined) {
    await checkNotOver(session, status, stateDir);
    return;
  }
  const runs = (await session.runner.listInstances())
    .filter((status) => status.parentInstanceId === undefined)
    .sort((a, b) => b.lastUpdatedTime.getTime() - a.lastUpdatedTime.getTime())
    .slice(0, 5)
    .map((status) => `${status.instanceId} (${status.runtimeStatus})`);
  throw new UsageError(
    `--resume ${instanceId}: no run with this id in ${stateDir}` +
      (runs.length === 0
        ? ' (it holds none: give the --state-dir the run was started with)'
        : `; the latest there: ${runs.join(', ')}`),
    'refresh',
  );
}

/**
 * A run that is over (finished, or given back by `release`) has nothing to resume, nor has one whose pool
 * lease it no longer holds (shared/domain/run-state.ts): say so, and what starts a new one.
 */
async function checkNotOver(session: Session, status: OrchestrationStatus, stateDir: string): Promise<void> {
  const { instanceId } = status;
  const match = /^refresh:([^:]+):(.+)$/.exec(instanceId);
  const [cluster, pool] = [match?.[1], match?.[2]];
  const again =
    pool === undefined
      ? '`vmss-prototype refresh` starts a new one'
      : `\`vmss-prototype refresh --pool ${pool}\` starts a new one at once`;
  if (TERMINAL.has(status.runtimeStatus)) {
    const why = typeof status.output === 'string' ? `: ${status.output}` : '';
    throw new UsageError(
      `--resume ${instanceId}: that run is over (${status.runtimeStatus}${why}); ${again}`,
      'refresh',
    );
  }
  if (cluster === undefined || pool === undefined) return;
  const state = await recordedRunState(session, cluster, pool);
  if (state.kind !== 'ended') return;
  const reason = `the run holds pool ${pool} no longer (${state.why === 'free' ? 'given back' : state.why === 'expired' ? 'its lease expired' : 'another run holds it'})`;
  await endRecordedRun(session.runs, instanceId, reason, session.composition.dependencies.now());
  throw new UsageError(
    `--resume ${instanceId}: nothing to continue in ${stateDir}: ${reason}; ${again}`,
    'refresh',
  );
}

/**
 * The pool the options name, in every cluster in scope (by cluster), found without listing the cluster's
 * nodes when its scale set is in the cluster's own resource group (namedPool); the listing of every node
 * is read only to name the pools there are when it is missing.
 */
async function checkPool(session: Session, options: CliOptions): Promise<Map<string, ConfiguredPool>> {
  const found = new Map<string, ConfiguredPool>();
  const pool = options.pool;
  if (pool === undefined) return found;
  const clusters = clustersInScope(session, options);
  for (const cluster of clusters) {
    const handle = await session.composition.dependencies.cluster(cluster);
    const named = await namedPool(handle, pool);
    if (named !== undefined) {
      found.set(cluster, named);
      continue;
    }
    const pools = (await listPoolsOfCluster(handle)).map((candidate) => candidate.name);
    const hint = clusters.length > 1 ? '; give --cluster for a pool of one cluster only' : '';
    throw new UsageError(
      `--pool ${pool}: cluster ${cluster} has no such pool; its pools are ${pools.join(', ') || 'none (no node belongs to a scale set)'}${hint}`,
      options.command,
    );
  }
  return found;
}
