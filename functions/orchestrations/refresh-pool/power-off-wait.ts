/**
 * The power-off wait of a drain-and-stop capture: from the prep pod's creation until ARM reports the donor
 * stopped. The donor is out of service for all of it, and every ARM read spends the subscription's read
 * budget; the cluster's reads spend none. So the cluster is read first, every few seconds, until it says
 * the guest went down (shared/domain/power-off-signal.ts); ARM is read first when the guest has had the
 * time to halt from then (EXPECTED.guestHalt), then every few seconds across the range stops take. Without any signal (a
 * cluster that shows none) the first ARM read comes when it always did (EXPECTED.powerOff).
 *
 * Each ARM round reads the prep pod too: a script that failed (image pull, missing nsenter…) never powers
 * the host off, and waiting the full timeout for it would keep the donor out of service for nothing; a
 * script that ran to its end (disk prepared and synced) while the guest is still up gets the power-off
 * through the API instead.
 */
import type { Task } from 'durable-functions';

import {
  nextPowerOffStep,
  type PowerOffNext,
  type PowerOffWatch,
} from '../../../shared/domain/power-off-signal.js';
import { activities, type ActivityOutput } from '../../activities.js';
import { call } from '../call.js';
import { StepFailure } from '../step-failure.js';
import { EXPECTED, POLL, type PollSchedule } from '../timing.js';
import { pollUntil, scaledSeconds, sleepUnlessCancelled, unscaledSeconds } from '../waits.js';
import type { RefreshRun } from './run.js';
import { isStopped } from './run-command.js';

type InstanceView = ActivityOutput<'readInstance'>;

const STEP = 'waiting-for-power-off';

/**
 * Waits until the donor's instance is stopped, its prep pod `prepPodName` created at `createdAtMs`
 * (orchestration time); returns the stopped instance's view.
 */
export function* awaitDonorPowerOff(
  run: RefreshRun,
  prep: { readonly prepPodName: string; readonly createdAtMs: number },
): Generator<Task, InstanceView, unknown> {
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;
  const instance = { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId };
  const prepPod = { cluster, namespace: settings.prepNamespace, name: prep.prepPodName };
  const deadline = prep.createdAtMs + POLL.powerOff.timeout * 1000;
  const prepPodFailed = (): StepFailure =>
    StepFailure.terminal(
      'preparing-disk',
      'PrepPodFailed',
      `prep pod ${settings.prepNamespace}/${prep.prepPodName} on node ${node} failed before powering the host off`,
      `see its logs (kubectl -n ${settings.prepNamespace} logs ${prep.prepPodName}) and check ` +
        `capture.prepImage (it needs nsenter and must be pullable on the node)`,
    );

  const watch: PowerOffWatch = {
    prepPodCreatedAtMs: prep.createdAtMs,
    // The cluster's own timings (its node monitor's grace) are not ours to scale; our reads' are.
    signalIntervalSeconds: Math.max(1, scaledSeconds(context, POLL.powerOffSignals.interval)),
    nodeMonitorGraceSeconds: POLL.powerOffSignals.nodeMonitorGrace,
    stillUpAfterSeconds: POLL.powerOffSignals.stillUpAfter,
    guestHaltSeconds: scaledSeconds(context, EXPECTED.guestHalt.expectedSeconds),
    fallbackFirstReadSeconds: scaledSeconds(context, EXPECTED.powerOff.expectedSeconds),
  };
  // The cluster's reads: bounded, since every next read is later than the last and none comes after the
  // old schedule's first ARM read (nextPowerOffStep).
  let next: PowerOffNext = {
    kind: 'read-signals',
    atMs: prep.createdAtMs + watch.signalIntervalSeconds * 1000,
  };
  while (next.kind === 'read-signals') {
    yield* sleepUnlessCancelled(context, STEP, new Date(Math.min(deadline, next.atMs)));
    const signals = yield* call(
      context,
      activities.readPowerOffSignals,
      { ...prepPod, node },
      { step: STEP },
    );
    if (signals.podPhase === 'Failed') throw prepPodFailed();
    next = nextPowerOffStep(signals, watch, context.df.currentUtcDateTime.getTime());
  }

  const schedule: PollSchedule = next.why === 'guest-down' ? EXPECTED.guestHalt : EXPECTED.powerOff;
  let poweredOffThroughApi = false;
  let justPoweredOff = false;
  const { view: stopped } = yield* pollUntil(context, {
    step: STEP,
    intervalSeconds: schedule.intervalSeconds,
    lateShare: schedule.lateShare,
    steadyUntilSeconds: schedule.steadyUntilSeconds,
    backoffToSeconds: schedule.backoffToSeconds,
    sinceMs: next.sinceMs,
    // Already the run's scale of Azure's (the watch's figures are): pollUntil scales what it is given.
    expectedSeconds: unscaledSeconds(context, Math.max(0, (next.atMs - next.sinceMs) / 1000)),
    startedAtMs: prep.createdAtMs,
    timeoutSeconds: POLL.powerOff.timeout,
    read: function* () {
      const view = yield* call(context, activities.readInstance, instance, { step: STEP });
      const phase = yield* call(context, activities.readPrepPod, prepPod, { step: STEP });
      return { view, phase };
    },
    done: ({ view, phase }) => {
      if (isStopped(run, view)) return true;
      if (phase === 'Failed') throw prepPodFailed();
      return false;
    },
    between: function* ({ view, phase }) {
      if (phase === 'Succeeded' && view.powerState === 'running' && !poweredOffThroughApi) {
        yield* call(
          context,
          activities.requestInstancePowerOff,
          { ...instance, fence: run.fence },
          { step: STEP },
        );
        poweredOffThroughApi = true;
        justPoweredOff = true;
      }
    },
    // A stop asked through the API is read first when such a stop is usually done, not on the backoff of
    // a wait that began before it.
    nextDelaySeconds: () => {
      const delay = justPoweredOff ? scaledSeconds(context, EXPECTED.powerOff.expectedSeconds) : undefined;
      justPoweredOff = false;
      return delay;
    },
    describe: ({ view, phase }) =>
      `instance ${run.donor.instanceId} is ${view.powerState}, prep pod ${phase}`,
  });
  return stopped;
}
