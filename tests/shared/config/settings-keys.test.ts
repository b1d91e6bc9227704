// Tests for the app-setting key classification used to check Bicep and the local sample.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  classifySettingsKey,
  SETTINGS_KEYS,
  SIMULATOR_SETTINGS_KEYS,
} from '../../../shared/config/settings-keys.js';

void describe('classifySettingsKey', () => {
  const cases: readonly (readonly [string, string])[] = [
    ['VMSSP_CLUSTERS', 'app'],
    ['AZURE_CLIENT_ID', 'app'],
    ['VMSSP_SECRET_PROD_TOKEN', 'secret'],
    ['VMSSP_SECRET_', 'unknown'],
    ['AzureWebJobsStorage', 'host'],
    ['AzureWebJobsStorage__accountName', 'host'],
    ['AzureWebJobsStorage__', 'unknown'],
    ['FUNCTIONS_WORKER_RUNTIME', 'host'],
    ['APPLICATIONINSIGHTS_CONNECTION_STRING', 'host'],
    ['DURABLE_TASK_SCHEDULER_CONNECTION_STRING', 'host'],
    ['AzureFunctionsJobHost__extensions__durableTask__storageProvider__type', 'host'],
    ['AzureFunctionsJobHost__', 'unknown'],
    ['VMSSP_SCHEDUEL', 'unknown'],
    ['VMSSP_SIMULATOR', 'simulator'],
    ['VMSSP_SIMULATOR_ARM_ENDPOINT', 'simulator'],
    ['VMSSP_SIMULATOR_CA', 'simulator'],
    ['VMSSP_SIMULATOR_ARM_TOKEN', 'simulator'],
    ['VMSSP_SIMULATOR_TOKEN', 'unknown'],
  ];
  for (const [key, kind] of cases)
    void it(`${key} → ${kind}`, () => assert.equal(classifySettingsKey(key), kind));

  void it('lists each app key once', () => {
    assert.equal(new Set(SETTINGS_KEYS).size, SETTINGS_KEYS.length);
  });

  void it('keeps the simulator keys apart from the keys a deployment sets', () => {
    for (const key of SIMULATOR_SETTINGS_KEYS)
      assert.ok(!(SETTINGS_KEYS as readonly string[]).includes(key), key);
  });
});
