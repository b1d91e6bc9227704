/**
 * Cost of one pool refresh on the simulator with the `kamino-observed` latency profile: donor
 * out-of-service time (cordon to uncordon, simulated seconds), ARM and Kubernetes requests, the
 * orchestration's history length, and the CPU time of replaying that history once (what every
 * orchestrator episode pays on a real host). kamino's published run: 243 s cordon to uncordon, about
 * 45 CLI calls.
 */
import { replayWithSdk } from '../../cli/runner/durable-internals.js';
import { ORCHESTRATORS } from '../../functions/orchestrations/index.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { POOL1, POOL2, startHarness } from '../e2e/harness.js';

const REPLAYS = 20;

async function measure(pool: string): Promise<string[]> {
  const harness = await startHarness();
  try {
    const world = harness.sim.running.world;
    world.log.reset();
    const instanceId = `bench-${pool}`;
    const simStart = harness.sim.clock.now();
    const wallStart = performance.now();
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool, trigger: 'bench' },
      instanceId,
    );
    const wallMs = performance.now() - wallStart;
    if (status.runtimeStatus !== 'Completed')
      throw new Error(`bench refresh failed: ${JSON.stringify(status.failure)}`);
    const result = status.output as PoolRefreshResult;
    const requests = world.log.snapshot().byApi;
    const history = (await harness.runner.getHistory(instanceId)) ?? [];
    const orchestrator = ORCHESTRATORS[ORCHESTRATION.refreshPool];
    if (orchestrator === undefined) throw new Error('bench: refreshPool is not registered');
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < REPLAYS; i++) {
      await replayWithSdk(orchestrator, {
        instanceId,
        parentInstanceId: undefined,
        functionName: ORCHESTRATION.refreshPool,
        history,
        input: status.input,
        log: () => undefined,
      });
    }
    const cpu = process.cpuUsage(cpuStart);
    const replayMs = (cpu.user + cpu.system) / 1000 / REPLAYS;
    const historyBytes = Buffer.byteLength(JSON.stringify(history));
    return [
      pool,
      String(result.donorOutOfServiceSeconds ?? '-'),
      String(Math.round((harness.sim.clock.now() - simStart) / 1000)),
      String(requests.arm),
      String(requests.kube),
      String(history.length),
      `${(historyBytes / 1024).toFixed(0)} KB`,
      replayMs.toFixed(1),
      (wallMs / 1000).toFixed(1),
    ];
  } finally {
    await harness.stop();
  }
}

export const refreshBench = {
  name: 'refresh',
  async run(): Promise<void> {
    const header = [
      'pool',
      'donor out of service (sim s)',
      'refresh (sim s)',
      'ARM requests',
      'Kubernetes requests',
      'history events',
      'history size',
      'replay CPU (ms)',
      'wall (s)',
    ];
    const rows = [header, await measure(POOL1), await measure(POOL2)];
    const widths = header.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
    console.log(
      '\nrefresh of one pool, latency profile kamino-observed (kamino: 243 s out of service, ~45 CLI calls)',
    );
    for (const row of rows)
      console.log(row.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  '));
  },
};
