/**
 * Gives the donor back after a capture, whatever happened during it: deletes the prep pod, starts the VM
 * if needed and waits until it runs, then restores the node's prior state (uncordoned only if we cordoned
 * it; our annotations removed). Failures are collected and returned, not thrown: the caller reports them
 * after the capture's own failure, which is the cause. No cancel interrupts it (cancel.ts `shielded`).
 */
import type { Task } from 'durable-functions';

import type { NodePriorState } from '../../../shared/application/donor-node.js';
import { activities, type ActivityOutput } from '../../activities.js';
import { call } from '../call.js';
import { noteGivenBack, shielded } from '../cancel.js';
import { asStepFailure, StepFailure, type StepName } from '../step-failure.js';
import { EXPECTED, POLL, RESTORE_RETRY } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

export interface GiveBackInput {
  readonly prior: NodePriorState;
  /** The prep pod to delete (drain-and-stop); absent when no pod was run (run-command). */
  readonly prepPodName?: string;
  /**
   * The run just saw the VM stopped (a completed capture), with its resource id: it is started without
   * reading it again. (A run recorded before the id was kept has none: its start reads the instance.)
   */
  readonly knownStopped?: { readonly resourceId?: string };
}

export interface GiveBackOutput {
  /** When the node was schedulable again (or given up on). */
  readonly restoredAt: Date;
  /** How long giving it back took (long when the API server was away). */
  readonly waitedMs: number;
  readonly failures: readonly StepFailure[];
}

export function giveBackDonor(
  run: RefreshRun,
  input: GiveBackInput,
): Generator<Task, GiveBackOutput, unknown> {
  return shielded(run.context, giveBack(run, input));
}

function* giveBack(run: RefreshRun, input: GiveBackInput): Generator<Task, GiveBackOutput, unknown> {
  const { context, cluster, plan } = run;
  const failures: StepFailure[] = [];
  const step: StepName = 'restoring-node';
  const startedAt = context.df.currentUtcDateTime.getTime();
  setStatus(run, step);
  // What the run waits for while the API server (or ARM) is away: the status says it, with the deadline.
  const onRetry = (failure: { message: string }, retryAt: Date, attempt: number): void =>
    setStatus(
      run,
      step,
      `waiting to give node ${run.donor.node} back (attempt ${attempt} failed: ${failure.message}); ` +
        `next attempt at ${retryAt.toISOString()}, trying until ` +
        `${new Date(startedAt + (RESTORE_RETRY.withinMs ?? 0)).toISOString()}`,
    );
  const prepPod =
    input.prepPodName === undefined
      ? undefined
      : { cluster, namespace: plan.settings.prepNamespace, name: input.prepPodName };
  const instance = { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId };
  // A prep pod we cannot delete yet (API server down) must not keep the VM from starting again:
  // its deletion is retried after the node is restored.
  let prepPodDeleted = true;
  if (prepPod !== undefined) {
    try {
      yield* call(context, activities.deletePrepPod, prepPod, { step });
    } catch {
      prepPodDeleted = false;
    }
  }
  // Starting the VM is fenced by the pool's lease, which lives in the cluster: it waits for an API server
  // (or ARM) that is away as long as the node's restore does (finding 1).
  const patient = { step, retry: RESTORE_RETRY, onRetry };
  let vmBack = false;
  let started = false;
  try {
    const view: Pick<
      ActivityOutput<'readInstance'>,
      'exists' | 'powerState' | 'resourceId'
    > = input.knownStopped !== undefined
      ? { exists: true, powerState: 'stopped', ...input.knownStopped }
      : yield* call(context, activities.readInstance, instance, patient);
    // Scaled in while we held it: there is no VM to start, and its node goes with it.
    if (view.exists) {
      const startAskedAt = context.df.currentUtcDateTime.getTime();
      const starting = view.powerState !== 'running' && view.powerState !== 'starting';
      if (starting) {
        const seen =
          view.resourceId === undefined
            ? {}
            : { seen: { resourceId: view.resourceId, powerState: view.powerState } };
        yield* call(
          context,
          activities.requestInstanceStart,
          { ...instance, fence: run.fence, ...seen },
          patient,
        );
        started = true;
      }
      yield* pollUntil(context, {
        step: 'starting-instance',
        intervalSeconds: POLL.start.interval,
        ...(starting ? { ...EXPECTED.start, sinceMs: startAskedAt } : {}),
        timeoutSeconds: POLL.start.timeout,
        read: () =>
          call(context, activities.readInstance, instance, { ...patient, step: 'starting-instance' }),
        done: (v) => v.powerState === 'running',
        describe: (v) => `instance ${run.donor.instanceId} is ${v.powerState}`,
        advice:
          `start it by hand (az vmss start -g ${plan.scaleSet.resourceGroup} -n ${plan.scaleSet.name} ` +
          `--instance-ids ${run.donor.instanceId}) and check its activity log for the cause (e.g. AllocationFailed)`,
      });
    }
    vmBack = true;
  } catch (error) {
    failures.push(asStepFailure(step, error));
  }
  if (vmBack) {
    // The VM runs (or is gone): the record that we stopped it goes. Left behind (ARM away), it is harmless:
    // the reaper finds the VM running and removes it.
    try {
      const written = run.stopRecord;
      const cleared = yield* call(
        context,
        activities.clearInstanceStop,
        {
          ...instance,
          runId: run.runId,
          // From what the record's write left (one conditional write, no read), when ARM gave its etag.
          ...(written?.etag === undefined
            ? {}
            : { written: { ...written, tags: { ...written.tags }, etag: written.etag } }),
          // A CAPZ pool's record is on the pool lease (capture.phase.ts).
          ...(plan.capz === undefined
            ? {}
            : { lease: { namespace: run.fence.namespace, name: run.fence.name } }),
        },
        { step },
      );
      // The model as that write left it, its image known: the image update is written from it, unread.
      if (cleared?.etag !== undefined && cleared.image !== undefined) {
        run.modelSeen = { tags: cleared.tags, etag: cleared.etag, image: cleared.image };
      }
    } catch {
      // kept for the reaper
    }
    try {
      yield* call(
        context,
        activities.restoreNode,
        { cluster, node: run.donor.node, prior: input.prior, runId: run.runId },
        { step, retry: RESTORE_RETRY, onRetry },
      );
      const cordon = input.prior.unschedulable ? 'left cordoned as it was' : 'uncordoned';
      noteGivenBack(
        context,
        `node ${run.donor.node} (${cordon}, our annotations removed${started ? ', its VM started' : ''})`,
      );
    } catch (error) {
      failures.push(asStepFailure(step, error));
    }
  } else {
    // The node's marks are the record that we stopped its VM: kept, so that `status` and `release` show
    // the node and the reaper starts the VM before it gives the node back.
    failures.push(
      StepFailure.terminal(
        step,
        'DonorKeptForReaper',
        `node ${run.donor.node} is kept cordoned and marked because its VM (instance ${run.donor.instanceId}) ` +
          'could not be started',
        'the next timer run or `vmss-prototype release` starts the VM and gives the node back',
      ),
    );
  }
  const restoredAt = context.df.currentUtcDateTime;
  if (prepPod !== undefined && !prepPodDeleted) {
    try {
      yield* call(context, activities.deletePrepPod, prepPod, { step, retry: RESTORE_RETRY, onRetry });
    } catch (error) {
      failures.push(asStepFailure(step, error));
    }
  }
  return { restoredAt, waitedMs: restoredAt.getTime() - startedAt, failures };
}
