/**
 * What an interrupted refresh left, read from the world once its run ended: the pool's lease,
 * the nodes carrying the run's marker with their VMs' power state, its pods, snapshots, copy disks and
 * image versions, and a canary record — what `status` and `release --dry-run` read
 * (shared/application/pool-holdings.ts), never a guess from the step the run was at. The command prints it
 * after a Ctrl-C, with the command that gives back whatever is left.
 */
import type { PoolHoldingsView } from '../shared/application/pool-holdings.js';
import { poolScope, readPoolHoldings } from '../shared/application/pool-holdings.js';
import type { RefreshDependencies } from '../shared/application/refresh-dependencies.js';
import { messageOf } from '../shared/domain/errors.js';
import { describeHolder, LEASE_ANNOTATIONS, leaseState } from '../shared/domain/ownership.js';

/** A pool run of the command: where it ran and, once it held the pool, its run id. */
export interface InterruptedRun {
  readonly cluster: string;
  readonly pool: string;
  readonly runId?: string;
}

/** Lines saying what `run` left in `view` at `now` (pure). */
export function describeLeftBehind(view: PoolHoldingsView, run: InterruptedRun, now: Date): string[] {
  const { holdings } = view;
  const ours = (runId: string | undefined): boolean => run.runId !== undefined && runId === run.runId;
  const left: string[] = [];
  for (const node of holdings.nodes.filter((held) => ours(held.runId))) {
    const vm =
      node.instance.kind === 'present'
        ? `its VM ${node.instance.powerState}`
        : node.instance.kind === 'gone'
          ? 'its VM gone'
          : 'its VM unknown';
    left.push(
      `node ${node.name}: ${node.unschedulable ? 'cordoned' : 'schedulable'}, marked by the run, ${vm}`,
    );
  }
  for (const pod of holdings.prepPods.filter((held) => ours(held.runId))) {
    left.push(`pod ${pod.namespace}/${pod.name} (${pod.phase})`);
  }
  for (const snapshot of holdings.snapshots.filter((held) => ours(held.runId))) {
    left.push(`snapshot ${snapshot.name} (${snapshot.provisioningState})`);
  }
  for (const disk of (holdings.copyDisks ?? []).filter((held) => ours(held.runId))) {
    const attached =
      disk.attachedTo === undefined ? '' : `, attached to ${disk.attachedTo.split('/').at(-1) ?? ''}`;
    left.push(`copy disk ${disk.name} (${disk.provisioningState}${attached})`);
  }
  const published: string[] = [];
  for (const version of holdings.versions.filter((held) => ours(held.runId))) {
    if (version.provisioningState === 'Succeeded' && !version.excludeFromLatest) {
      published.push(version.versionName);
    } else if (!version.rejected) {
      left.push(
        `image version ${version.versionName} (${version.provisioningState}, hidden from \`latest\`)`,
      );
    }
  }
  if (typeof view.canaryRecord === 'object' && ours(view.canaryRecord.run)) {
    left.push(`the canary record on scale set ${view.scope.scaleSet.name}`);
  }
  const lines = [`pool ${run.pool}${run.runId === undefined ? '' : ` (run ${run.runId})`}, read just now:`];
  lines.push(`  ${leaseLine(view, run, now)}`);
  if (left.length === 0) {
    lines.push(
      run.runId === undefined
        ? '  the run stopped before it took the pool: it changed nothing'
        : '  nothing of the run is left: no node marked, no VM it stopped, no pod, snapshot, copy disk or unpublished version',
    );
  } else {
    lines.push(...left.map((what) => `  left: ${what}`));
    lines.push(
      `  give it back: vmss-prototype release --pool ${run.pool} (once the run's lease is released or expired)`,
    );
  }
  for (const name of published) {
    const model = holdings.modelImageId ?? '';
    const on = model.toLowerCase().endsWith(`/versions/${name}`.toLowerCase())
      ? ' and the model is pinned to it'
      : '';
    lines.push(
      `  published: image version ${name} is in \`latest\`${on}; ` +
        `vmss-prototype rollback --pool ${run.pool} points the pool back at the version before`,
    );
  }
  return lines;
}

function leaseLine(view: PoolHoldingsView, run: InterruptedRun, now: Date): string {
  const state = leaseState(view.lease, now);
  if (state.kind === 'free') return "the pool's lease is free";
  const instance = view.lease?.annotations[LEASE_ANNOTATIONS.instanceId];
  const whose =
    run.runId !== undefined && state.holder.runId === run.runId ? 'still held by this run: ' : 'held by ';
  return `the pool's lease is ${whose}${describeHolder(state, instance)}`;
}

/** Reads each pool the runs worked on and says what they left; a pool that cannot be read says so. */
export async function readLeftBehind(
  deps: RefreshDependencies,
  runs: readonly InterruptedRun[],
): Promise<string> {
  const lines: string[] = [];
  for (const run of runs) {
    try {
      const handle = await deps.cluster(run.cluster);
      const view = await readPoolHoldings(handle, await poolScope(handle, run.pool));
      lines.push(...describeLeftBehind(view, run, deps.now()));
    } catch (error) {
      const message = messageOf(error);
      lines.push(
        `pool ${run.pool}: could not read what the run left (${message}); see vmss-prototype status --cluster ${run.cluster}`,
      );
    }
  }
  return lines.join('\n');
}
