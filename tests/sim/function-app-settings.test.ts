// Tests for the settings file a Functions host runs against a simulator with: what it holds, that the app
// accepts it as the simulator seam, the host's binding keys at the app's defaults, and its safe writing.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { loadSettings } from '../../shared/config/settings.js';
import { classifySettingsKey, SIMULATOR_SETTINGS_KEYS } from '../../shared/config/settings-keys.js';
import type { SimulatorConnection } from '../../sim/connection.js';
import {
  functionAppSettingsFor,
  SettingsFileRefused,
  writeFunctionAppSettings,
} from '../../sim/function-app-settings.js';

const PEM =
  '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUXk1hc2ltdWxhdG9yLWNh\n-----END CERTIFICATE-----\n';

const CONNECTION: SimulatorConnection = {
  armEndpoint: 'https://127.0.0.1:41001',
  caPem: PEM,
  subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
  adminToken: 'admin-token-not-for-the-app',
  clusters: [
    {
      name: 'prod',
      resourceGroup: 'rg-k8s-prod',
      kubeHttpsUrl: 'https://127.0.0.1:41002',
      serviceAccountToken: 'service-account-token-0123',
    },
  ],
};

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-fa-settings-'));
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

void describe('functionAppSettingsFor', () => {
  const file = functionAppSettingsFor(CONNECTION);

  void it('is accepted by loadSettings as the simulator seam', () => {
    const settings = loadSettings(file.Values);
    assert.deepEqual(settings.simulator, {
      armEndpoint: CONNECTION.armEndpoint,
      caPem: PEM.trim(),
      armToken: file.Values['VMSSP_SIMULATOR_ARM_TOKEN'],
    });
    assert.deepEqual(
      settings.clusters.map((cluster) => [cluster.name, cluster.apiServer.url]),
      [['prod', 'https://127.0.0.1:41002']],
    );
  });

  void it('sets every simulator key, the host keys for Azurite and Node, and nothing unknown', () => {
    // The wait scale is optional: a host against `npm run sim` waits as against Azure unless asked.
    for (const key of SIMULATOR_SETTINGS_KEYS.filter((key) => key !== 'VMSSP_SIMULATOR_WAIT_SCALE'))
      assert.ok(file.Values[key], key);
    assert.equal(file.Values['VMSSP_SIMULATOR_WAIT_SCALE'], undefined);
    assert.equal(file.Values['AzureWebJobsStorage'], 'UseDevelopmentStorage=true');
    assert.equal(file.Values['FUNCTIONS_WORKER_RUNTIME'], 'node');
    for (const key of Object.keys(file.Values)) assert.notEqual(classifySettingsKey(key), 'unknown', key);
    assert.ok(!JSON.stringify(file).includes(CONNECTION.adminToken), 'the admin token is not the app’s');
  });

  void it('gives the host its binding keys at the values the app defaults to', () => {
    const defaults = loadSettings({
      VMSSP_CLUSTERS: file.Values['VMSSP_CLUSTERS'],
      ...secretsOf(file.Values),
    });
    assert.equal(file.Values['VMSSP_SCHEDULE'], defaults.schedule);
    assert.equal(file.Values['VMSSP_REAPER_SCHEDULE'], defaults.reaperSchedule);
    assert.equal(file.Values['VMSSP_TASK_HUB'], defaults.taskHub);
    assert.equal(file.Values['VMSSP_REBOOT_QUEUE'], defaults.rebootQueue);
  });
});

void describe('writeFunctionAppSettings', () => {
  void it('writes local.settings.json form, readable by its owner only', async () => {
    const path = join(work, 'local.settings.json');
    await writeFunctionAppSettings(path, CONNECTION);
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), functionAppSettingsFor(CONNECTION));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    await writeFunctionAppSettings(path, { ...CONNECTION, armEndpoint: 'https://127.0.0.1:42001' });
    assert.match(await readFile(path, 'utf8'), /127\.0\.0\.1:42001/);
  });

  void it('never replaces a developer’s own settings file', async () => {
    const path = join(work, 'own.settings.json');
    const own = JSON.stringify({ IsEncrypted: false, Values: { VMSSP_CLUSTERS: '[]' } });
    await writeFile(path, own);
    await assert.rejects(writeFunctionAppSettings(path, CONNECTION), SettingsFileRefused);
    assert.equal(await readFile(path, 'utf8'), own);
  });
});

function secretsOf(values: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([key]) => classifySettingsKey(key) === 'secret'));
}
