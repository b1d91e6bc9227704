// The deployment's two options beside the defaults, checked on the compiled template: the Durable Task
// Scheduler backend (durableBackend) and private networking (network: virtual network integration, private
// endpoints of storage and Key Vault). Each check fails when the option's wiring is removed; the defaults
// (Azure Storage task hub, public endpoints) are checked to stay what they were.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { z } from 'zod';

import { classifySettingsKey } from '../../shared/config/settings-keys.js';
import {
  type ArmTemplate,
  moduleDeployment,
  moduleParameters,
  moduleTemplateOf,
  onlyResource,
  parseTemplate,
  prop,
} from './arm-template.js';
import { buildOnce, describeRun, mainTemplate, passed } from './bicep-cli.js';
import { readRepoFile } from './repo-files.js';

const DURABLE_TASK_DATA_CONTRIBUTOR = '0ad04412-c4d5-4796-b79c-f76d14c8d402';
const PRIVATE_PARAMETERS = 'infra/main.private.bicepparam';

let main: ArmTemplate;

before(async () => {
  main = parseTemplate(await mainTemplate());
});

function module(symbol: string): ArmTemplate {
  return moduleTemplateOf(moduleDeployment(main, symbol));
}

function condition(symbol: string): unknown {
  return moduleDeployment(main, symbol).condition;
}

void describe('durableBackend: the Durable Task Scheduler beside the Azure Storage default', () => {
  void it('defaults to the Azure Storage task hub and offers the scheduler', () => {
    assert.equal(main.parameters['durableBackend']?.defaultValue, 'AzureStorage');
    assert.deepEqual(main.parameters['durableBackend']?.['allowedValues'], [
      'AzureStorage',
      'DurableTaskScheduler',
    ]);
    assert.equal(
      condition('durableTaskScheduler'),
      "[equals(parameters('durableBackend'), 'DurableTaskScheduler')]",
    );
  });

  void it('creates the scheduler and the task hub VMSSP_TASK_HUB names', () => {
    const template = module('durableTaskScheduler');
    const scheduler = onlyResource(template, 'Microsoft.DurableTask/schedulers');
    assert.equal(scheduler.apiVersion, '2025-11-01');
    assert.equal(prop(scheduler, 'properties', 'ipAllowlist'), "[parameters('ipAllowlist')]");
    const taskHub = onlyResource(template, 'Microsoft.DurableTask/schedulers/taskHubs');
    assert.match(taskHub.name, /parameters\('taskHubName'\)/);
    const passed = moduleParameters(moduleDeployment(main, 'durableTaskScheduler'));
    assert.equal(passed['taskHubName'], "[parameters('taskHub')]");
    assert.equal(passed['skuName'], "[parameters('durableTaskSchedulerSku')]");
    assert.equal(passed['ipAllowlist'], "[parameters('durableTaskSchedulerIpAllowlist')]");
  });

  void it('grants the identity Durable Task Data Contributor on the task hub only', () => {
    const template = module('durableTaskScheduler');
    const assignment = onlyResource(template, 'Microsoft.Authorization/roleAssignments');
    assert.equal(
      assignment.scope,
      "[resourceId('Microsoft.DurableTask/schedulers/taskHubs', parameters('name'), parameters('taskHubName'))]",
    );
    assert.equal(template.variables['durableTaskDataContributor'], DURABLE_TASK_DATA_CONTRIBUTOR);
    assert.equal(
      moduleParameters(moduleDeployment(main, 'durableTaskScheduler'))['principalId'],
      "[reference('identity').outputs.principalId.value]",
    );
  });

  void it('switches the host to the azureManaged provider with app settings, only when chosen', () => {
    const durableSettings = String(module('functionApp').variables['durableSettings']);
    assert.ok(
      durableSettings.startsWith("[if(empty(parameters('durableTaskSchedulerEndpoint')), createObject(), "),
    );
    for (const expected of [
      "'AzureFunctionsJobHost__extensions__durableTask__storageProvider__type', 'azureManaged'",
      "'AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName', 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'",
      "'DURABLE_TASK_SCHEDULER_CONNECTION_STRING', format('Endpoint={0};Authentication=ManagedIdentity;ClientID={1}', parameters('durableTaskSchedulerEndpoint'), parameters('identityClientId'))",
    ]) {
      assert.ok(durableSettings.includes(expected), expected);
    }
    assert.equal(
      moduleParameters(moduleDeployment(main, 'functionApp'))['durableTaskSchedulerEndpoint'],
      "[if(equals(parameters('durableBackend'), 'DurableTaskScheduler'), createObject('value', reference('durableTaskScheduler').outputs.endpoint.value), createObject('value', ''))]",
    );
    for (const key of [
      'DURABLE_TASK_SCHEDULER_CONNECTION_STRING',
      'AzureFunctionsJobHost__extensions__durableTask__storageProvider__type',
    ]) {
      assert.equal(classifySettingsKey(key), 'host', key);
    }
  });

  void it('keeps host.json on the Azure Storage provider, the task hub named by VMSSP_TASK_HUB', () => {
    const host = z
      .object({
        extensions: z.object({
          durableTask: z.looseObject({ hubName: z.string(), storageProvider: z.unknown().optional() }),
        }),
      })
      .parse(JSON.parse(readRepoFile('host.json')));
    assert.equal(host.extensions.durableTask.hubName, '%VMSSP_TASK_HUB%');
    // Overridden by the app settings above when the scheduler is chosen; locally Azurite serves it.
    assert.equal(host.extensions.durableTask.storageProvider, undefined);
  });

  void it('outputs the scheduler name, empty with the Azure Storage backend', () => {
    assert.equal(
      main.outputs['durableTaskSchedulerName']?.value,
      "[if(equals(parameters('durableBackend'), 'DurableTaskScheduler'), reference('durableTaskScheduler').outputs.name.value, '')]",
    );
  });
});

void describe('network: virtual network integration and private endpoints', () => {
  void it('is optional: absent, the app and its resources keep their public endpoints', () => {
    assert.equal(main.parameters['network']?.['nullable'], true);
    const passed = (symbol: string): Record<string, unknown> =>
      moduleParameters(moduleDeployment(main, symbol));
    assert.equal(
      passed('functionApp')['virtualNetworkSubnetId'],
      "[coalesce(tryGet(parameters('network'), 'appSubnetId'), '')]",
    );
    assert.equal(
      passed('keyVault')['publicNetworkAccess'],
      "[if(equals(variables('privateEndpoints'), null()), createObject('value', 'Enabled'), createObject('value', 'Disabled'))]",
    );
    assert.equal(
      passed('storage')['publicNetworkAccess'],
      "[if(equals(variables('privateEndpoints'), null()), createObject('value', 'Enabled'), if(or(parameters('healthResourcesEvents'), parameters('resourceGroupEvents')), createObject('value', 'TrustedServicesOnly'), createObject('value', 'Disabled')))]",
    );
  });

  void it('integrates the app with the subnet it is given', () => {
    const site = onlyResource(module('functionApp'), 'Microsoft.Web/sites');
    assert.equal(
      prop(site, 'properties', 'virtualNetworkSubnetId'),
      "[if(empty(parameters('virtualNetworkSubnetId')), null(), parameters('virtualNetworkSubnetId'))]",
    );
  });

  void it('puts blob, queue, table and vault endpoints in the endpoints subnet, each in its DNS zone', () => {
    assert.deepEqual(main.variables['privateEndpointGroups'], ['blob', 'queue', 'table', 'vault']);
    const endpoints = moduleDeployment(main, 'privateEndpointsOfApp');
    assert.equal(
      prop(endpoints, 'copy', 'count'),
      "[length(if(equals(variables('privateEndpoints'), null()), createArray(), variables('privateEndpointGroups')))]",
    );
    const passed = moduleParameters(endpoints);
    assert.equal(passed['subnetId'], "[variables('privateEndpoints').subnetId]");
    assert.match(String(passed['privateDnsZoneId']), /^\[variables\('privateEndpoints'\)\.dnsZoneIds\[/);
    assert.match(
      String(passed['targetResourceId']),
      /'vault'\), createObject\('value', reference\('keyVault'\)\.outputs\.id\.value\), createObject\('value', reference\('storage'\)\.outputs\.id\.value\)\)\]$/,
    );
    const template = moduleTemplateOf(endpoints);
    const endpoint = onlyResource(template, 'Microsoft.Network/privateEndpoints');
    assert.equal(prop(endpoint, 'properties', 'subnet', 'id'), "[parameters('subnetId')]");
    const group = onlyResource(template, 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups');
    assert.deepEqual(prop(group, 'properties', 'privateDnsZoneConfigs'), [
      {
        name: "[parameters('groupId')]",
        properties: { privateDnsZoneId: "[parameters('privateDnsZoneId')]" },
      },
    ]);
    // The host starts only once its storage and vault answer on their private addresses.
    assert.ok(
      z
        .array(z.string())
        .parse(moduleDeployment(main, 'functionApp').dependsOn)
        .includes('privateEndpointsOfApp'),
    );
  });

  void it('closes storage and Key Vault to public callers when private', () => {
    const account = onlyResource(module('storage'), 'Microsoft.Storage/storageAccounts');
    assert.equal(
      prop(account, 'properties', 'publicNetworkAccess'),
      "[if(equals(parameters('publicNetworkAccess'), 'Disabled'), 'Disabled', 'Enabled')]",
    );
    assert.equal(
      prop(account, 'properties', 'networkAcls', 'defaultAction'),
      "[if(equals(parameters('publicNetworkAccess'), 'Enabled'), 'Allow', 'Deny')]",
    );
    const vault = onlyResource(module('keyVault'), 'Microsoft.KeyVault/vaults');
    assert.equal(prop(vault, 'properties', 'publicNetworkAccess'), "[parameters('publicNetworkAccess')]");
    assert.equal(
      prop(vault, 'properties', 'networkAcls', 'defaultAction'),
      "[if(equals(parameters('publicNetworkAccess'), 'Enabled'), 'Allow', 'Deny')]",
    );
  });

  void it(`builds the private sample ${PRIVATE_PARAMETERS} with a subnet, endpoints and all four zones`, async () => {
    const { run, json } = await buildOnce(PRIVATE_PARAMETERS);
    assert.ok(passed(run), describeRun(run));
    const network = z
      .object({
        parameters: z.looseObject({
          network: z.object({
            value: z.object({
              appSubnetId: z.string(),
              privateEndpoints: z.object({
                subnetId: z.string(),
                dnsZoneIds: z.object({
                  blob: z.string(),
                  queue: z.string(),
                  table: z.string(),
                  vault: z.string(),
                }),
              }),
            }),
          }),
        }),
      })
      .parse(json).parameters.network.value;
    assert.match(network.appSubnetId, /\/subnets\/[^/]+$/);
    assert.match(network.privateEndpoints.subnetId, /\/subnets\/[^/]+$/);
    for (const zone of Object.values(network.privateEndpoints.dnsZoneIds)) {
      assert.match(zone, /\/Microsoft\.Network\/privateDnsZones\/privatelink\./);
    }
  });
});
