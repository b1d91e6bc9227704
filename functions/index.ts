/** Entry point of the function app (package.json `main`): importing a module registers its functions. */
import './refresh.registrations.js';
import './triggers/index.js';
