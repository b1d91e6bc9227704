/**
 * Capture mode `run-command`, for clusters that forbid privileged pods: Azure Run Command
 * (`RunShellScript`) runs the same per-flavour prep script as root on the donor — without its final
 * power-off, since a guest that powers off under the VM agent never reports the command's result —, then
 * the VM is powered off through the API (a graceful shutdown) and the capture goes on as in drain-and-stop.
 *
 * Crash-safe: the run command's handle is recorded in history once ARM accepted it, so a resumed run
 * keeps reading that command. If a crash lost the handle, the next start finds the command still executing
 * (`busy`) and asks again once it ended: the idempotent script may then run twice, but only while the VM
 * is running; it never runs on a VM that has stopped (`not-running`: nothing is run, the capture fails and
 * the node is given back).
 */
import type { Task } from 'durable-functions';

import type { BootstrapFlavour } from '../../../shared/domain/bootstrap-flavour.js';
import { buildPrepScript, prepScriptReport } from '../../../shared/domain/prep-script.js';
import { activities, type ActivityOutput } from '../../activities.js';
import { call } from '../call.js';
import { StepFailure } from '../step-failure.js';
import { POLL } from '../timing.js';
import { pollUntil } from '../waits.js';
import type { RefreshRun } from './run.js';
import { setStatus } from './run.js';

/** A read of the donor instance (activity readInstance). */
export type InstanceView = ActivityOutput<'readInstance'>;

export interface RunCommandPrep {
  readonly ancestry: string;
  readonly flavour: BootstrapFlavour;
}

/** Prepares the donor's disk by Run Command, powers it off through the API; returns the stopped instance. */
export function* prepareByRunCommand(
  run: RefreshRun,
  prep: RunCommandPrep,
): Generator<Task, InstanceView, unknown> {
  const { context, cluster, plan } = run;
  const settings = plan.settings;
  const instance = { cluster, scaleSet: plan.scaleSet, instanceId: run.donor.instanceId };
  const step = 'preparing-disk';
  const where =
    `instance ${run.donor.instanceId} of scale set ${plan.scaleSet.name} ` +
    `(az vmss run-command invoke -g ${plan.scaleSet.resourceGroup} -n ${plan.scaleSet.name} --instance-id ${run.donor.instanceId} …)`;
  const script = buildPrepScript({
    ancestry: prep.ancestry,
    flavour: prep.flavour,
    powerOff: false,
    reportExitStatus: true,
  });

  // Ask for the command, waiting out one still executing on the VM (ours, whose handle a crash lost).
  const started = yield* pollUntil(context, {
    step,
    intervalSeconds: POLL.runCommand.interval,
    timeoutSeconds: settings.runCommandTimeoutSeconds,
    read: () =>
      call(context, activities.startRunCommandPrep, { ...instance, script, fence: run.fence }, { step }),
    done: (start) => {
      if (start.kind === 'not-running') {
        throw StepFailure.terminal(
          step,
          'DonorNotRunning',
          `${where} is ${start.powerState}, not running: its disk was not prepared and nothing was captured`,
          'run again once the instance runs, or name another node (--node)',
        );
      }
      return start.kind === 'started';
    },
    describe: () => `a run command was still executing on ${where}`,
    advice:
      'check the VM agent of the instance (a run command stuck for 90 minutes is ended by Azure), then run again',
  });
  if (started.kind !== 'started') {
    throw StepFailure.terminal(step, 'RunCommandNotStarted', `no run command was started on ${where}`);
  }

  const result = yield* pollUntil(context, {
    step,
    intervalSeconds: POLL.runCommand.interval,
    timeoutSeconds: settings.runCommandTimeoutSeconds,
    read: () =>
      call(
        context,
        activities.readRunCommandPrep,
        { cluster, scaleSet: plan.scaleSet, handle: started.handle },
        { step },
      ),
    done: (state) => state.state !== 'running',
    describe: () => `the run command on ${where} is still running`,
    advice: 'raise capture.runCommandTimeout, or check the VM agent of the instance',
  });
  if (result.state === 'failed') {
    throw StepFailure.terminal(
      step,
      'RunCommandFailed',
      `the run command on ${where} failed: ${result.message}`,
      'check the VM agent (waagent) of the instance and its Run Command extension; the node was given back',
    );
  }
  if (result.state === 'running') {
    throw StepFailure.terminal(
      step,
      'PrepScriptFailed',
      `the prep script on ${where} gave no result`,
      'the disk was not powered off or captured; the node was given back',
    );
  }
  // Run Command says "Enable succeeded" whatever the script's exit status (docs/design.md#capture): only
  // the status line the script prints last decides; stderr alone is neither success nor failure.
  const report = prepScriptReport(result.stdout, result.stderr);
  if (report.kind !== 'succeeded') {
    throw StepFailure.terminal(
      step,
      'PrepScriptFailed',
      report.kind === 'failed'
        ? `the prep script failed on ${where}: it exited ${report.exitStatus}; ${report.detail}`
        : `the prep script on ${where} did not report its exit status (cut short, or its output lost); ${report.detail}`,
      'the disk was not powered off or captured; the node was given back',
    );
  }

  setStatus(run, 'waiting-for-power-off');
  yield* call(
    context,
    activities.requestInstancePowerOff,
    { ...instance, fence: run.fence },
    { step: 'waiting-for-power-off' },
  );
  return yield* pollUntil(context, {
    step: 'waiting-for-power-off',
    intervalSeconds: POLL.powerOff.interval,
    timeoutSeconds: POLL.powerOff.timeout,
    read: () => call(context, activities.readInstance, instance, { step: 'waiting-for-power-off' }),
    done: (view) => isStopped(run, view),
    describe: (view) => `instance ${run.donor.instanceId} is ${view.powerState}`,
  });
}

/** The donor is stopped (or deallocated); a donor deleted meanwhile fails the capture, naming why. */
export function isStopped(run: RefreshRun, view: InstanceView): boolean {
  if (!view.exists) {
    throw StepFailure.terminal(
      'waiting-for-power-off',
      'DonorDeleted',
      `instance ${run.donor.instanceId} of scale set ${run.plan.scaleSet.name} was deleted during the capture ` +
        `(scaled in by cluster-autoscaler or an operator?); nothing was captured`,
      'run again, or name another node (--node)',
    );
  }
  return view.powerState === 'stopped' || view.powerState === 'deallocated';
}
