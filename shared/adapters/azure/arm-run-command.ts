/**
 * Azure Run Command (`RunShellScript`, the action API `POST …/runCommand`) on a scale set member over
 * @azure/arm-compute: requested in one call that returns the operation's serialized poller state (the
 * handle an orchestration keeps in its history), and read back from that handle in another call — in
 * another process after a crash — with the SDK's `restorePoller`. The handle holds operation URLs, never
 * the script's output or a token.
 */
import type { RunCommandResult } from '@azure/arm-compute';
import { restorePoller } from '@azure/arm-compute';

import type { RunCommandState, ScaleSetInstance } from '../../domain/compute.js';
import { isRefreshError, TerminalError, TransientError } from '../../domain/errors.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import { describeScaleSet, isScaleSetInstanceId, resourceGroupOfId } from '../../domain/resource-id.js';
import type { RunCommandsPort } from '../../ports/compute/run-commands.js';
import type { ArmClients } from './arm-clients.js';
import { toRefreshError, withArmErrors } from './errors.js';

/** What ARM answers while a run command executes on the VM (one at a time per VM). */
const IN_PROGRESS = /run command extension execution is in progress/i;
/** Streams kept from a result: the end of each, enough for an error message. */
const STREAM_LIMIT = 2_000;

export class ArmRunCommands implements RunCommandsPort {
  constructor(private readonly clients: ArmClients) {}

  async request(instance: ScaleSetInstance, script: readonly string[]): Promise<string> {
    const action = `running a command on instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    const client = this.clients.client(instance.scaleSet.subscriptionId, action);
    const input = { commandId: 'RunShellScript', script: [...script] };
    try {
      return await withArmErrors(action, async () => {
        // The poller is a thenable: never awaited itself (that would wait for the script), only submitted.
        const poller = isScaleSetInstanceId(instance.resourceId)
          ? client.virtualMachineScaleSetVMs.runCommand(
              instance.scaleSet.resourceGroup,
              instance.scaleSet.name,
              instance.instanceId,
              input,
            )
          : client.virtualMachines.runCommand(
              resourceGroupOfId(instance.resourceId) ?? instance.scaleSet.resourceGroup,
              instance.instanceId,
              input,
            );
        await poller.submitted();
        return poller.serialize();
      });
    } catch (error) {
      if (isRefreshError(error) && IN_PROGRESS.test(error.message)) {
        throw new TransientError(
          'RunCommandInProgress',
          `${action}: a run command is still executing on the VM`,
          { cause: error, retryAfterMs: 15_000 },
        );
      }
      throw error;
    }
  }

  async get(scaleSet: ScaleSetRef, handle: string): Promise<RunCommandState> {
    const action = `reading the run command on scale set ${describeScaleSet(scaleSet)}`;
    const client = this.clients.client(scaleSet.subscriptionId, action);
    let poller;
    try {
      poller = restorePoller<never, RunCommandResult>(client, handle, client.virtualMachines.runCommand);
    } catch (error) {
      throw new TerminalError('InvalidRunCommandHandle', `${action}: the operation handle is not valid`, {
        cause: error,
      });
    }
    try {
      await poller.poll();
    } catch (error) {
      const mapped = toRefreshError(error, action);
      // The operation itself failed (the agent did not report, the VM went away): a value for the caller.
      if (mapped.kind === 'terminal') return { state: 'failed', code: mapped.code, message: mapped.message };
      throw mapped;
    }
    if (!poller.isDone) return { state: 'running' };
    return toRunCommandState(poller.result);
  }
}

/**
 * A finished run command's result. Linux (`RunShellScript`) reports one status whose message is
 * `Enable succeeded: \n[stdout]\n…\n[stderr]\n…` (`Enable failed: …` when the extension could not run
 * the script); Windows reports `ComponentStatus/StdOut/…` and `…/StdErr/…` statuses.
 */
export function toRunCommandState(result: RunCommandResult | undefined): RunCommandState {
  const statuses = result?.value ?? [];
  const stdOut = statuses.find((status) => /\/stdout\//i.test(status.code ?? ''));
  const stdErr = statuses.find((status) => /\/stderr\//i.test(status.code ?? ''));
  if (stdOut !== undefined || stdErr !== undefined) {
    return { state: 'succeeded', stdout: tail(stdOut?.message ?? ''), stderr: tail(stdErr?.message ?? '') };
  }
  const status = statuses[0];
  const message = status?.message ?? '';
  const failed = /\/failed$/i.test(status?.code ?? '') || /^Enable failed/i.test(message);
  const streams = /\[stdout\]\n?([\s\S]*?)\n?\[stderr\]\n?([\s\S]*)$/.exec(message);
  const stdout = tail((streams?.[1] ?? '').trim());
  const stderr = tail((streams?.[2] ?? '').trim());
  if (failed) {
    const first = message.split('\n')[0] ?? 'Enable failed';
    return {
      state: 'failed',
      code: 'RunCommandFailed',
      message: stderr === '' ? first : `${first} ${stderr}`,
    };
  }
  return { state: 'succeeded', stdout, stderr };
}

function tail(text: string): string {
  return text.length <= STREAM_LIMIT ? text : `…${text.slice(text.length - STREAM_LIMIT)}`;
}
