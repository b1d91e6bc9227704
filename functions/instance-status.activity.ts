/**
 * The one activity that reads the Durable host itself: the runtime status of an orchestration instance.
 * Orchestrators ask it before they start a pool's singleton refresh as a sub-orchestration, because a
 * backend does not refuse a start over a running instance id: the Azure Storage backend writes a second
 * ExecutionStarted over it and the running refresh is replaced mid-capture (seen on the real Functions
 * host). A start that races this check is still held off by the pool lease (docs/design.md).
 *
 * The status comes from the durable client binding (`df.input.durableClient()`, registered in
 * refresh.registrations.ts); the local runner hands its own client to every activity under
 * LOCAL_DURABLE_CLIENT_INPUT (cli/runner/instance.ts).
 */
import type { InvocationContext } from '@azure/functions';
import { z } from 'zod';

import type { ActivityResult } from '../shared/application/activities/activity.js';
import type { InstanceStatus } from '../shared/application/singleton.js';
import { isActive } from '../shared/application/singleton.js';
import { messageOf } from '../shared/domain/errors.js';
import type { ActivityHandle } from './activities.js';
import type { FailedStep } from './orchestrations/step-failure.js';
import { STEP_NAMES } from './orchestrations/step-failure.js';

export const READ_INSTANCE_STATUS = 'readInstanceStatus';

/**
 * How durable-functions 3.x's `DurableClient.getStatus` reports an id no instance has: an error, from the
 * extension's HTTP 404 (lib/src/durableClient/DurableClient.js). The local runner's client says the same.
 */
const UNKNOWN_INSTANCE = /replied with HTTP 404 response/;

/** The `extraInputs` name under which the local runner gives an activity its durable client. */
export const LOCAL_DURABLE_CLIENT_INPUT = 'localDurableClient';

export interface InstanceStatusInput {
  readonly instanceId: string;
}

export interface InstanceActivity {
  /** Still owns its id (Running, Pending, ContinuedAsNew, Suspended): a start would replace it. */
  readonly active: boolean;
  /** Absent when no instance has the id. */
  readonly runtimeStatus?: string;
  /**
   * How a Failed instance failed, as the value its orchestration recorded in its custom status
   * (functions/orchestration.ts); absent when it recorded none (a failure of the host itself).
   */
  readonly failure?: FailedStep;
}

/** The failure value an orchestration records in its custom status before it ends Failed. */
const RecordedFailure = z.object({
  failure: z.object({
    step: z.enum(STEP_NAMES),
    kind: z.enum(['transient', 'terminal', 'not-found']),
    code: z.string(),
    message: z.string(),
    advice: z.string().optional(),
  }),
});

function recordedFailure(status: InstanceStatus): { failure?: FailedStep } {
  if (status.runtimeStatus !== 'Failed') return {};
  const parsed = RecordedFailure.safeParse(status.customStatus);
  return parsed.success ? { failure: parsed.data.failure } : {};
}

/** What the activity needs of a durable client (durable-functions' DurableClient has it). */
export interface InstanceStatusClient {
  getStatus(instanceId: string): Promise<InstanceStatus>;
}

export const readInstanceStatus: ActivityHandle<InstanceStatusInput, InstanceActivity> = {
  name: READ_INSTANCE_STATUS,
};

/** The handler, over the client the host gives the invocation. Never throws (activity.ts). */
export function instanceStatusHandler(
  clientOf: (context: InvocationContext) => InstanceStatusClient | undefined,
): (input: unknown, context: InvocationContext) => Promise<ActivityResult<InstanceActivity>> {
  return async (input, context) => {
    const instanceId =
      typeof input === 'object' && input !== null && 'instanceId' in input ? input.instanceId : undefined;
    if (typeof instanceId !== 'string' || instanceId === '') {
      return {
        ok: false,
        failure: {
          kind: 'terminal',
          code: 'InvalidActivityInput',
          message: `${READ_INSTANCE_STATUS}: instanceId must be a non-empty string`,
        },
      };
    }
    const client = clientOf(context);
    if (client === undefined) {
      return {
        ok: false,
        failure: {
          kind: 'terminal',
          code: 'NoDurableClient',
          message: `${READ_INSTANCE_STATUS}: the host gave this activity no durable client`,
          advice: 'register the activity with df.input.durableClient() as an extra input',
        },
      };
    }
    let status: InstanceStatus | undefined;
    try {
      // Called on the client itself: durable-functions' DurableClient has it on its prototype.
      status = await client.getStatus(instanceId);
    } catch (error) {
      const message = messageOf(error);
      // Never read as "not running": a start would then replace a running refresh.
      if (!UNKNOWN_INSTANCE.test(message)) {
        return {
          ok: false,
          failure: {
            kind: 'transient',
            code: 'InstanceStatusUnreadable',
            message: `${READ_INSTANCE_STATUS}: reading instance ${instanceId}: ${message}`,
          },
        };
      }
    }
    return {
      ok: true,
      value:
        status === undefined
          ? { active: false }
          : { active: isActive(status), runtimeStatus: status.runtimeStatus, ...recordedFailure(status) },
    };
  };
}

/** The local runner's client, found where it puts it. */
export function localDurableClient(context: InvocationContext): InstanceStatusClient | undefined {
  const client = context.extraInputs.get(LOCAL_DURABLE_CLIENT_INPUT) as InstanceStatusClient | undefined;
  return typeof client?.getStatus === 'function' ? client : undefined;
}
