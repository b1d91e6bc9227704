/**
 * The app settings of a Functions host run against a simulator (docs/local-host.md): the
 * `local.settings.json` that `npm run sim -- --function-app-settings <file>` writes from the simulator's
 * connection, so `func start` reaches it through documented settings only.
 */
import { readFile, writeFile } from 'node:fs/promises';

import { settingsForConnection, SIM_ARM_TOKEN } from './app-settings.js';
import type { SimulatorConnection } from './connection.js';

/** The form Core Tools reads (`func start`) and the CLI's `--settings` too. */
export interface LocalSettingsFile {
  readonly IsEncrypted: false;
  readonly Values: Readonly<Record<string, string>>;
}

/**
 * Every value the host and the app need against this simulator: Azurite for the host's storage, the
 * clusters with their service-account tokens by env reference, and the simulator seam.
 */
export function functionAppSettingsFor(connection: SimulatorConnection): LocalSettingsFile {
  // The simulator seam's keys (shared/config/settings-keys.ts SIMULATOR_SETTINGS_KEYS; the simulator imports
  // nothing of the product: tests/sim/function-app-settings.test.ts checks every key is one the app reads).
  const seam: Record<string, string> = {
    VMSSP_SIMULATOR: 'true',
    VMSSP_SIMULATOR_ARM_ENDPOINT: connection.armEndpoint,
    VMSSP_SIMULATOR_CA: connection.caPem,
    VMSSP_SIMULATOR_ARM_TOKEN: SIM_ARM_TOKEN,
  };
  return {
    IsEncrypted: false,
    Values: {
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      FUNCTIONS_WORKER_RUNTIME: 'node',
      // host.json and the triggers bind %VMSSP_TASK_HUB%, %VMSSP_SCHEDULE%, %VMSSP_REAPER_SCHEDULE% and
      // %VMSSP_REBOOT_QUEUE%: the host does not start unless each is an app setting (the app's defaults are
      // invisible to it). tests/sim/function-app-settings.test.ts keeps these equal to settings.ts's defaults.
      VMSSP_SCHEDULE: '0 0 3 * * *',
      VMSSP_REAPER_SCHEDULE: '0 */5 * * * *',
      VMSSP_TASK_HUB: 'vmssprototype',
      VMSSP_REBOOT_QUEUE: 'vmss-prototype-reboots',
      ...settingsForConnection(connection),
      ...seam,
    },
  };
}

export class SettingsFileRefused extends Error {
  override readonly name = 'SettingsFileRefused';
}

/**
 * Writes the settings (owner-only: they hold the simulator's tokens). A file that is there already is
 * replaced only when it is one of these (VMSSP_SIMULATOR=true): a developer's own local.settings.json,
 * pointing at real clusters, is never overwritten.
 */
export async function writeFunctionAppSettings(path: string, connection: SimulatorConnection): Promise<void> {
  let existing: string | undefined;
  try {
    existing = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existing !== undefined && !isSimulatorSettings(existing)) {
    throw new SettingsFileRefused(
      `writing function app settings to ${path}: the file exists and is not one this command wrote ` +
        '(its Values have no VMSSP_SIMULATOR "true"); move it away or name another file',
    );
  }
  const text = `${JSON.stringify(functionAppSettingsFor(connection), null, 2)}\n`;
  await writeFile(path, text, { encoding: 'utf8', mode: 0o600 });
}

function isSimulatorSettings(text: string): boolean {
  try {
    const values = (JSON.parse(text) as { Values?: Record<string, unknown> } | null)?.Values;
    return values?.['VMSSP_SIMULATOR'] === 'true';
  } catch {
    return false;
  }
}
