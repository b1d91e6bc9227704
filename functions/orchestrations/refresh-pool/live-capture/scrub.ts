/** 3b. Scrub the attached copy: a pod on the donor mounts it and removes what must not be cloned. */
import type { Task } from 'durable-functions';

import { buildScrubScript } from '../../../../shared/domain/live-capture.js';
import { activities } from '../../../activities.js';
import { call } from '../../call.js';
import { StepFailure } from '../../step-failure.js';
import { LIVE_POLL } from '../../timing.js';
import { pollUntil } from '../../waits.js';
import { isoNow, setStatus } from '../run.js';
import type { AttachedCopy } from './attach.js';
import { type LiveScope, rebooted, rebootedWithCopy, startLivePodOnDonor } from './scope.js';

/** Runs the scrub pod on the copy at `attached.lun` until it succeeded, then deletes it. */
export function* scrubCopy(scope: LiveScope, attached: AttachedCopy): Generator<Task, void, unknown> {
  const { run, input, made } = scope;
  const { context, cluster, plan } = run;
  const node = run.donor.node;
  const settings = plan.settings;
  const { lun, readySince } = attached;
  setStatus(run, 'scrubbing-copy', `LUN ${lun}`);
  const ancestry = `${isoNow(run)} built image ${input.versionName} of ${cluster}/${run.input.pool} from node ${node} (run ${run.runId}, ${plan.capture?.mode === 'live' ? 'live capture' : 'drain-and-stop, scrubbed copy'})`;
  const scrubPod = { cluster, namespace: settings.prepNamespace, name: input.scrubPodName };
  made.scrubPod = true;
  yield* startLivePodOnDonor(scope, {
    name: input.scrubPodName,
    script: buildScrubScript({
      ancestry,
      flavour: run.donor.flavour,
      lun,
      rootPartition: scope.rootPartition,
      mountPoint: input.mountPoint,
      temporary: scope.temporary,
    }),
    role: 'scrub',
    step: 'scrubbing-copy',
  });
  // The node is read with the pod: a donor that reboots meanwhile leaves a pod that may never end
  // (its container died with the host), and its copy must not be used.
  yield* pollUntil(context, {
    step: 'scrubbing-copy',
    intervalSeconds: LIVE_POLL.scrub.interval,
    timeoutSeconds: LIVE_POLL.scrub.timeout,
    read: function* () {
      const phase = yield* call(context, activities.readPrepPod, scrubPod, {
        step: 'scrubbing-copy',
      });
      const ready = yield* call(
        context,
        activities.readNodeReadySince,
        { cluster, node },
        { step: 'scrubbing-copy' },
      );
      return { phase, ready };
    },
    done: ({ phase, ready }) => {
      if (rebooted(readySince, ready)) throw rebootedWithCopy(run, 'scrubbing-copy', readySince, ready);
      if (phase === 'Failed' || phase === 'Absent') {
        throw StepFailure.terminal(
          'scrubbing-copy',
          'ScrubFailed',
          `the scrub pod ${settings.prepNamespace}/${input.scrubPodName} on node ${node} ${phase === 'Failed' ? 'failed' : 'disappeared'}; the copy was detached and deleted, nothing was built`,
          `see its logs (kubectl -n ${settings.prepNamespace} logs ${input.scrubPodName}); check capture.live.rootPartition, or set capture.mode to drain-and-stop`,
        );
      }
      return phase === 'Succeeded';
    },
    describe: ({ phase }) => `scrub pod ${input.scrubPodName} is ${phase}`,
  });
  yield* call(context, activities.deletePrepPod, scrubPod, { step: 'scrubbing-copy' });
  made.scrubPod = false;
}
