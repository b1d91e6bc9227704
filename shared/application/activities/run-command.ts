/**
 * Activities of capture mode `run-command`: Azure Run Command prepares the donor's disk (no pod, no
 * privileged namespace), then the orchestrator powers the VM off through the API. Idempotent and
 * crash-safe: the run command's handle is in the orchestration's history, so a resumed run reads the
 * same command instead of starting another; a start that finds the VM no longer running runs nothing
 * (the script never runs twice on a VM that stopped); a start that finds a run command still executing
 * (ours, whose handle a crash lost) answers `busy`, and the orchestrator asks again once it finished.
 */
import { z } from 'zod';

import type { PowerState } from '../../domain/compute.js';
import { isRefreshError } from '../../domain/errors.js';
import { checkFence } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, InstanceInput, ScaleSetRefInput } from './inputs.js';

/** What asking for the prep run command came to. */
export type RunCommandStart =
  | { readonly kind: 'started'; readonly handle: string }
  /** A run command is executing on the VM (ours, from an attempt whose answer was lost). */
  | { readonly kind: 'busy' }
  /** The VM is not running: nothing was run. */
  | { readonly kind: 'not-running'; readonly powerState: PowerState };

/** Operation handles are serialized poller states: operation URLs, a few hundred characters. */
const Handle = z.string().min(1).max(8_000);

const startRunCommandPrep = defineActivity(
  'startRunCommandPrep',
  InstanceInput.extend({ script: z.string().min(1).max(16_000), fence: FenceInput }),
  async (deps, input): Promise<RunCommandStart> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    // A write to the donor: only while this run still holds the pool's lease.
    await checkFence(
      kube,
      input.fence,
      `running the prep script on instance ${input.instanceId}`,
      deps.now(),
    );
    const instance = await compute.instances.get(input.scaleSet, input.instanceId);
    if (instance.powerState !== 'running') return { kind: 'not-running', powerState: instance.powerState };
    try {
      return {
        kind: 'started',
        handle: await compute.runCommands.request(instance, input.script.split('\n')),
      };
    } catch (error) {
      if (isRefreshError(error) && error.code === 'RunCommandInProgress') return { kind: 'busy' };
      throw error;
    }
  },
);

const readRunCommandPrep = defineActivity(
  'readRunCommandPrep',
  ClusterInput.extend({ scaleSet: ScaleSetRefInput, handle: Handle }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    return compute.runCommands.get(input.scaleSet, input.handle);
  },
);

export const RUN_COMMAND_ACTIVITIES = { startRunCommandPrep, readRunCommandPrep } as const;
