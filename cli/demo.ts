/**
 * `npm run demo`: starts the simulator with the sample scenario, runs auto mode for the whole
 * cluster through the local durable runner, prints what happened and checks the world ended as it
 * must (new image per eligible pool, model on the image, bootstrap gone, no snapshot left, donors
 * back in service and untouched by us). Exit code 1 when a check fails.
 */
import { performance } from 'node:perf_hooks';

import { outputOf } from '../functions/orchestration.js';
import { orchestrations } from '../functions/orchestrations/index.js';
import type { ClusterRefreshResult } from '../shared/application/refresh-contracts.js';
import type { CommandResult } from './commands.js';
import { checkRefreshedWorld } from './demo-checks.js';
import { describeFailure, failureText } from './failures.js';
import { DEFAULT_WIDTH, formatSeconds, render, table } from './output.js';
import { createProgressPrinter } from './progress.js';
import { openSession } from './session.js';

async function demo(): Promise<number> {
  const wallStart = performance.now();
  const width = process.stdout.isTTY ? process.stdout.columns : DEFAULT_WIDTH;
  const session = await openSession({
    sim: true,
    stateDir: '.runs/demo',
    onStatus: createProgressPrinter(process.stderr),
  });
  try {
    const simulator = session.simulator;
    if (simulator === undefined) throw new Error('running the demo: the simulator did not start');
    const simStart = simulator.clock.now();
    process.stdout.write(
      `simulator: ARM ${simulator.running.armEndpoint}, Kubernetes ${simulator.running.kubeHttpsUrl}\n` +
        `auto mode for every cluster (permissions enforced: infra/azure/compute-actions.json, infra/kubernetes/)\n\n`,
    );
    const clusters: ClusterRefreshResult[] = [];
    const failures: { instanceId: string; message: string }[] = [];
    for (const cluster of session.composition.dependencies.clusterNames) {
      const instanceId = `refresh:${cluster}:demo-${Date.now()}`;
      const status = await session.runner.startOrchestration(
        orchestrations.refreshCluster,
        { cluster, trigger: 'demo' },
        instanceId,
      );
      const output = outputOf(orchestrations.refreshCluster, status);
      if (output !== undefined) {
        clusters.push(output);
      } else {
        failures.push({ instanceId, message: status.failure?.ErrorMessage ?? status.runtimeStatus });
      }
    }
    const result: CommandResult = { kind: 'refresh', clusters, failures };
    process.stdout.write(`\n${render(result, { width })}\n\n`);

    const statusRows: string[][] = [];
    for (const cluster of clusters) {
      for (const pool of cluster.pools) {
        if (pool.outcome !== 'refreshed' || pool.version === undefined) continue;
        const scaleSet = pool.plan?.scaleSet;
        const model =
          scaleSet === undefined
            ? undefined
            : simulator.running.world.compute.getScaleSet(scaleSet.id)?.imageReference;
        const modelId = typeof model?.['id'] === 'string' ? model['id'] : '';
        statusRows.push([
          pool.pool,
          pool.version.versionName,
          pool.donor ?? '-',
          String(pool.version.storageAccountType),
          modelId.toLowerCase().endsWith(`/images/${pool.version.imageName}`.toLowerCase())
            ? 'yes (latest)'
            : 'no',
          formatSeconds(pool.donorOutOfServiceSeconds),
        ]);
      }
    }
    process.stdout.write(
      `${table(['POOL', 'IMAGE VERSION', 'BUILT FROM', 'STORAGE', 'MODEL POINTS AT IT', 'DONOR OUT OF SERVICE'], statusRows, { width })}\n\n`,
    );

    const checks = checkRefreshedWorld(simulator.running, clusters);
    for (const check of checks) {
      process.stdout.write(
        `${check.ok ? 'ok  ' : 'FAIL'} ${check.name}${check.detail === undefined ? '' : `: ${check.detail}`}\n`,
      );
    }
    const simulatedSeconds = Math.round((simulator.clock.now() - simStart) / 1000);
    const requests = simulator.running.log.snapshot();
    process.stdout.write(
      `\nsimulated time ${formatSeconds(simulatedSeconds)}, wall time ${formatSeconds((performance.now() - wallStart) / 1000)}, ` +
        `ARM requests ${requests.byApi.arm}, Kubernetes requests ${requests.byApi.kube}\n`,
    );
    const failed = failures.length > 0 || checks.some((check) => !check.ok);
    return failed ? 1 : 0;
  } finally {
    await session.close();
  }
}

demo().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(failureText(describeFailure(error), 'demo'));
    process.exitCode = 1;
  },
);
