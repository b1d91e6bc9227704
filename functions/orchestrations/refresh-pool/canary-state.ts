/**
 * What the canary phase and its clean-up share (canary.phase.ts, canary-cleanup.ts): how far the canary
 * got, the scale set it works on, and the wait for the model's image.
 */
import type { Task } from 'durable-functions';

import type { CanaryObservation } from '../../../shared/domain/canary.js';
import type { CanaryRecord } from '../../../shared/domain/canary-record.js';
import { sameResourceId } from '../../../shared/domain/resource-id.js';
import { activities } from '../../activities.js';
import { call } from '../call.js';
import { EXPECTED, POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';

/** Where the canary got to: what the give-back must undo. */
export interface CanaryProgress {
  /** The record the pin writes, once the pin was requested (it may have happened even if the call failed). */
  record?: CanaryRecord;
  /** The tags the pin left and the etag then: the instances' record is written from them, unread. */
  pinned?: { readonly tags: Readonly<Record<string, string>>; readonly etag: string };
  /** The tags the instances' record left and the etag then: the model's update starts from them. */
  recorded?: { readonly tags: Readonly<Record<string, string>>; readonly etag: string };
  scaleOutRequested: boolean;
  instances: string[];
  others: string[];
  /** Check pod names by canary instance. */
  checkPods: Record<string, string>;
  /** The last observations (node names for a kept canary). */
  observations: readonly CanaryObservation[];
}

/** A canary that has not started: nothing to give back yet. */
export function newCanaryProgress(): CanaryProgress {
  return { scaleOutRequested: false, instances: [], others: [], checkPods: {}, observations: [] };
}

/** Waits until the model's update finished and its image is `imageId`. */
export function* waitForModelImage(
  run: RefreshRun,
  imageId: string | undefined,
  step: 'restoring-model',
): Generator<Task, void, unknown> {
  const { context, cluster } = run;
  const scaleSet = scaleSetRefOf(run);
  yield* pollUntil(context, {
    step,
    ...EXPECTED.scaleSetUpdate,
    timeoutSeconds: POLL.scaleSetUpdate.timeout,
    read: () => call(context, activities.readScaleSetImage, { cluster, scaleSet }, { step }),
    done: (view) =>
      view.provisioningState !== 'Updating' &&
      (imageId === undefined ? view.imageId === undefined : sameResourceId(view.imageId, imageId)),
    describe: (view) => `model image ${view.imageId ?? 'marketplace'} (${view.provisioningState})`,
  });
}

export function scaleSetRefOf(run: RefreshRun): {
  subscriptionId: string;
  resourceGroup: string;
  name: string;
} {
  const { subscriptionId, resourceGroup, name } = run.plan.scaleSet;
  return { subscriptionId, resourceGroup, name };
}
