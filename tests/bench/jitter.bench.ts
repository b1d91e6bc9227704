/**
 * One pool's refresh, then the next, on the simulator with the timing model's seeded jitter
 * (sim/world/timing.ts): every long operation takes its own drawn time around the `kamino-observed`
 * figure, so a wait that reads once at the expected completion misses some. The figures per seed, with
 * the default settings (`canary.afterPass: keep-size`): the donor's time out of service, its floor (the
 * world's own durations, donor-floor.ts) and the overhead over it; ARM requests of the first and the next
 * refresh (and with `keep`, the budgets' figures; and with live capture); Kubernetes requests.
 * Seeds make it the same on every machine; several seeds show the spread.
 */
import { POOL1 } from '../e2e/harness.js';
import { FLOOR_DEFINITION } from './donor-floor.js';
import { measureRefresh, withJitterSeed } from './refresh.bench.js';

export { withJitterSeed } from './refresh.bench.js';

/**
 * The budgets of ARM requests, with `keep` (the refresh's own requests, nothing retired after it): a pool's
 * first refresh, and every refresh after it. They were 45 and 35; the stop record a drain-and-stop capture
 * writes on the scale set before the power-off and removes when the VM runs again
 * (docs/interrupted-runs.md) costs 3 more (48 and 38); the stop and start waits reading every 8 and 4 s
 * across the ranges those take, so that the donor is back within seconds of its floor rather than 25–41 s
 * after it (timing.ts EXPECTED.guestHalt, EXPECTED.start), up to 5 more under the jitter: 53 and 42. The
 * publication not read again when ARM answered it done, and a later refresh not reading again the definition
 * the model points at and whose versions it listed under the lease: 52 and 40. A first refresh whose canary
 * runs in a canary scale set of its own (the pool's model read for its PUT, the lookup that finds a retry's,
 * the create, a read after it, the read that checks its tags before the deletion, the deletion's wait; the
 * canary is removed after its verdict, as with keep-size), and the holdings' listing of the resource group's
 * scale sets (a dead run's canary scale set) on every refresh: 56 and 41. The stop record written from
 * the holdings' read (If-Match, no read), the canary scale set created with If-None-Match (no lookup
 * first), the canary instances' record from the pin's answer and the model's update from the record's:
 * 54 and 38. The image definition asked for without following its creation (the version's request uses
 * it), the run's own canary scale set deleted without a read first, and a first refresh's model update
 * written from what the stop record's removal left: 50 and 38. (The snapshot's deletion stays confirmed:
 * a run that ends on a deletion still in progress leaves a resource `release --dry-run` cannot name.) The
 * holdings' read taking the pool's model from that listing of its resource group's scale sets, which
 * carries it, instead of reading it apart as well: 49 and 37. The leftovers' read taking the definition's
 * versions the plan listed, the publication's PATCH sent with the tags the build's last read gave, and the
 * snapshot's deletion asked for and not waited for: 46 and 34. (The deletion was confirmed before; a
 * snapshot ARM is still deleting shows `Deleting`, which the leftovers' read and `release --dry-run` name
 * as kept, "already being deleted", and one whose deletion failed is deleted again by the reaper.)
 */
export const ARM_BUDGET = { first: 46, next: 34 } as const;

/**
 * The default settings (keep-size: one older node retired in the canary's place) over seeds 1–10: held
 * where they are (46 and 38 with the pruning taking the keep-size plan's listing of the versions; 46 and 39 with the plan's listing of the versions, the unread publication and the
 * unawaited snapshot deletion, as ARM_BUDGET says; 49 and 42 with the holdings' model taken from its group's listing; 50 and 43 with the definition's creation not followed, the canary scale set deleted
 * unread and the model's update written from the stop record's removal, as ARM_BUDGET says; 54 and 43 with the stop record, the canary scale set's creation, the canary record and
 * the model's update written without a read before them, as ARM_BUDGET says; 56 and 46 with the first refresh's canary scale set and the holdings' scale-set listing;
 * 57 and 45 before; 58 and 47 before the publication's answer and the lease's listing of the
 * definition spared their reads; 59 and 48 while its retirement plan read the model the step before had
 * just read; 60 and 50 before the waits above, whose extra reads the retirement gave back: its deletion
 * wait reads where most deletions are done, and its step with a spare reads neither the model nor the
 * instances), above the goal (ARM_GOAL).
 */
export const DEFAULT_ARM_CEILING = { first: 46, next: 38 } as const;

/**
 * Live capture with the default settings over seeds 1–10: 45 and 38 with the pruning taking the keep-size
 * plan's listing of the versions; 45 and 39 with the savings of ARM_BUDGET, the
 * copy disk's deletion not waited for, and the attach and detach asked for from the run's last view of the
 * donor's disks; 52 and 46 with the holdings' model taken from
 * its group's listing; 53 and 47 with the definition's creation not
 * followed, the canary scale set deleted unread and the model's update written from the leftovers' read; 58 and 47
 * with the canary scale set's creation,
 * the canary record and the model's update written without a read before them; 59 and 49 with the first refresh's canary scale
 * set and the holdings' scale-set listing (60 and 48 before; 61 and 50 before the publication's
 * answer and the lease's listing of the definition spared their reads; 68 and 57 while its copy disk,
 * attach and detach waits read from 5 s after the request, and its retirement plan read the model again).
 */
export const LIVE_ARM_CEILING = { first: 45, next: 38 } as const;

/**
 * The goal for the default settings (keep-size) and for live capture: 45 and 35. The headline refresh
 * (seed 1) meets it (40 and 33; live 43 and 34); over seeds 1–10 the first refresh does (but seed 4's
 * default, 46), the next one not yet (30–38, eight seeds of ten within it; live 34–38).
 */
export const ARM_GOAL = { first: 45, next: 35 } as const;

export const JITTER_SEEDS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/** The most the donor may be out of service over its floor (donor-floor.ts), on every seed. */
export const DONOR_OVERHEAD_GOAL_S = 10;

export interface JitterRow {
  readonly seed: number;
  /** ARM requests of the pool's first refresh and of the next one, default settings (`keep-size`). */
  readonly armFirst: number;
  readonly armNext: number;
  /** The same with `canary.afterPass: keep` (the canary stays, nothing is retired): the budgets' figures. */
  readonly armFirstKeep: number;
  readonly armNextKeep: number;
  /** The same with live capture (default settings). */
  readonly liveArmFirst: number;
  readonly liveArmNext: number;
  /** Kubernetes requests of the first refresh and of the next one (drain-and-stop). */
  readonly kubeFirst: number;
  readonly kubeNext: number;
  readonly donorOutOfServiceS: number;
  /** The world's own durations the donor cannot avoid (donor-floor.ts), and out of service less them. */
  readonly donorFloorS: number;
  readonly donorOverheadS: number;
  readonly donorCordonToReadyS: number;
  readonly refreshS: number;
  /** Reads of the image version, first refresh: the wait for its replication is most of them. */
  readonly versionReads: number;
  /** Reads of the instances, first refresh: the power-off and start waits are most of them. */
  readonly instanceReads: number;
}

/**
 * Per seed: the first and the next refresh of one pool with the default settings (`canary.afterPass:
 * keep-size`), drain-and-stop and live capture.
 */
export async function jitterFigures(seeds: readonly number[] = JITTER_SEEDS): Promise<JitterRow[]> {
  const rows: JitterRow[] = [];
  for (const seed of seeds) {
    const figures = await measureRefresh(POOL1, 'drain-and-stop', withJitterSeed(seed), 'keep-size');
    if ('refused' in figures) throw new Error(`bench: drain-and-stop refused: ${figures.refused}`);
    const keep = await measureRefresh(POOL1, 'drain-and-stop', withJitterSeed(seed), 'keep');
    if ('refused' in keep) throw new Error(`bench: drain-and-stop refused: ${keep.refused}`);
    const live = await measureRefresh(POOL1, 'live', withJitterSeed(seed), 'keep-size');
    if ('refused' in live) throw new Error(`bench: live capture refused: ${live.refused}`);
    const floor = figures.donorFloor;
    if (floor === null) throw new Error(`bench: seed ${seed}: the donor's floor was not observed`);
    rows.push({
      seed,
      armFirst: figures.armRequests.total,
      armNext: figures.armRequests.again,
      armFirstKeep: keep.armRequests.total,
      armNextKeep: keep.armRequests.again,
      liveArmFirst: live.armRequests.total,
      liveArmNext: live.armRequests.again,
      kubeFirst: figures.kubeRequests,
      kubeNext: figures.kubeRequestsAgain,
      donorOutOfServiceS: figures.donorOutOfServiceS,
      donorFloorS: floor.floorS,
      donorOverheadS: floor.overheadS,
      donorCordonToReadyS: figures.donorCordonToReadyS,
      refreshS: figures.refreshS,
      versionReads: figures.armByOperation['galleries/images/versions/read'] ?? 0,
      instanceReads: figures.armByOperation['virtualMachineScaleSets/virtualMachines/read'] ?? 0,
    });
  }
  return rows;
}

/** The largest of each figure over the seeds: what the budgets are judged on. */
export function jitterMax(rows: readonly JitterRow[]): Omit<JitterRow, 'seed'> {
  const max = (pick: (row: JitterRow) => number) => Math.max(...rows.map(pick));
  return {
    armFirst: max((row) => row.armFirst),
    armNext: max((row) => row.armNext),
    armFirstKeep: max((row) => row.armFirstKeep),
    armNextKeep: max((row) => row.armNextKeep),
    liveArmFirst: max((row) => row.liveArmFirst),
    liveArmNext: max((row) => row.liveArmNext),
    kubeFirst: max((row) => row.kubeFirst),
    kubeNext: max((row) => row.kubeNext),
    donorOutOfServiceS: max((row) => row.donorOutOfServiceS),
    donorFloorS: max((row) => row.donorFloorS),
    donorOverheadS: max((row) => row.donorOverheadS),
    donorCordonToReadyS: max((row) => row.donorCordonToReadyS),
    refreshS: max((row) => row.refreshS),
    versionReads: max((row) => row.versionReads),
    instanceReads: max((row) => row.instanceReads),
  };
}

export function printJitterFigures(rows: readonly JitterRow[]): void {
  console.log(
    '\nrefresh of one pool and the next with seeded jitter (kamino-observed ± the timing model), default ' +
      'settings (canary.afterPass keep-size), manual clock',
  );
  console.log(`  ${FLOOR_DEFINITION}`);
  console.log(
    `seed  out of service  floor  overhead (≤ ${DONOR_OVERHEAD_GOAL_S})  ARM first/next  (keep)  live ARM first/next  ` +
      'Kubernetes first/next  cordon → Ready  refresh  version/instance reads',
  );
  const line = (label: string, row: Omit<JitterRow, 'seed'>) =>
    console.log(
      `${label.padStart(4)}  ${String(row.donorOutOfServiceS).padStart(12)} s  ${String(row.donorFloorS).padStart(3)} s  ` +
        `${String(row.donorOverheadS).padStart(12)} s  ${`${row.armFirst}/${row.armNext}`.padStart(14)}  ` +
        `${`(${row.armFirstKeep}/${row.armNextKeep})`.padStart(6)}  ` +
        `${`${row.liveArmFirst}/${row.liveArmNext}`.padStart(19)}  ${`${row.kubeFirst}/${row.kubeNext}`.padStart(21)}  ` +
        `${String(row.donorCordonToReadyS).padStart(12)} s  ${String(row.refreshS).padStart(5)} s  ` +
        `${row.versionReads}/${row.instanceReads}`,
    );
  for (const row of rows) line(String(row.seed), row);
  if (rows.length > 0) line('max', jitterMax(rows));
  console.log(
    `ARM budgets (held with keep): ${ARM_BUDGET.first} first, ${ARM_BUDGET.next} next; ` +
      `the goal with the default settings: ${ARM_GOAL.first} and ${ARM_GOAL.next}`,
  );
}
