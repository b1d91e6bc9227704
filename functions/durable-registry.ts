/**
 * Everything the durable host runs, bound to the product's dependencies: the orchestrators by name and
 * every catalogue activity by name. The function app registers exactly this (refresh.registrations.ts);
 * the CLI and the tests hand it to the local runner. Nothing else touches the activity table.
 */
import type { OrchestrationHandler } from 'durable-functions';

import type { BoundActivity } from '../shared/application/activities/catalogue.js';
import { bindActivities } from '../shared/application/activities/catalogue.js';
import type { RefreshDependencies } from '../shared/application/refresh-dependencies.js';
import { ORCHESTRATORS } from './orchestrations/index.js';

export interface DurableRegistry {
  readonly orchestrators: Readonly<Record<string, OrchestrationHandler>>;
  readonly activities: Readonly<Record<string, BoundActivity>>;
}

/** `deps` may be a function: the function app builds its composition on the first activity. */
export function durableRegistry(deps: RefreshDependencies | (() => RefreshDependencies)): DurableRegistry {
  return { orchestrators: ORCHESTRATORS, activities: bindActivities(deps) };
}
