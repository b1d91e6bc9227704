/**
 * Drain-and-stop's copy-scrub, before the attach: a one-shot pod installs the copy guard on the donor
 * (shared/domain/live-capture.ts). Live capture's freeze pod installs it with the freeze; here the donor
 * was stopped for its snapshot and no freeze runs, yet the copy attached to it still carries its root's
 * identifiers, so the guard is needed all the same.
 */
import type { Task } from 'durable-functions';

import { buildCopyGuardScript } from '../../../../shared/domain/live-capture.js';
import { LIVE_POD_GRACE_SECONDS } from '../../../../shared/domain/live-leftovers.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { StepFailure } from '../../step-failure.js';
import { LIVE_POLL } from '../../timing.js';
import { pollUntil } from '../../waits.js';
import { setStatus } from '../run.js';
import { COPY_GUARD_SECONDS } from './freeze.js';
import { type LiveScope, startLivePodOnDonor } from './scope.js';

/** Runs the guard pod for the copy's LUN until it succeeded, then deletes it. */
export function* installCopyGuard(scope: LiveScope, plannedLun: number): Generator<Task, void, unknown> {
  const { run, input, made } = scope;
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;
  setStatus(run, 'guarding-copy', `LUN ${plannedLun}`);
  const guardPod = { cluster, namespace: settings.prepNamespace, name: input.guardPodName };
  made.guardPod = true;
  yield* startLivePodOnDonor(scope, {
    name: input.guardPodName,
    script: buildCopyGuardScript({
      unit: input.copyGuardUnit,
      scriptPath: input.copyGuardScript,
      lun: plannedLun,
      rootPartition: scope.rootPartition,
      temporary: scope.temporary,
      maxSeconds: COPY_GUARD_SECONDS,
      mountPoint: input.mountPoint,
    }),
    role: 'guard',
    step: 'guarding-copy',
  });
  yield* pollUntil(context, {
    step: 'guarding-copy',
    intervalSeconds: LIVE_POLL.freezePod.interval,
    timeoutSeconds: LIVE_POLL.freezePod.timeout,
    read: function* () {
      return {
        phase: yield* call(context, activities.readPrepPod, guardPod, { step: 'guarding-copy' }),
      };
    },
    done: ({ phase }) => {
      if (phase === 'Failed' || phase === 'Absent') {
        throw StepFailure.terminal(
          'guarding-copy',
          'CopyGuardFailed',
          `the guard pod ${settings.prepNamespace}/${input.guardPodName} on node ${node} ${phase === 'Failed' ? 'failed' : 'disappeared'}; the copy was not attached and was deleted, nothing was built`,
          `see its logs (kubectl -n ${settings.prepNamespace} logs ${input.guardPodName}): the host needs systemd-run`,
        );
      }
      return phase === 'Succeeded';
    },
    describe: ({ phase }) => `guard pod ${input.guardPodName} is ${phase}`,
    advice: `check that node ${node} can pull capture.prepImage`,
  });
  yield* call(
    context,
    activities.deleteLivePod,
    { ...guardPod, gracePeriodSeconds: LIVE_POD_GRACE_SECONDS },
    { step: 'guarding-copy' },
  );
  made.guardPod = false;
}
