/**
 * A kubeadm pool on the simulator, `kamino-observed` latency profile, manual clock: one refresh
 * by drain-and-stop (the donor snapshotted as it is and given back, then its copy scrubbed) and one live,
 * with the same figures as the refresh bench; and a new node's time to Ready before the refresh (a
 * marketplace image, full bootstrap) and after it (the captured image, `kubeadm join` only). The times to
 * Ready come from the simulator's timing model, whose sources are in sim/README.md ("Time to Ready").
 */
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { POOL1, startHarness, withKubeadmPool } from '../e2e/harness.js';
import { armText, frozenText, measureRefresh, modelText, type RefreshFigures } from './refresh.bench.js';

export interface TimeToReady {
  /** How the node became one (the simulator's join record): `marketplace-full`, `image-kubeadm-join`… */
  readonly bootstrap: string;
  readonly seconds: number;
}

export interface KubeadmFigures {
  readonly drainAndStop: RefreshFigures;
  readonly live: RefreshFigures;
  readonly newNodeToReady: { readonly before: TimeToReady; readonly after: TimeToReady };
}

/** A new node of the kubeadm pool before and after its refresh (canary off: only the scale-outs add nodes). */
async function measureTimeToReady(): Promise<KubeadmFigures['newNodeToReady']> {
  const harness = await startHarness({
    clock: 'manual',
    scenario: withKubeadmPool(POOL1),
    settings: (cluster) => {
      cluster['promotion'] = { canary: { enabled: false } };
    },
  });
  try {
    const world = harness.sim.running.world;
    const scaleSet = world.compute.listScaleSets().find((entry) => entry.name === POOL1);
    if (scaleSet === undefined) throw new Error(`bench: no scale set ${POOL1}`);
    const newNode = (): TimeToReady => {
      const before = world.joinRecords().length;
      world.compute.scaleOut(scaleSet.id, 1);
      world.clock.advanceBy(world.latency.newNodeJoinFromMarketplaceSeconds + 60);
      const [join] = world.joinRecords().slice(before);
      if (join === undefined) throw new Error('bench: the new node did not join');
      return { bootstrap: join.bootstrap, seconds: join.seconds };
    };
    const before = newNode();
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL1, trigger: 'bench' },
      'bench-kubeadm-time-to-ready',
    );
    if (status.runtimeStatus !== 'Completed')
      throw new Error(`bench kubeadm refresh failed: ${JSON.stringify(status.failure)}`);
    return { before, after: newNode() };
  } finally {
    await harness.stop();
  }
}

export async function kubeadmFigures(): Promise<KubeadmFigures> {
  const drainAndStop = await measureRefresh(POOL1, 'drain-and-stop', withKubeadmPool(POOL1));
  const live = await measureRefresh(POOL1, 'live', withKubeadmPool(POOL1));
  if ('refused' in drainAndStop || 'refused' in live) throw new Error('bench: a kubeadm refresh was refused');
  return { drainAndStop, live, newNodeToReady: await measureTimeToReady() };
}

export function printKubeadmFigures(figures: KubeadmFigures): void {
  console.log('\nkubeadm pool (pool 1 of the sample), latency profile kamino-observed, manual clock');
  for (const row of [figures.drainAndStop, figures.live]) {
    console.log(
      `${row.captureMode}: donor out of service ${row.donorOutOfServiceS} s, ${frozenText(row)}cordon → Ready ${row.donorCordonToReadyS} s, ` +
        `${modelText(row)}, refresh ${row.refreshS} s (simulated); ` +
        `${armText(row)}, ` +
        `Kubernetes ${row.kubeRequests}; history ${row.historyEvents} events / ${row.historyKb} KB; wall ${row.wallS} s`,
    );
  }
  const { before, after } = figures.newNodeToReady;
  console.log(
    `new node → Ready: ${before.seconds} s before the refresh (${before.bootstrap}), ${after.seconds} s after (${after.bootstrap}); ` +
      'timing model and sources: sim/README.md "Time to Ready"',
  );
}
