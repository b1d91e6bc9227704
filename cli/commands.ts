/**
 * The CLI commands: each runs one of the product's orchestrations through the local runner and
 * returns a result for the printer. Instance ids are the same deterministic ids the function app
 * uses, so a run interrupted here can be resumed with --resume.
 */
import { randomUUID } from 'node:crypto';

import { outputOf } from '../functions/orchestration.js';
import { orchestrations } from '../functions/orchestrations/index.js';
import { runStatusOf } from '../functions/orchestrations/run-status.js';
import {
  clusterInstanceId,
  planInstanceId,
  poolInstanceId,
  releaseInstanceId,
  retireInstanceId,
  rollbackInstanceId,
} from '../shared/application/orchestration-ids.js';
import { poolScope } from '../shared/application/pool-holdings.js';
import { requestPoolCancel } from '../shared/application/pool-lease.js';
import type { PoolStatus, UnreadablePool } from '../shared/application/pool-status.js';
import type {
  ClusterRefreshResult,
  PoolRefreshResult,
  PoolRollbackResult,
  ReleasePoolResult,
} from '../shared/application/refresh-contracts.js';
import type { PoolRetirementResult } from '../shared/application/retirement-contracts.js';
import { definedOnly } from '../shared/domain/optional.js';
import type { CliOptions } from './args.js';
import { UsageError } from './args.js';
import { type CaptureSummary, captureSummaryOf } from './capture-summary.js';
import { goneHolderOf } from './dead-holder.js';
import type { DoctorResult } from './doctor.js';
import { endRecordedRun, settleBeforeStart } from './recorded-runs.js';
import { createFileStore, type OrchestrationStatus } from './runner/index.js';
import type { Session } from './session.js';

export interface StatusResult {
  readonly kind: 'status';
  readonly clusters: readonly {
    readonly cluster: string;
    readonly pools: readonly PoolStatus[];
    /** Pools whose status could not be read (their scale set is gone…), with why. */
    readonly unreadable: readonly UnreadablePool[];
  }[];
}

export interface RefreshResult {
  readonly kind: 'plan' | 'refresh';
  readonly clusters: readonly ClusterRefreshResult[];
  /** plan: how each pool it would refresh would be captured, and whether auto fell back from live. */
  readonly captures?: readonly CaptureSummary[];
  /** Runs that did not complete: instance id and why. */
  readonly failures: readonly { readonly instanceId: string; readonly message: string }[];
}

export interface RollbackResult {
  readonly kind: 'rollback';
  readonly pools: readonly PoolRollbackResult[];
  readonly failures: readonly { readonly instanceId: string; readonly message: string }[];
}

export interface RetireResult {
  readonly kind: 'retire';
  readonly pools: readonly PoolRetirementResult[];
  readonly failures: readonly { readonly instanceId: string; readonly message: string }[];
}

export interface ReleaseResult {
  readonly kind: 'release';
  readonly dryRun: boolean;
  readonly pools: readonly ReleasePoolResult[];
  readonly failures: readonly { readonly instanceId: string; readonly message: string }[];
}

export interface CancelResult {
  readonly kind: 'cancel';
  readonly pools: readonly {
    readonly cluster: string;
    readonly pool: string;
    readonly outcome: 'requested' | 'not-running';
    readonly detail: string;
  }[];
}

export type CommandResult =
  StatusResult | RefreshResult | ReleaseResult | CancelResult | DoctorResult | RollbackResult | RetireResult;

function clustersOf(session: Session, options: CliOptions): string[] {
  const names = session.composition.dependencies.clusterNames;
  if (options.cluster === undefined) return [...names];
  if (!names.includes(options.cluster)) {
    throw new UsageError(`--cluster ${options.cluster} is not configured: use one of ${names.join(', ')}`);
  }
  return [options.cluster];
}

/** A unique suffix for read-only runs (status, plan) so they never collide with a running refresh. */
function runSuffix(): string {
  return new Date().toISOString().replaceAll(/[^0-9]/g, '');
}

function failureMessage(status: OrchestrationStatus): string {
  return status.failure?.ErrorMessage ?? `the run ended ${status.runtimeStatus}`;
}

export async function runCommand(session: Session, options: CliOptions): Promise<CommandResult> {
  const clusters = clustersOf(session, options);
  switch (options.command) {
    case 'doctor': {
      // Only doctor reads role assignments and probes secrets: its modules load for it alone.
      const { runDoctor } = await import('./doctor.js');
      return runDoctor(session, options);
    }
    case 'status': {
      const results = [];
      for (const cluster of clusters) {
        const status = await session.runner.startOrchestration(
          orchestrations.clusterStatus,
          { cluster },
          `status:${cluster}:${runSuffix()}`,
        );
        const read = outputOf(orchestrations.clusterStatus, status);
        if (read === undefined) {
          throw new Error(`reading status of cluster ${cluster}: ${failureMessage(status)}`);
        }
        results.push({ cluster, pools: read.pools, unreadable: read.unreadable });
      }
      return { kind: 'status', clusters: results };
    }
    case 'rollback': {
      const pool = options.pool;
      if (pool === undefined) throw new UsageError('rollback needs --pool', 'rollback');
      if (clusters.length > 1) {
        throw new UsageError(
          `rollback changes one pool: give --cluster (configured: ${clusters.join(', ')})`,
          'rollback',
        );
      }
      const pools: PoolRollbackResult[] = [];
      const failures: { instanceId: string; message: string }[] = [];
      for (const cluster of clusters) {
        const input = {
          cluster,
          pool,
          trigger: 'cli',
          runSeed: randomUUID(),
          ...definedOnly({ to: options.to }),
          ...(options.dryRun ? { dryRun: true } : {}),
        };
        const instanceId = options.dryRun
          ? rollbackInstanceId(cluster, pool, runSuffix())
          : rollbackInstanceId(cluster, pool);
        const status = await session.runner.startOrchestration(
          orchestrations.rollbackPool,
          input,
          instanceId,
        );
        const output = outputOf(orchestrations.rollbackPool, status);
        if (output !== undefined) pools.push(output);
        else failures.push({ instanceId, message: failureMessage(status) });
      }
      return { kind: 'rollback', pools, failures };
    }
    case 'retire': {
      const pool = options.pool;
      if (pool === undefined) throw new UsageError('retire needs --pool', 'retire');
      if (clusters.length > 1) {
        throw new UsageError(
          `retire changes one pool: give --cluster (configured: ${clusters.join(', ')})`,
          'retire',
        );
      }
      const pools: PoolRetirementResult[] = [];
      const failures: { instanceId: string; message: string }[] = [];
      for (const cluster of clusters) {
        const input = {
          cluster,
          pool,
          trigger: 'cli',
          runSeed: randomUUID(),
          ...definedOnly({ generation: options.generation }),
          ...(options.dryRun ? { dryRun: true } : {}),
        };
        // A dry run changes nothing: an instance of its own, beside whatever runs.
        const instanceId = options.dryRun
          ? retireInstanceId(cluster, pool, runSuffix())
          : retireInstanceId(cluster, pool);
        const status = await session.runner.startOrchestration(orchestrations.retirePool, input, instanceId);
        const output = outputOf(orchestrations.retirePool, status);
        if (output !== undefined) pools.push(output);
        else failures.push({ instanceId, message: failureMessage(status) });
      }
      return { kind: 'retire', pools, failures };
    }
    case 'release': {
      const pools: ReleasePoolResult[] = [];
      const failures: { instanceId: string; message: string }[] = [];
      for (const cluster of clusters) {
        const pool = options.pool ?? '';
        // A CLI run on this machine whose process is gone is taken over at once (cli/dead-holder.ts).
        const holderGone = options.force ? undefined : await goneHolderOf(session, cluster, pool);
        const input = {
          cluster,
          pool,
          trigger: 'cli',
          runSeed: randomUUID(),
          ...(options.dryRun ? { dryRun: true } : {}),
          ...(options.force ? { force: true } : {}),
          ...definedOnly({ holderGone }),
        };
        const instanceId = releaseInstanceId(cluster, pool);
        const status = await session.runner.startOrchestration(orchestrations.releasePool, input, instanceId);
        const output = outputOf(orchestrations.releasePool, status);
        if (output !== undefined) pools.push(output);
        else failures.push({ instanceId, message: failureMessage(status) });
        if (!options.dryRun && (output?.outcome === 'released' || output?.outcome === 'nothing-left')) {
          // The run it gave back is over: its record in the state dir says so, and `refresh` just starts.
          await endRecordedRun(
            createFileStore(options.stateDir),
            poolInstanceId(cluster, pool),
            `its pool was given back by vmss-prototype release (${output.outcome})`,
            session.composition.dependencies.now(),
          );
        }
      }
      return { kind: 'release', dryRun: options.dryRun, pools, failures };
    }
    case 'cancel': {
      const pools: CancelResult['pools'][number][] = [];
      for (const cluster of clusters) {
        const pool = options.pool ?? '';
        const handle = await session.composition.dependencies.cluster(cluster);
        const scope = await poolScope(handle, pool);
        const reason = options.reason ?? 'cancelled with vmss-prototype cancel';
        // The run reads the lease before each of its steps (functions/orchestrations/cancel.ts).
        const outcome = await requestPoolCancel(
          handle.kube,
          scope.lease,
          reason,
          session.composition.dependencies.now(),
        );
        pools.push(
          outcome.kind === 'requested'
            ? {
                cluster,
                pool,
                outcome: 'requested',
                detail:
                  `asked ${outcome.description} to stop: it stops before its next step, gives back what it ` +
                  'holds (node, snapshot, canary, unpublished version) and ends as failed saying what it gave ' +
                  'back; a run whose version is already published finishes the change in flight and says ' +
                  'where the pool stands',
              }
            : {
                cluster,
                pool,
                outcome: 'not-running',
                detail:
                  `no live run holds pool ${pool}; if a run was interrupted, ` +
                  `\`vmss-prototype release --pool ${pool}\` gives back what it left`,
              },
        );
      }
      return { kind: 'cancel', pools };
    }
    case 'plan':
    case 'refresh': {
      const dryRun = options.command === 'plan';
      const results: ClusterRefreshResult[] = [];
      const failures: { instanceId: string; message: string }[] = [];
      if (options.resume !== undefined) {
        const status = await session.runner.resume(options.resume);
        collect(status, options.resume, results, failures);
        return { kind: 'refresh', clusters: results, failures };
      }
      for (const cluster of clusters) {
        if (options.pool !== undefined) {
          const input = {
            cluster,
            pool: options.pool,
            trigger: 'cli',
            runSeed: randomUUID(),
            ...definedOnly({ node: options.node }),
            ...(dryRun ? { dryRun: true } : {}),
          };
          const instanceId = dryRun
            ? planInstanceId(cluster, options.pool, runSuffix())
            : poolInstanceId(cluster, options.pool);
          if (!dryRun) await settle(session, cluster, instanceId);
          const status = await session.runner.startOrchestration(
            orchestrations.refreshPool,
            input,
            instanceId,
          );
          collect(status, instanceId, results, failures, cluster, options.pool);
        } else {
          const instanceId = dryRun
            ? planInstanceId(cluster, undefined, runSuffix())
            : clusterInstanceId(cluster);
          if (!dryRun) await settle(session, cluster, instanceId);
          const status = await session.runner.startOrchestration(
            orchestrations.refreshCluster,
            { cluster, trigger: 'cli', runSeed: randomUUID(), ...(dryRun ? { dryRun: true } : {}) },
            instanceId,
          );
          collect(status, instanceId, results, failures, cluster);
        }
      }
      if (!dryRun) return { kind: 'refresh', clusters: results, failures };
      const captures = results.flatMap((cluster) => cluster.pools.flatMap((p) => captureSummaryOf(p) ?? []));
      return { kind: 'plan', clusters: results, captures, failures };
    }
  }
}

/**
 * Before a refresh starts an instance: refused, with what to run next, while an earlier run of it still
 * runs or was interrupted holding its pool; the record of one that holds nothing any more is closed.
 */
async function settle(session: Session, cluster: string, instanceId: string): Promise<void> {
  const note = await settleBeforeStart(session, session.runs, cluster, instanceId);
  if (note !== undefined) process.stderr.write(`${note}\n`);
}

/** Files the output of a finished run under its cluster; a failed run becomes a failure entry. */
function collect(
  status: OrchestrationStatus,
  instanceId: string,
  results: ClusterRefreshResult[],
  failures: { instanceId: string; message: string }[],
  cluster?: string,
  pool?: string,
): void {
  if (status.runtimeStatus !== 'Completed') {
    const message = failureMessage(status);
    failures.push({ instanceId, message });
    if (cluster !== undefined && pool !== undefined) {
      const failed: PoolRefreshResult = {
        cluster,
        pool,
        outcome: 'failed',
        reason: message,
        failure: { step: stepOf(status), message },
      };
      results.push({ cluster, pools: [failed] });
    }
    return;
  }
  // A refresh of a cluster or of one pool (a resumed run is either).
  const ofCluster = outputOf(orchestrations.refreshCluster, status);
  if (ofCluster !== undefined) {
    results.push(ofCluster);
    return;
  }
  const ofPool = outputOf(orchestrations.refreshPool, status);
  if (ofPool !== undefined) {
    results.push({ cluster: ofPool.cluster, pools: [ofPool] });
    return;
  }
  failures.push({ instanceId, message: `instance ${instanceId} is a ${status.name} run, not a refresh` });
}

function stepOf(status: OrchestrationStatus): string {
  return runStatusOf(status.customStatus).step ?? 'unknown';
}
