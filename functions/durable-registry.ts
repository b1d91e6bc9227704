/**
 * Everything the durable host runs, bound to the product's dependencies: the orchestrators by name and
 * every catalogue activity by name. The function app registers exactly this (refresh.registrations.ts);
 * the CLI and the tests hand it to the local runner. Nothing else touches the activity table.
 */
import type { InvocationContext } from '@azure/functions';
import type { OrchestrationHandler } from 'durable-functions';

import type { BoundActivity } from '../shared/application/activities/catalogue.js';
import { bindActivities } from '../shared/application/activities/catalogue.js';
import type { RefreshDependencies } from '../shared/application/refresh-dependencies.js';
import type { InstanceStatusClient } from './instance-status.activity.js';
import {
  instanceStatusHandler,
  localDurableClient,
  READ_INSTANCE_STATUS,
} from './instance-status.activity.js';
import { ORCHESTRATORS } from './orchestrations/index.js';

export interface DurableRegistry {
  readonly orchestrators: Readonly<Record<string, OrchestrationHandler>>;
  /** Every activity the host runs: the catalogue's and the host's own (instance status). */
  readonly activities: Readonly<Record<string, BoundActivity | HostActivity>>;
  /** The catalogue's activities alone (tests wrap them to inject failures). */
  readonly catalogue: Readonly<Record<string, BoundActivity>>;
}

/** An activity that reads the host (instance-status.activity.ts): it takes the invocation context. */
export type HostActivity = (input: unknown, context: InvocationContext) => Promise<unknown>;

/**
 * `deps` may be a function: the function app builds its composition on the first activity. `clientOf`
 * finds the durable client of an invocation: the function app's binding; by default the local runner's.
 */
export function durableRegistry(
  deps: RefreshDependencies | (() => RefreshDependencies),
  clientOf: (context: InvocationContext) => InstanceStatusClient | undefined = localDurableClient,
): DurableRegistry {
  const catalogue = bindActivities(deps);
  return {
    orchestrators: ORCHESTRATORS,
    activities: { ...catalogue, [READ_INSTANCE_STATUS]: instanceStatusHandler(clientOf) },
    catalogue,
  };
}
