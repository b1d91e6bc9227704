/**
 * Registers the orchestrations and every catalogue activity with the Functions host. Thin: the
 * worker's dependencies are composed on the first activity (settings are read then, not at import).
 */
import * as df from 'durable-functions';

import { workerComposition } from '../shared/composition-root.js';
import { durableRegistry } from './durable-registry.js';
import { READ_INSTANCE_STATUS } from './instance-status.activity.js';

const registry = durableRegistry(
  () => workerComposition().dependencies,
  (context) => df.getClient(context),
);

for (const [name, handler] of Object.entries(registry.orchestrators)) {
  df.app.orchestration(name, handler);
}

for (const [name, handler] of Object.entries(registry.activities)) {
  df.app.activity(name, {
    handler: (input: unknown, context) => handler(input, context),
    // The instance-status read needs the durable client binding (instance-status.activity.ts).
    ...(name === READ_INSTANCE_STATUS ? { extraInputs: [df.input.durableClient()] } : {}),
  });
}
