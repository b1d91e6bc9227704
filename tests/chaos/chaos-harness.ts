/**
 * The fault-injection suite's harness: the e2e harness (simulator, product with least privilege) with
 * its own durable runner whose status hook lets a scenario inject a fault the moment a run reaches a
 * step, plus the before-snapshot, the invariants and the summary table every scenario reports to.
 */
import assert from 'node:assert/strict';

import type { OrchestrationStatus } from '../../cli/runner/index.js';
import { createDurableRunner, createMemoryStore, type DurableRunner } from '../../cli/runner/index.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { Harness, HarnessOptions, ScenarioData } from '../e2e/harness.js';
import { startHarness } from '../e2e/harness.js';
import type { WorldBefore, WorldCheck } from './invariants.js';
import { checkInvariants, takeBefore } from './invariants.js';

export interface Chaos {
  readonly harness: Harness;
  readonly runner: DurableRunner;
  readonly before: WorldBefore;
  /** Runs `action` once, the first time any instance's custom status reaches `step`. */
  onStep(step: string, action: (status: OrchestrationStatus) => void): void;
  /** Simulated seconds since the harness started. */
  simSeconds(): number;
  nowMs(): number;
  refreshPool(pool: string, extra?: Record<string, unknown>, id?: string): Promise<OrchestrationStatus>;
  invariants(options?: { runsPerPool?: number }): WorldCheck[];
  /** Every custom-status detail the runs published, in order. */
  statusDetails(): string[];
  /** The steps the runs published, in order, each once per stretch. */
  steps(): string[];
  stop(): Promise<void>;
}

/** The product's orchestrations and activities on a local durable runner over the harness's clock. */
export function runnerOver(
  harness: Harness,
  onStatus: (status: OrchestrationStatus) => void,
  extendedSessions = false,
): DurableRunner {
  return createDurableRunner({
    ...durableRegistry(harness.composition.dependencies),
    clock: harness.sim.clock,
    store: createMemoryStore(),
    maxConcurrentActivities: 8,
    onStatus,
    extendedSessions,
  });
}

/**
 * A cluster of a fleet scenario: `pools` scale sets of `capacity` nodes, patched 6 h ago, with a
 * CustomScript bootstrap, kube-proxy on every node and `workloads` besides.
 */
export function fleetCluster(
  name: string,
  shape: { pools: number; capacity: number; subscriptionId?: string },
  workloads: readonly Record<string, unknown>[] = [],
): ScenarioData['clusters'][number] {
  return {
    name,
    ...(shape.subscriptionId === undefined ? {} : { subscriptionId: shape.subscriptionId }),
    resourceGroup: `rg-${name}`,
    tokens: {
      admin: `sim-admin-token-${name}-0123456789`,
      serviceAccount: `sim-sa-token-${name}-0123456789`,
    },
    scaleSets: Array.from({ length: shape.pools }, (_, p) => ({
      name: `k8s-${name}p${p + 1}-12345678-vmss`,
      capacity: shape.capacity,
      zones: ['1', '2', '3'],
      extensions: [
        {
          name: 'vmssCSE',
          publisher: 'Microsoft.Azure.Extensions',
          type: 'CustomScript',
          typeHandlerVersion: '2.0',
        },
      ],
      customData: '#cloud-config\nruncmd: [/opt/azure/containers/provision.sh]\n',
      readyFor: '6h',
      kured: { mostRecentRebootNeeded: '-6h' },
    })),
    workloads: [
      {
        kind: 'DaemonSet',
        namespace: 'kube-system',
        name: 'kube-proxy',
        tolerations: [{ operator: 'Exists' }],
      },
      ...workloads,
    ],
  };
}

/**
 * The chaos tests run on the manual clock unless they ask otherwise: simulated time moves only while
 * every request has been answered, so a fault lands at the same step however loaded the machine is
 * (on the scaled clock, a slow machine lets more simulated time pass between two steps).
 */
export async function startChaos(options: HarnessOptions = {}): Promise<Chaos> {
  const harness = await startHarness({ clock: 'manual', ...options });
  const hooks: { step: string; action: (status: OrchestrationStatus) => void; fired: boolean }[] = [];
  const details: string[] = [];
  const steps: string[] = [];
  const runner = runnerOver(harness, (status) => {
    const detail = (status.customStatus as { detail?: unknown } | undefined)?.detail;
    if (typeof detail === 'string') details.push(detail);
    const step = (status.customStatus as { step?: unknown } | undefined)?.step;
    if (typeof step === 'string' && steps.at(-1) !== step) steps.push(step);
    for (const hook of hooks) {
      if (!hook.fired && step === hook.step) {
        hook.fired = true;
        hook.action(status);
      }
    }
  });
  const running = harness.sim.running;
  const startedMs = running.clock.nowMs();
  const before = takeBefore(running);
  return {
    harness,
    runner,
    before,
    onStep: (step, action) => hooks.push({ step, action, fired: false }),
    simSeconds: () => Math.round((running.clock.nowMs() - startedMs) / 1000),
    nowMs: () => running.clock.nowMs(),
    refreshPool: (pool, extra = {}, id = `refresh:prod:${pool}`) =>
      runner.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool, trigger: 'test', ...extra },
        id,
      ),
    invariants: (invariantOptions) => checkInvariants(running, before, invariantOptions),
    statusDetails: () => [...details],
    steps: () => [...steps],
    stop: () => harness.stop(),
  };
}

export interface Row {
  readonly scenario: string;
  readonly outcome: string;
  readonly passed: number;
  readonly total: number;
  readonly simSeconds: number;
  readonly message?: string;
}

const rows: Row[] = [];

/** Asserts every invariant holds and records the scenario's row for the summary table. */
export function assertInvariants(
  chaos: Chaos,
  scenario: string,
  outcome: string,
  options: { runsPerPool?: number; message?: string } = {},
): WorldCheck[] {
  const checks = chaos.invariants(options);
  const passed = checks.filter((c) => c.ok).length;
  const row = { scenario, outcome, passed, total: checks.length, simSeconds: chaos.simSeconds() };
  rows.push(options.message ? { ...row, message: options.message } : row);
  assert.deepEqual(
    checks.filter((c) => !c.ok),
    [],
    `${scenario}: every invariant holds`,
  );
  return checks;
}

export function summaryTable(title: string): string {
  const header = ['scenario', 'outcome', 'invariants', 'sim s'];
  const body = rows.map((row) => [
    row.scenario,
    row.outcome,
    `${row.passed}/${row.total}`,
    String(row.simSeconds),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] ?? '').length)));
  const format = (line: string[]): string => line.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ');
  const messages = rows.flatMap((row) => (row.message ? [`${row.scenario}: ${row.message}`] : []));
  return [
    title,
    format(header),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...body.map(format),
    ...(messages.length > 0 ? ['failure messages:', ...messages] : []),
  ].join('\n');
}

/** The failure message of a failed run (empty when it did not fail). */
export function failureOf(status: OrchestrationStatus): string {
  return status.failure?.ErrorMessage ?? '';
}
