/**
 * Ctrl-C during `refresh`: the first one asks every run of the command to stop — the cancel
 * event, which a run acts on at its next activity boundary whatever its step
 * (functions/orchestrations/cancel.ts) — and the command waits for them to end: each gives back what it
 * holds and ends failed, saying what it gave back. Runs the command starts afterwards (the next pools of a
 * cluster refresh) are asked as soon as they appear. Once the runs ended, the command reads the world and
 * prints what each one left (left-behind.ts), with the command that gives it back — the truth, not a guess
 * from the step a run was at. A second Ctrl-C exits at once, whatever runs, and says how to continue
 * (`--resume`) or give back (`release`).
 */
import { orchestrations } from '../functions/orchestrations/index.js';
import { runStatusOf } from '../functions/orchestrations/run-status.js';
import { EVENT } from '../shared/application/orchestration-ids.js';
import { definedOnly } from '../shared/domain/optional.js';
import { giveBackAdvice } from './give-back-advice.js';
import type { InterruptedRun } from './left-behind.js';
import type { DurableRunner, OrchestrationStatus } from './runner/index.js';

/** The exit code of an interrupted command (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

/** How often runs started after the first Ctrl-C are looked for (ms). */
const LATE_RUNS_EVERY_MS = 250;

interface PoolRun {
  readonly instanceId: string;
  readonly cluster?: string;
  readonly pool?: string;
  readonly runId?: string;
  readonly topLevel: string;
}

/** The command's pool runs: every refreshPool instance, with where it runs and whether it is active. */
function poolRuns(statuses: readonly OrchestrationStatus[]): (PoolRun & { readonly active: boolean })[] {
  const byId = new Map(statuses.map((status) => [status.instanceId, status]));
  const topOf = (status: OrchestrationStatus): string => {
    let current = status;
    while (current.parentInstanceId !== undefined) {
      const parent = byId.get(current.parentInstanceId);
      if (parent === undefined) break;
      current = parent;
    }
    return current.instanceId;
  };
  return statuses
    .filter((status) => status.name === orchestrations.refreshPool.name)
    .map((status) => {
      const custom = runStatusOf(status.customStatus);
      const input = orchestrations.refreshPool.schema.safeParse(status.input);
      const cluster = custom.cluster ?? (input.success ? input.data.cluster : undefined);
      const pool = custom.pool ?? (input.success ? input.data.pool : undefined);
      const runId = custom.runId;
      return {
        instanceId: status.instanceId,
        ...definedOnly({ cluster, pool, runId }),
        topLevel: topOf(status),
        active: status.runtimeStatus === 'Running' || status.runtimeStatus === 'Pending',
      };
    });
}

/** How to continue or clean up after leaving, for the runs still active. */
export function leavingAdvice(runs: readonly PoolRun[], stateDir: string): string {
  const resumable = [...new Set(runs.map((run) => run.topLevel))];
  const pools = [...new Set(runs.flatMap((run) => (run.pool === undefined ? [] : [run.pool])))];
  const lines = [
    ...resumable.map(
      (id) => `continue it: vmss-prototype refresh --resume ${id} --state-dir ${stateDir} (same settings)`,
    ),
    ...pools.map((pool) => `or give back what it started once this command exited: ${giveBackAdvice(pool)}`),
  ];
  return lines.length === 0 ? '' : `\n${lines.map((line) => `  ${line}`).join('\n')}`;
}

export interface Interrupts {
  /** True once the command was interrupted (its exit code is then 130). */
  interrupted(): boolean;
  /** After the runs ended: what each run asked to stop left, read from the world ('' when none was). */
  leftBehind(): Promise<string>;
  dispose(): void;
}

/**
 * Installs the handler. `readLeft` reads what runs left from the cluster and Azure (left-behind.ts
 * `readLeftBehind`).
 */
export function handleInterrupts(
  runner: DurableRunner,
  stateDir: string,
  write: (text: string) => void,
  exit: (code: number) => never,
  readLeft: (runs: readonly InterruptedRun[]) => Promise<string>,
): Interrupts {
  let count = 0;
  /** The pool runs asked to stop, by instance id. */
  const asked = new Map<string, PoolRun>();
  let late: ReturnType<typeof setInterval> | undefined;

  const ask = async (): Promise<PoolRun[]> => {
    const runs = poolRuns(await runner.listInstances()).filter(
      (run) => run.active && !asked.has(run.instanceId),
    );
    for (const run of runs) asked.set(run.instanceId, run);
    // Raised together: the runner answers each raise only once its loop is idle.
    for (const run of runs) {
      void runner.raiseEvent(run.instanceId, EVENT.cancel, 'Ctrl-C').catch(() => undefined);
    }
    return runs;
  };

  const onSignal = (): void => {
    count += 1;
    void (async () => {
      if (count > 1) {
        const active = poolRuns(await runner.listInstances()).filter((run) => run.active);
        write(
          `\ninterrupted again: exiting now, the run stays where it is.${leavingAdvice(active, stateDir)}\n`,
        );
        return exit(INTERRUPTED_EXIT_CODE);
      }
      const runs = await ask();
      if (runs.length === 0) {
        write('\ninterrupted: no run is active; exiting.\n');
        return exit(INTERRUPTED_EXIT_CODE);
      }
      write(
        `\ninterrupted: asking ${runs.map((run) => run.instanceId).join(', ')} to stop at its next step and ` +
          'give back what it holds; waiting for it to end (Ctrl-C again to exit at once)\n',
      );
      late = setInterval(() => {
        void ask().catch(() => undefined);
      }, LATE_RUNS_EVERY_MS);
      late.unref();
    })();
  };
  process.on('SIGINT', onSignal);
  return {
    interrupted: () => count > 0,
    leftBehind: async () => {
      if (late !== undefined) clearInterval(late);
      if (asked.size === 0) return '';
      // The run ids as the runs published them once they held their pools.
      const now = new Map(poolRuns(await runner.listInstances()).map((run) => [run.instanceId, run]));
      const runs = [...asked.values()].flatMap((run): InterruptedRun[] => {
        const latest = now.get(run.instanceId) ?? run;
        if (latest.cluster === undefined || latest.pool === undefined) return [];
        return [
          {
            cluster: latest.cluster,
            pool: latest.pool,
            ...definedOnly({ runId: latest.runId }),
          },
        ];
      });
      return runs.length === 0 ? '' : readLeft(runs);
    },
    dispose: () => {
      if (late !== undefined) clearInterval(late);
      process.off('SIGINT', onSignal);
    },
  };
}
