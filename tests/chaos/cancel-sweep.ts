/**
 * Cancel at every step ("Ctrl-C and cancel are truthful at every step"). A reference run names
 * the steps of a refresh; then, for every step and both ways of asking — the cancel event (Ctrl-C, the
 * HTTP API) and a request written on the pool's lease (`vmss-prototype cancel`, any machine) — a fresh
 * world, the cancel asked the moment the run reaches the step, and:
 * - the run stops at its next boundary: its failure names the step it stopped at, the step the cancel
 *   landed on (the lease is read by the very next activity) or, for a step that finishes what it asked
 *   for (giving back, deleting, the model update after publishing), the next one; the event, raised while
 *   an activity runs, may land one boundary later;
 * - it ends failed with `<step>: cancelled: <reason>; …` saying what it gave back and that the lease was
 *   released — or, once its version is published, where the pool stands and that `rollback` points it
 *   back; a cancel during the last step finds nothing to stop;
 * - every invariant holds (nothing of the run left: node, VM, pod, snapshot, copy disk, canary), the lease
 *   is free, and before the publication the model and `latest` are as they were.
 * Tables: drain-and-stop with its canary, live capture with its canary, the canary gate off, and a canary
 * removed once it passed. The sweep (every table × both ways of asking) is split into CANCEL_SHARDS fixed
 * shards (tests/shards.ts), one test file each (`cancel-<k>.test.ts`), so no one file holds it all.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { parseCanaryRecord } from '../../shared/domain/canary-record.js';
import { LEASE_ANNOTATIONS } from '../../shared/domain/ownership.js';
import type { KubeObject } from '../../sim/contracts.js';
import type { ClusterSettingsData } from '../e2e/harness.js';
import { POOL2 } from '../e2e/harness.js';
import { liveCaptureLeftovers } from '../e2e/live-checks.js';
import { shardOf } from '../shards.js';
import type { Chaos } from './chaos-harness.js';
import { assertInvariants, failureOf, startChaos, summaryTable } from './chaos-harness.js';

const INSTANCE = `refresh:prod:${POOL2}`;
const REASON = 'maintenance window closed';
type Via = 'event' | 'lease';

/**
 * Steps with no boundary of their own: they finish what was asked (giving back, deleting, publishing's
 * model update, removing a canary scale set whatever its verdict) or, before the lease, plan. A cancel that
 * lands there is acted on at the next step's.
 */
const FINISHING = new Set([
  'planning',
  'giving-back-leftovers',
  'deleting-snapshot',
  'deleting-copy-disk',
  'removing-canary-scale-set',
  'updating-scale-set-model',
]);

/** Drain-and-stop gives the node back while the image branch waits for the snapshot: it stops there. */
const PARALLEL_TO: Readonly<Record<string, string>> = { 'restoring-node': 'awaiting-snapshot' };

/** The run is done with the pool: a cancel there finds nothing to stop. */
const ENDED = new Set(['releasing-lease', 'done']);

/** Where a cancel asked at `step` (of the reference `steps`) is acted on; `completed`: nowhere. */
function stopsAt(steps: readonly string[], step: string | undefined): string {
  if (step === undefined || ENDED.has(step)) return 'completed';
  const parallel = PARALLEL_TO[step];
  if (parallel !== undefined) return parallel;
  if (!FINISHING.has(step)) return step;
  return stopsAt(steps, steps[steps.indexOf(step) + 1]);
}

function settingsOf(
  mode: 'drain-and-stop' | 'live',
  canary: Record<string, unknown>,
): (cluster: ClusterSettingsData) => void {
  return (cluster) => {
    cluster.capture = { ...cluster.capture, mode };
    cluster['promotion'] = { canary };
  };
}

/** The pool's lease in the simulated cluster (one pool runs). */
function poolLease(chaos: Chaos): (KubeObject & { spec?: { holderIdentity?: string } }) | undefined {
  const store = chaos.harness.sim.running.world.cluster('prod').world.store;
  return store.list('leases').find((lease) => lease.metadata.name.startsWith('vmssp-'));
}

/** Asks the cancel the way `via` says, at once (from the runner's status hook). */
function askCancel(chaos: Chaos, via: Via): void {
  if (via === 'event') {
    void chaos.runner.raiseEvent(INSTANCE, 'cancel', REASON).catch(() => undefined);
    return;
  }
  // What `vmss-prototype cancel` writes (pool-lease.ts requestPoolCancel), written synchronously so that
  // the run's next activity reads it.
  const store = chaos.harness.sim.running.world.cluster('prod').world.store;
  const lease = poolLease(chaos);
  assert.ok(lease, 'the run holds the lease');
  lease.metadata.annotations = { ...lease.metadata.annotations, [LEASE_ANNOTATIONS.cancelRequested]: REASON };
  store.update('leases', lease);
}

async function referenceSteps(settings: (cluster: ClusterSettingsData) => void): Promise<string[]> {
  const chaos = await startChaos({ settings, clock: 'manual' });
  try {
    const status = await chaos.refreshPool(POOL2, {}, INSTANCE);
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    return chaos.steps();
  } finally {
    await chaos.stop();
  }
}

/** The image versions made since the world was built, in every gallery of the pool's resource group. */
function newVersions(chaos: Chaos): { name: string; excludeFromLatest: boolean }[] {
  const compute = chaos.harness.sim.running.world.compute;
  const groups = new Set(compute.listScaleSets().map((s) => `${s.subscriptionId}\n${s.resourceGroup}`));
  return [...groups].flatMap((group) =>
    compute
      .listGalleries(...(group.split('\n') as [string, string]))
      .flatMap((gallery) => compute.listImageDefinitions(gallery.id))
      .flatMap((definition) => compute.listImageVersions(definition.id))
      .filter((version) => !chaos.before.versionIds.has(version.id.toLowerCase())),
  );
}

/** The world carries nothing of the run; before the publication, the model and `latest` are as before. */
function assertGivenBack(chaos: Chaos, label: string, pastPublication: boolean): void {
  const running = chaos.harness.sim.running;
  const compute = running.world.compute;
  const scaleSet = compute.listScaleSets().find((candidate) => candidate.name === POOL2);
  assert.ok(scaleSet, 'the pool exists');
  assert.deepEqual(
    liveCaptureLeftovers(running, { ...scaleSet, subscriptionId: running.subscriptionId }),
    [],
    `${label}: no copy disk, pod or frozen root left`,
  );
  assert.equal(parseCanaryRecord(scaleSet.tags).kind, 'none', `${label}: no canary record left`);
  const lease = poolLease(chaos);
  assert.equal(lease?.spec?.holderIdentity ?? '', '', `${label}: the lease is free`);
  if (pastPublication) return;
  assert.equal(
    JSON.stringify(scaleSet.imageReference),
    chaos.before.scaleSets.get(scaleSet.id.toLowerCase())?.imageReference,
    `${label}: the model is as it was`,
  );
  const published = newVersions(chaos).filter((version) => !version.excludeFromLatest);
  assert.deepEqual(
    published.map((version) => version.name),
    [],
    `${label}: nothing new in \`latest\``,
  );
}

async function cancelAt(
  settings: (cluster: ClusterSettingsData) => void,
  steps: readonly string[],
  step: string,
  via: Via,
  table: string,
): Promise<void> {
  // Simulated time moves only on durable timers: the same steps on any machine, and fast.
  const chaos = await startChaos({ settings, clock: 'manual' });
  try {
    let asked = false;
    chaos.onStep(step, () => {
      asked = true;
      askCancel(chaos, via);
    });
    const status = await chaos.refreshPool(POOL2, {}, INSTANCE);
    assert.ok(asked, `the run reached ${step}`);
    const message = failureOf(status);
    const label = `${table}: ${via} at ${step}`;
    const expected = stopsAt(steps, step);
    // The event reaches the run while an activity runs: it may be acted on one boundary later.
    const allowed = via === 'lease' ? [expected] : [expected, stopsAt(steps, steps[steps.indexOf(step) + 1])];
    const stopped =
      status.runtimeStatus === 'Completed' ? 'completed' : (/^([a-z-]+): /.exec(message)?.[1] ?? '');
    assert.ok(
      allowed.includes(stopped),
      `${label}: stopped at ${stopped}, expected ${allowed.join(' or ')}: ${message}`,
    );
    if (stopped !== 'completed') {
      assert.equal(status.runtimeStatus, 'Failed');
      assert.match(message, new RegExp(`^${stopped}: cancelled: ${REASON}; `), label);
      assert.match(message, /; the pool's lease was (released|never taken)$/, label);
      if (/ is published /.test(message)) {
        assert.match(message, /`vmss-prototype rollback --pool \S+` points the pool back/, label);
      }
    }
    assertGivenBack(chaos, label, stopped === 'completed' || / is published /.test(message));
    assertInvariants(chaos, label, stopped === 'completed' ? 'completed' : `stopped at ${stopped}`, {
      message,
    });
  } finally {
    await chaos.stop();
  }
}

/** A table: every step of the reference run (from `from` on), asked one way. */
interface Table {
  readonly name: string;
  readonly settings: (cluster: ClusterSettingsData) => void;
  readonly from?: string;
  readonly to?: string;
}

const TABLES: readonly Table[] = [
  { name: 'drain-and-stop with its canary', settings: settingsOf('drain-and-stop', {}) },
  { name: 'live capture with its canary', settings: settingsOf('live', {}) },
  {
    name: 'canary gate off',
    settings: settingsOf('drain-and-stop', { enabled: false }),
    from: 'building-image-version',
  },
  {
    name: 'canary removed once it passed',
    settings: settingsOf('drain-and-stop', { afterPass: 'remove' }),
    from: 'testing-canaries',
    to: 'publishing-image-version',
  },
];

/** How many test files the sweep is split into (cancel-1.test.ts … cancel-<n>.test.ts). */
export const CANCEL_SHARDS = 3;

/** Every table × way of asking, table by table (the order the shards slice). */
export function cancelSweep(): { readonly table: Table; readonly via: Via }[] {
  return TABLES.flatMap((table) => (['event', 'lease'] as const).map((via) => ({ table, via })));
}

function sweep(table: Table, via: Via): void {
  const { name, settings, from, to } = table;
  void it(`${name}, by ${via}`, { timeout: 30 * 60_000 }, async (t) => {
    const steps = await referenceSteps(settings);
    const first = from === undefined ? 0 : steps.indexOf(from);
    const last = to === undefined ? steps.length : steps.indexOf(to) + 1;
    assert.ok(
      first >= 0 && last > first,
      `${name}: the reference run went through ${from ?? ''}..${to ?? ''}`,
    );
    const covered = [...new Set(steps.slice(first, last))];
    for (const step of covered) {
      // Before the lease is taken there is nothing to write a request on (`cancel` answers not-running).
      if (via === 'lease' && (step === 'planning' || step === 'acquiring-lease')) continue;
      await t.test(`${via} at ${step}`, () => cancelAt(settings, steps, step, via, name));
    }
    t.diagnostic(`${name}: cancel asked at ${covered.length} steps, by ${via}`);
  });
}

/** The test of one shard of the sweep. */
export function describeCancelShard(shard: number): void {
  void describe(`cancel at every step, shard ${shard} of ${CANCEL_SHARDS}`, { concurrency: false }, () => {
    after(() => {
      console.log(summaryTable(`chaos: cancel at every step, shard ${shard}`));
    });
    for (const { table, via } of shardOf(cancelSweep(), shard, CANCEL_SHARDS)) sweep(table, via);
  });
}
