/**
 * Ctrl-C during `refresh`: the first one gives the node back before exiting — a run that holds its donor
 * (drain, preparation, power-off, snapshot) gets the cancel event, gives the node back and ends as failed,
 * then the command exits. A run past its capture holds no node: the command exits at once. A second Ctrl-C
 * exits at once, whatever runs, and says how to continue (`--resume`) or give back (`release`).
 */
import { EVENT, ORCHESTRATION } from '../shared/application/orchestration-ids.js';
import { giveBackAdvice } from './give-back-advice.js';
import type { DurableRunner, OrchestrationStatus } from './runner/index.js';

/** The steps during which a run holds its donor node (and a cancel gives it back). */
const HOLDING_NODE = new Set([
  'recording-node-state',
  'cordoning',
  'draining',
  'preparing-disk',
  'waiting-for-power-off',
  'snapshotting',
]);

/** The exit code of an interrupted command (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

interface PoolRun {
  readonly instanceId: string;
  readonly pool?: string;
  readonly step?: string;
  readonly topLevel: string;
}

function activeRuns(statuses: readonly OrchestrationStatus[]): PoolRun[] {
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
    .filter(
      (status) =>
        status.name === ORCHESTRATION.refreshPool &&
        (status.runtimeStatus === 'Running' || status.runtimeStatus === 'Pending'),
    )
    .map((status) => {
      const custom = status.customStatus as { pool?: unknown; step?: unknown } | undefined;
      return {
        instanceId: status.instanceId,
        ...(typeof custom?.pool === 'string' ? { pool: custom.pool } : {}),
        ...(typeof custom?.step === 'string' ? { step: custom.step } : {}),
        topLevel: topOf(status),
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

/** Installs the handler; returns a function that says whether the command was interrupted. */
export function handleInterrupts(
  runner: DurableRunner,
  stateDir: string,
  write: (text: string) => void,
  exit: (code: number) => never,
): { interrupted: () => boolean; dispose: () => void } {
  let count = 0;
  const onSignal = (): void => {
    count += 1;
    void (async () => {
      const runs = activeRuns(await runner.listInstances());
      if (count > 1) {
        write(
          `\ninterrupted again: exiting now, the run stays where it is.${leavingAdvice(runs, stateDir)}\n`,
        );
        exit(INTERRUPTED_EXIT_CODE);
      }
      const holding = runs.filter((run) => run.step !== undefined && HOLDING_NODE.has(run.step));
      if (holding.length === 0) {
        const note =
          runs.length === 0
            ? 'no run is active'
            : 'no node is held (the run is past its capture, or not there yet)';
        write(`\ninterrupted: ${note}; exiting.${leavingAdvice(runs, stateDir)}\n`);
        exit(INTERRUPTED_EXIT_CODE);
      }
      write(
        `\ninterrupted: giving the node back before exiting (${holding.map((run) => run.instanceId).join(', ')}); ` +
          'Ctrl-C again to exit at once\n',
      );
      for (const run of holding) {
        await runner
          .raiseEvent(run.instanceId, EVENT.cancel, 'interrupted with Ctrl-C')
          .catch(() => undefined);
      }
    })();
  };
  process.on('SIGINT', onSignal);
  return { interrupted: () => count > 0, dispose: () => process.off('SIGINT', onSignal) };
}
