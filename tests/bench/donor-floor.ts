/**
 * The donor's floor: how long a drain-and-stop capture keeps the donor out of service however well the
 * product waits, from the world's own timings as the simulator played them (observed on its Kubernetes
 * store and its compute state, in simulated time), and the overhead, the rest of the donor's time out of
 * service, which is the product's (its polls and its steps between them).
 *
 * The floor is the sum of what the donor cannot avoid, each from the simulator's events:
 * - drain: the cordon → the last pod evicted from the donor gone (their grace periods);
 * - prep pod: the prep pod created → the guest powered off (pod start and the prep script);
 * - stop: the guest's power-off → the instance `stopped`;
 * - start: the start asked → the instance `running`.
 * Overhead = out of service (cordon → uncordon) − floor: the drain's last poll after the last pod went,
 * stopped → start asked (the power-off wait's reads; the snapshot's request), running → uncordon (the
 * start wait's reads). With jitter each seed draws its own durations: the floor is that run's own.
 */
import type { KubeObject } from '../../sim/contracts.js';
import type { Harness } from '../e2e/harness.js';

interface PodEvent {
  readonly atMs: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly name: string;
  readonly nodeName: string | undefined;
}

interface PowerEvent {
  readonly atMs: number;
  readonly nodeName: string;
  readonly previous: string;
  readonly state: string;
}

export interface DonorFloor {
  /** Seconds of each part of the floor, as the world took them. */
  readonly drainS: number;
  readonly prepPodS: number;
  readonly stopS: number;
  readonly startS: number;
  /** Their sum. */
  readonly floorS: number;
  /** Out of service (cordon → uncordon) less the floor. */
  readonly overheadS: number;
  /** Seconds the product added on top, per gap (the three sum to the overhead, with the cordon's). */
  readonly afterDrainS: number;
  readonly stoppedToStartS: number;
  readonly runningToUncordonS: number;
}

export interface DonorTimeline {
  /** The floor of `donor`, cordoned at `cordonAtMs` and uncordoned at `uncordonAtMs`; undefined if not stopped. */
  floorOf(donor: string, cordonAtMs: number, uncordonAtMs: number): DonorFloor | undefined;
  stop(): void;
}

/** What the floor is, for people reading the figures. */
export const FLOOR_DEFINITION =
  "floor: the world's own durations the donor cannot avoid, as the simulator played them: drain (cordon → " +
  'the last evicted pod gone) + prep pod (created → guest powered off) + stop (guest power-off → stopped) + ' +
  'start (start asked → running); overhead = out of service (cordon → uncordon) − floor';

const PREP_POD = /^vmssp-prep-/;
const PULL_POD = /^vmssp-pull-/;

/** Records the pods' and the instances' changes of `cluster`'s world in simulated time. */
export function watchDonorTimeline(harness: Harness, cluster: string): DonorTimeline {
  const handle = harness.sim.running.world.clusters.get(cluster);
  if (handle === undefined) throw new Error(`bench: no cluster ${cluster} in the scenario`);
  const clock = harness.sim.running.clock;
  const pods: PodEvent[] = [];
  const power: PowerEvent[] = [];
  const stopPods = handle.world.store.subscribe((event) => {
    if (event.resource !== 'pods') return;
    const pod = event.object as KubeObject & { spec?: { nodeName?: string } };
    pods.push({
      atMs: clock.nowMs(),
      type: event.type,
      name: pod.metadata.name,
      nodeName: pod.spec?.nodeName,
    });
  });
  const stopPower = harness.sim.running.world.compute.subscribe((event) => {
    if (event.type !== 'instance-power-changed') return;
    power.push({
      atMs: clock.nowMs(),
      nodeName: event.instance.computerName.toLowerCase(),
      previous: event.previous,
      state: event.instance.powerState,
    });
  });
  return {
    floorOf(donor, cordonAtMs, uncordonAtMs) {
      const onDonor = pods.filter((event) => event.nodeName === donor && event.atMs >= cordonAtMs);
      const prepCreated = onDonor.find((event) => event.type === 'ADDED' && PREP_POD.test(event.name));
      if (prepCreated === undefined) return undefined;
      const drained = onDonor.filter(
        (event) =>
          event.type === 'DELETED' &&
          !PREP_POD.test(event.name) &&
          !PULL_POD.test(event.name) &&
          event.atMs <= prepCreated.atMs,
      );
      const drainDoneAt = Math.max(cordonAtMs, ...drained.map((event) => event.atMs));
      const changes = power.filter(
        (event) => event.nodeName === donor && event.atMs >= prepCreated.atMs && event.atMs <= uncordonAtMs,
      );
      const at = (previous: string, state: string) =>
        changes.find((event) => event.previous === previous && event.state === state)?.atMs;
      const down = at('running', 'stopping');
      const stopped = at('stopping', 'stopped');
      const starting = at('stopped', 'starting');
      const running = at('starting', 'running');
      if (down === undefined || stopped === undefined || starting === undefined || running === undefined)
        return undefined;
      const s = (ms: number) => Math.round(ms / 1000);
      const floorMs =
        drainDoneAt - cordonAtMs + (down - prepCreated.atMs) + (stopped - down) + (running - starting);
      return {
        drainS: s(drainDoneAt - cordonAtMs),
        prepPodS: s(down - prepCreated.atMs),
        stopS: s(stopped - down),
        startS: s(running - starting),
        floorS: s(floorMs),
        overheadS: s(uncordonAtMs - cordonAtMs - floorMs),
        afterDrainS: s(prepCreated.atMs - drainDoneAt),
        stoppedToStartS: s(starting - stopped),
        runningToUncordonS: s(uncordonAtMs - running),
      };
    },
    stop() {
      stopPods();
      stopPower();
    },
  };
}
