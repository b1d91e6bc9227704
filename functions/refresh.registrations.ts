/**
 * Registers the refresh orchestrations and their activities with the Functions host. Thin: each
 * activity resolves the worker's dependencies once (composition root) and calls the shared handler.
 */
import * as df from 'durable-functions';

import type { ActivityHandler } from '../shared/application/refresh-activities.js';
import { ACTIVITY } from '../shared/application/refresh-contracts.js';
import { refreshActivities } from '../shared/composition-root.js';
import { ORCHESTRATORS } from './orchestrations/index.js';

for (const [name, handler] of Object.entries(ORCHESTRATORS)) {
  df.app.orchestration(name, handler);
}

for (const name of Object.values(ACTIVITY)) {
  df.app.activity(name, {
    handler: async (input: unknown): Promise<unknown> => {
      const activities: Record<string, ActivityHandler> = await refreshActivities();
      const activity = activities[name];
      if (activity === undefined) throw new Error(`running activity ${name}: no handler is bound`);
      return activity(input);
    },
  });
}
