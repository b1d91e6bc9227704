/**
 * The exact set of app settings (environment keys) the app reads, and the Functions host's own keys, so that
 * Bicep `appSettings` and local.settings.sample.json can be checked against them.
 */

import { SECRET_SETTING_PREFIX } from './secret-reference.js';

/** Every key `loadSettings` reads. Nothing else in the codebase reads the environment. */
export const SETTINGS_KEYS = [
  /** Required. JSON array of clusters (schema in settings.ts); secrets only as references. */
  'VMSSP_CLUSTERS',
  /** Timer trigger NCRONTAB, 6 fields, UTC; default `0 0 3 * * *`. Bind as `%VMSSP_SCHEDULE%`. */
  'VMSSP_SCHEDULE',
  /** The reaper's timer NCRONTAB, 6 fields, UTC; default every 5 minutes. Bind as `%VMSSP_REAPER_SCHEDULE%`. */
  'VMSSP_REAPER_SCHEDULE',
  /** Durable task hub name; default `vmssprototype`. host.json `hubName` should read `%VMSSP_TASK_HUB%`. */
  'VMSSP_TASK_HUB',
  /** Pools refreshed at the same time across all clusters, 1–20; default 4. */
  'VMSSP_MAX_PARALLEL_POOLS',
  /** Pools of one Azure subscription refreshed at once by the schedule, 1–100; default 8. */
  'VMSSP_MAX_POOLS_PER_SUBSCRIPTION',
  /** Storage queue Event Grid delivers reboot notices to; default `vmss-prototype-reboots`. */
  'VMSSP_REBOOT_QUEUE',
  /** Wait after the last reboot notice of a pool before refreshing it; default `10m`. */
  'VMSSP_QUIET_PERIOD',
  /** Optional Event Grid topic endpoint for run events (published with the managed identity, no key). */
  'VMSSP_EVENTS_TOPIC_ENDPOINT',
  /** Optional client id of the user-assigned managed identity the app authenticates with. */
  'AZURE_CLIENT_ID',
] as const;

export type SettingsKey = (typeof SETTINGS_KEYS)[number];

/**
 * The simulator seam (docs/local-host.md): keys that point the app at `npm run sim` instead of Azure, read
 * by `loadSettings` into `Settings.simulator`. Never set by infra/ (tests/infra checks) and refused on an
 * App Service instance, so they are not among SETTINGS_KEYS, which a deployment sets in full.
 */
export const SIMULATOR_SETTINGS_KEYS = [
  /** `true` turns the seam on; anything else set among these keys without it is an error. */
  'VMSSP_SIMULATOR',
  /** The simulator's ARM endpoint, https on a loopback host. */
  'VMSSP_SIMULATOR_ARM_ENDPOINT',
  /** PEM text of the CA that signs the simulator's certificates. */
  'VMSSP_SIMULATOR_CA',
  /** The bearer token sent to the simulator's ARM instead of an Entra ID token. A secret. */
  'VMSSP_SIMULATOR_ARM_TOKEN',
  /** Optional, 0.01–1: shortens the product's poll schedules for a fast simulator at ×1 (docs/real-engine.md). */
  'VMSSP_SIMULATOR_WAIT_SCALE',
] as const;

export type SimulatorSettingsKey = (typeof SIMULATOR_SETTINGS_KEYS)[number];

/** Keys that must be set; the others have defaults or are optional. */
export const REQUIRED_SETTINGS_KEYS: readonly SettingsKey[] = ['VMSSP_CLUSTERS'];

/** Prefix of this app's keys: an unknown key with it is a typo and is reported. */
export const SETTINGS_KEY_PREFIX = 'VMSSP_';

export { SECRET_SETTING_PREFIX };

/**
 * Keys the Functions host and its extensions read. They are not part of `Settings`.
 * - `AzureWebJobsStorage`: connection string; locally `UseDevelopmentStorage=true` (Azurite).
 * - `AzureWebJobsStorage__*`: identity-based connection used in Azure (no account keys): `accountName`,
 *   `credential` (`managedidentity`), `clientId` (user-assigned identity), or explicit service URIs.
 *   Durable Functions' storage provider and the reboot-queue trigger both use this connection.
 * - `FUNCTIONS_WORKER_RUNTIME`: `node`; needed locally. On Flex Consumption the runtime is set in
 *   `functionAppConfig.runtime` and this key must not be an app setting
 *   (https://learn.microsoft.com/azure/azure-functions/functions-app-settings#flex-consumption-plan-deprecations).
 * - `APPLICATIONINSIGHTS_CONNECTION_STRING`, `APPLICATIONINSIGHTS_AUTHENTICATION_STRING`: telemetry, the
 *   latter for Entra-authenticated ingestion (`Authorization=AAD;ClientId=<identity>`).
 * - `DURABLE_TASK_SCHEDULER_CONNECTION_STRING`: the Durable Task Scheduler backend's endpoint and identity
 *   (`Endpoint=…;Authentication=ManagedIdentity;ClientID=…`), set only when the deployment chooses it.
 * - `AzureFunctionsJobHost__*`: overrides of host.json values, e.g.
 *   `AzureFunctionsJobHost__extensions__durableTask__storageProvider__type`
 *   (https://learn.microsoft.com/azure/azure-functions/functions-host-json#override-hostjson-values).
 */
export const HOST_SETTINGS_KEYS = [
  'AzureWebJobsStorage',
  'FUNCTIONS_WORKER_RUNTIME',
  'APPLICATIONINSIGHTS_CONNECTION_STRING',
  'APPLICATIONINSIGHTS_AUTHENTICATION_STRING',
  'DURABLE_TASK_SCHEDULER_CONNECTION_STRING',
] as const;

const HOST_SETTINGS_KEY_PREFIXES = ['AzureWebJobsStorage__', 'AzureFunctionsJobHost__'] as const;

export type SettingsKeyKind = 'app' | 'simulator' | 'secret' | 'host' | 'unknown';

/**
 * Classifies an app-setting key: one of ours, one of the simulator seam's, a secret setting
 * (`VMSSP_SECRET_*`) referenced from `VMSSP_CLUSTERS`, a host key, or unknown (a typo, or something
 * nothing reads).
 */
export function classifySettingsKey(key: string): SettingsKeyKind {
  if ((SETTINGS_KEYS as readonly string[]).includes(key)) return 'app';
  if ((SIMULATOR_SETTINGS_KEYS as readonly string[]).includes(key)) return 'simulator';
  if (key.startsWith(SECRET_SETTING_PREFIX) && key.length > SECRET_SETTING_PREFIX.length) return 'secret';
  if ((HOST_SETTINGS_KEYS as readonly string[]).includes(key)) return 'host';
  if (HOST_SETTINGS_KEY_PREFIXES.some((prefix) => key.startsWith(prefix) && key.length > prefix.length)) {
    return 'host';
  }
  return 'unknown';
}
