/** Entry point of the function app (package.json `main`): importing a module registers its functions. */
import './refresh.registrations.js';
import './triggers/index.js';

import { startWorkerTelemetry } from '../shared/composition-root.js';

// Metrics: the worker composes its dependencies on the first activity, after this module has
// finished loading, so the composition takes the distro's meter provider (none without a connection string).
await startWorkerTelemetry();
