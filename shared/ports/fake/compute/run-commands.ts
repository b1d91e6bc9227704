/** The fake Run Command port: a command runs for its time on a running instance and ends as queued. */
import type { RunCommandState, ScaleSetInstance } from '../../../domain/compute.js';
import { NotFoundError, TerminalError, TransientError } from '../../../domain/errors.js';
import type { ScaleSetRef } from '../../../domain/resource-id.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { RunCommandsPort } from '../../compute/run-commands.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate, FakeRunCommand } from './estate.js';
import { instanceKey } from './keys.js';

export class FakeRunCommands implements RunCommandsPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  /** Every Run Command requested, in order (a test control, not the port). */
  requested(): readonly FakeRunCommand[] {
    return [...this.estate.runCommands];
  }

  request(instance: ScaleSetInstance, script: readonly string[]): Promise<string> {
    return this.log.call('runCommands.request', [instance, script], () => {
      const action = `running a command on instance ${instance.instanceId}`;
      const record = this.estate.instanceRecord(instance.scaleSet, instance.instanceId);
      if (this.estate.settleInstance(record).powerState !== 'running') {
        throw new TerminalError(
          'OperationNotAllowed',
          `${action}: the operation requires the VM to be running (OperationNotAllowed, HTTP 409)`,
        );
      }
      const key = instanceKey(instance.scaleSet, instance.instanceId);
      const busy = this.estate.runCommands.some(
        (command) =>
          instanceKey(command.scaleSet, command.instanceId) === key && this.estate.now() < command.finishesAt,
      );
      if (busy) {
        throw new TransientError(
          'RunCommandInProgress',
          `${action}: Run command extension execution is in progress (Conflict, HTTP 409)`,
        );
      }
      const command: FakeRunCommand = {
        handle: `fake-run-command-${this.estate.runCommands.length + 1}`,
        scaleSet: { ...instance.scaleSet },
        instanceId: instance.instanceId,
        script: [...script],
        finishesAt: this.estate.now() + this.estate.timings.runCommand,
        outcome: this.estate.runCommandOutcomes.shift() ?? 'succeeded',
      };
      this.estate.runCommands.push(command);
      return command.handle;
    });
  }

  get(scaleSet: ScaleSetRef, handle: string): Promise<RunCommandState> {
    return this.log.call('runCommands.get', [scaleSet, handle], (): RunCommandState => {
      const command = this.estate.runCommands.find((candidate) => candidate.handle === handle);
      if (command === undefined) {
        throw new NotFoundError('NotFound', `reading run command ${handle}: the operation was not found`);
      }
      if (this.estate.now() < command.finishesAt) return { state: 'running' };
      const status = (exit: number): string => {
        const trap = /trap '[^']*\$\?[^']*' EXIT/.exec(command.script.join('\n'));
        if (trap === null) return '';
        return `${/echo "?([^"$]*)\$\?/.exec(trap[0])?.[1] ?? ''}${exit}`;
      };
      switch (command.outcome) {
        case 'succeeded':
          return { state: 'succeeded', stdout: status(0), stderr: '' };
        case 'succeeded-with-warning':
          return { state: 'succeeded', stdout: status(0), stderr: 'sync: warning: fsync delayed' };
        case 'script-failed':
          return {
            state: 'succeeded',
            stdout: status(1),
            stderr: 'rm: cannot remove /etc/hostname: Read-only file system',
          };
        case 'script-failed-silently':
          return { state: 'succeeded', stdout: status(1), stderr: '' };
        case 'operation-failed':
          return {
            state: 'failed',
            code: 'VMAgentStatusCommunicationError',
            message: 'the VM agent did not report',
          };
      }
    });
  }
}
