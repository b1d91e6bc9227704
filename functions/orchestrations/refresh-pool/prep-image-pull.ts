/**
 * The prep image pulled on the donor before anything happens to it (both capture modes): the donor is out
 * of service (drain-and-stop) or frozen (live) for the work itself, not for a registry download.
 */
import type { Task } from 'durable-functions';

import { activities } from '../../activities.js';
import { call } from '../call.js';
import { shielded } from '../cancel.js';
import { StepFailure } from '../step-failure.js';
import { POLL, PREP_IMAGE_PULL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/**
 * Pulls the prep image on the donor before the cordon or the freeze: a one-shot unprivileged pod with that
 * image (no host namespaces, every capability dropped) runs `true`; once it left Pending the node holds the
 * image. An image the node cannot pull fails here, before the node was touched.
 */
export function* pullPrepImage(run: RefreshRun, pullPodName: string): Generator<Task, void, unknown> {
  const { context, cluster, plan } = run;
  const settings = plan.settings;
  if (settings.prepImage === undefined) return; // refused below with its advice (PrepImageMissing)
  const step = 'pulling-prep-image';
  setStatus(run, step);
  const pod = { cluster, namespace: settings.prepNamespace, name: pullPodName };
  yield* call(
    context,
    activities.startPrepImagePull,
    { ...pod, node: run.donor.node, image: settings.prepImage, fence: run.fence },
    { step },
  );
  try {
    yield* pollUntil(context, {
      step,
      ...PREP_IMAGE_PULL,
      timeoutSeconds: POLL.prepImagePull.timeout,
      read: () => call(context, activities.readPrepImagePull, pod, { step }),
      done: (phase) => {
        if (phase === 'Failed' || phase === 'Absent') {
          throw StepFailure.terminal(
            step,
            'PrepImagePullFailed',
            `the pod pulling capture.prepImage on node ${run.donor.node} ended ${phase}; the node was not touched`,
            `check that node ${run.donor.node} can pull ${settings.prepImage ?? ''} and that it has sh`,
          );
        }
        return phase === 'Running' || phase === 'Succeeded';
      },
      describe: (phase) =>
        `pod ${settings.prepNamespace}/${pullPodName} is ${phase} (pulling the prep image)`,
      advice: `check that node ${run.donor.node} can pull capture.prepImage (kubectl -n ${settings.prepNamespace} describe pod ${pullPodName})`,
    });
  } finally {
    // Whatever ended the wait (a cancel included), the pod goes.
    yield* shielded(context, call(context, activities.deletePrepPod, pod, { step }));
  }
}
