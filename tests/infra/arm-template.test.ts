// Builds infra/main.bicep and every .bicepparam with the pinned Bicep CLI (any compiler diagnostic or error
// fails), then checks the ARM template and parameters it makes: the resources deployed, least privilege,
// no secrets, app settings equal to the keys the app reads, and the wiring an operator relies on. The
// linter and deliberately broken templates are tested in bicep-cli.test.ts.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import { z } from 'zod';

import { loadSettings } from '../../shared/config/settings.js';
import {
  classifySettingsKey,
  HOST_SETTINGS_KEYS,
  REQUIRED_SETTINGS_KEYS,
  SECRET_SETTING_PREFIX,
  SETTINGS_KEYS,
  SIMULATOR_SETTINGS_KEYS,
} from '../../shared/config/settings-keys.js';
import {
  allResources,
  type ArmResource,
  type ArmTemplate,
  deployedResources,
  DEPLOYMENTS,
  moduleDeployment,
  moduleParameters,
  moduleTemplateOf,
  onlyResource,
  parseTemplate,
  prop,
  resourcesOf,
} from './arm-template.js';
import {
  buildOnce,
  describeRun,
  formatDiagnostics,
  mainParameters,
  mainTemplate,
  passed,
  summary,
} from './bicep-cli.js';
import { readRepoFile, REPO_ROOT } from './repo-files.js';

/** App settings only Azure needs: identity-based host storage and Entra-authenticated telemetry. */
const AZURE_ONLY_KEYS = [
  'AzureWebJobsStorage__accountName',
  'AzureWebJobsStorage__credential',
  'AzureWebJobsStorage__clientId',
  'APPLICATIONINSIGHTS_AUTHENTICATION_STRING',
];

/**
 * Keys only a local run needs: Azurite's connection string, and the worker runtime that Flex Consumption
 * takes from functionAppConfig.runtime instead (it must not be an app setting there).
 */
const LOCAL_ONLY_KEYS = ['AzureWebJobsStorage', 'FUNCTIONS_WORKER_RUNTIME'];

/** Built-in roles that can grant access or change anything: never assigned by this deployment. */
const PRIVILEGED_ROLE_IDS = {
  Owner: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635',
  Contributor: 'b24988ac-6180-42a0-ab88-20f01e8dbaa5',
  'User Access Administrator': '18d7d88d-4d99-4dc3-b27c-9e2a3f5d1290',
  'Role Based Access Control Administrator': 'f58310d9-a9f6-439a-9e8d-f62e7b41a168',
};

/** The built-in data-plane roles the deployment does assign, each on a single resource. */
const ALLOWED_BUILT_IN_ROLE_IDS = {
  'Storage Blob Data Owner': 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b',
  'Storage Queue Data Contributor': '974c5e8b-45b9-4653-ba55-5f855dd0fb88',
  'Storage Table Data Contributor': '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3',
  'Storage Queue Data Message Sender': 'c6a89b2d-59bc-44d0-9896-0f6e12d7b80a',
  'Key Vault Secrets User': '4633458b-17de-408a-b874-0445c86b69e6',
  'Key Vault Secrets Officer': 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7',
  'Monitoring Metrics Publisher': '3913510d-42f4-4e42-8a64-420c390055eb',
  // Run events: the app publishes run events to its own topic, when one is configured (send only).
  'EventGrid Data Sender': 'd5a91429-5739-47e2-a06b-3470a27159e7',
  // The Durable Task Scheduler backend, when chosen: data access to the one task hub.
  'Durable Task Data Contributor': '0ad04412-c4d5-4796-b79c-f76d14c8d402',
};

/** Every resource type the deployment creates, and nothing else. */
const DEPLOYED_TYPES = [
  'Microsoft.Authorization/roleAssignments',
  'Microsoft.Authorization/roleDefinitions',
  'Microsoft.DurableTask/schedulers',
  'Microsoft.DurableTask/schedulers/taskHubs',
  'Microsoft.EventGrid/systemTopics',
  'Microsoft.EventGrid/systemTopics/eventSubscriptions',
  'Microsoft.Insights/components',
  'Microsoft.KeyVault/vaults',
  'Microsoft.ManagedIdentity/userAssignedIdentities',
  'Microsoft.Network/privateEndpoints',
  'Microsoft.Network/privateEndpoints/privateDnsZoneGroups',
  'Microsoft.OperationalInsights/workspaces',
  'Microsoft.Resources/resourceGroups',
  'Microsoft.Storage/storageAccounts',
  'Microsoft.Storage/storageAccounts/blobServices',
  'Microsoft.Storage/storageAccounts/blobServices/containers',
  'Microsoft.Storage/storageAccounts/queueServices',
  'Microsoft.Storage/storageAccounts/queueServices/queues',
  'Microsoft.Web/serverfarms',
  'Microsoft.Web/sites',
  'Microsoft.Web/sites/basicPublishingCredentialsPolicies',
  'Microsoft.Web/sites/config',
];

const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const RESOURCE_GROUP_SCHEMA =
  'https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#';

// Loose: the embedded file is compared whole, entries' optional fields (captureMode) included.
const ComputeActions = z.array(z.looseObject({ action: z.string(), why: z.string() }));

let main: ArmTemplate;
let mainText: string;

before(async () => {
  const json = await mainTemplate();
  main = parseTemplate(json);
  mainText = JSON.stringify(json);
});

function filesUnder(directory: string, suffix: string): string[] {
  return readdirSync(join(REPO_ROOT, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(suffix))
    .map((name) => `${directory}/${name.split('\\').join('/')}`)
    .sort();
}

void describe('bicep build and build-params of infra/', () => {
  void it('builds infra/main.bicep with no compiler diagnostic and no error', async (t) => {
    const { run, json } = await buildOnce('infra/main.bicep');
    t.diagnostic(summary('bicep build infra/main.bicep', run));
    assert.ok(passed(run), describeRun(run));
    assert.ok(json !== undefined, 'an ARM template was written');
    const warnings = run.diagnostics.filter((diagnostic) => diagnostic.level !== 'error');
    if (warnings.length > 0) t.diagnostic(`bicep build warnings:\n${formatDiagnostics(warnings)}`);
  });

  const parameterFiles = filesUnder('infra', '.bicepparam');

  void it('has a parameters file to build', () => {
    assert.ok(parameterFiles.includes('infra/main.bicepparam'), parameterFiles.join(', '));
  });

  for (const file of parameterFiles) {
    void it(`builds ${file} against the template it names`, async (t) => {
      const { run, json } = await buildOnce(file);
      t.diagnostic(summary(`bicep build-params ${file}`, run));
      assert.ok(passed(run), describeRun(run));
      const parameters = z.object({ parameters: z.record(z.string(), z.unknown()) }).parse(json).parameters;
      assert.ok(Object.keys(parameters).length > 0);
    });
  }
});

function module(symbol: string): ArmTemplate {
  return moduleTemplateOf(moduleDeployment(main, symbol));
}

function resourceNamed(template: ArmTemplate, type: string, name: string): ArmResource {
  const found = resourcesOf(template).find(
    ({ resource }) => resource.type === type && resource.name.includes(`'${name}'`),
  );
  if (found === undefined) throw new Error(`no ${type} named ${name}`);
  return found.resource;
}

void describe('compiled template: resources', () => {
  void it('is a subscription deployment', () => {
    assert.equal(
      main.$schema,
      'https://schema.management.azure.com/schemas/2018-05-01/subscriptionDeploymentTemplate.json#',
    );
  });

  void it('deploys exactly the expected resource types', () => {
    const types = new Set(deployedResources(main).map(({ resource }) => resource.type));
    assert.deepEqual([...types].sort(), DEPLOYED_TYPES);
  });

  void it('pins a dated api-version on every resource and module', () => {
    for (const { resource, modulePath } of deployedResources(main)) {
      assert.match(resource.apiVersion, /^\d{4}-\d{2}-\d{2}$/, `${modulePath.join('/')} ${resource.type}`);
    }
  });

  void it('uses one api-version per resource type across modules', () => {
    const versions = new Map<string, Set<string>>();
    for (const { resource } of deployedResources(main)) {
      const type = resource.type.toLowerCase();
      versions.set(type, (versions.get(type) ?? new Set()).add(resource.apiVersion));
    }
    const mixed = [...versions]
      .filter(([, set]) => set.size > 1)
      .map(([type, set]) => `${type}: ${[...set].join(', ')}`);
    assert.deepEqual(mixed, []);
  });

  void it('uses every module file of infra/modules/ from main.bicep', () => {
    // Source-only: the compiled template inlines modules without their file names.
    const used = [...readRepoFile('infra/main.bicep').matchAll(/^module\s+\w+\s+'([^']+)'/gm)].map(
      (m) => m[1],
    );
    const files = readdirSync(join(REPO_ROOT, 'infra', 'modules'))
      .filter((name) => name.endsWith('.bicep'))
      .map((name) => `modules/${name}`);
    assert.deepEqual(
      files.filter((file) => !used.includes(file)),
      [],
    );
  });
});

void describe('compiled template: least privilege', () => {
  for (const [role, id] of Object.entries(PRIVILEGED_ROLE_IDS)) {
    void it(`never references the ${role} role`, async () => {
      assert.ok(!mainText.toLowerCase().includes(id), `main.json references ${role}`);
      const parameters = JSON.stringify(await mainParameters()).toLowerCase();
      assert.ok(!parameters.includes(id), `main.bicepparam references ${role}`);
    });
  }

  void it('references exactly the expected built-in data-plane roles', () => {
    const used = new Set((mainText.match(GUID) ?? []).map((guid) => guid.toLowerCase()));
    assert.deepEqual([...used].sort(), Object.values(ALLOWED_BUILT_IN_ROLE_IDS).sort());
  });

  void it('defines exactly one role, the compute custom role, in the compute-role module', () => {
    const definitions = deployedResources(main).filter(
      ({ resource }) => resource.type === 'Microsoft.Authorization/roleDefinitions',
    );
    assert.deepEqual(
      definitions.map(({ modulePath }) => modulePath),
      [['vmssp-compute-role']],
    );
  });

  void it('grants exactly the actions of infra/azure/compute-actions.json, no data action and no wildcard', () => {
    const actionsFile = ComputeActions.parse(JSON.parse(readRepoFile('infra/azure/compute-actions.json')));
    // loadJsonContent embeds the file; computeActions maps it to its `action` fields.
    const embedded = Object.values(main.variables).filter(
      (value) => JSON.stringify(value) === JSON.stringify(actionsFile),
    );
    assert.equal(embedded.length, 1, 'compute-actions.json is embedded in the template once');
    const embeddedName = Object.keys(main.variables).find(
      (name) => JSON.stringify(main.variables[name]) === JSON.stringify(actionsFile),
    );
    assert.equal(
      main.variables['computeActions'],
      `[map(variables('${embeddedName}'), lambda('entry', lambdaVariables('entry').action))]`,
    );
    assert.equal(
      moduleParameters(moduleDeployment(main, 'computeRole'))['actions'],
      "[variables('computeActions')]",
    );

    const role = onlyResource(module('computeRole'), 'Microsoft.Authorization/roleDefinitions');
    assert.deepEqual(prop(role, 'properties', 'permissions'), [
      { actions: "[parameters('actions')]", notActions: [], dataActions: [], notDataActions: [] },
    ]);
    assert.deepEqual(
      actionsFile.filter((entry) => entry.action.includes('*')),
      [],
    );
  });

  void it('makes the custom role assignable only on the cluster resource groups, and assigns it there', () => {
    assert.equal(
      moduleParameters(moduleDeployment(main, 'computeRole'))['assignableScopes'],
      "[map(variables('clusterResourceGroups'), lambda('group', format('{0}/resourceGroups/{1}', subscription().id, lambdaVariables('group'))))]",
    );
    assert.equal(
      main.variables['clusterResourceGroups'],
      "[union(map(parameters('clusters'), lambda('cluster', lambdaVariables('cluster').resourceGroup)), parameters('extraResourceGroups'))]",
    );
    const access = moduleDeployment(main, 'computeAccess');
    assert.equal(access.copy?.count, "[length(variables('clusterResourceGroups'))]");
    assert.equal(access.resourceGroup, "[variables('clusterResourceGroups')[copyIndex()]]");
    const assignment = onlyResource(moduleTemplateOf(access), 'Microsoft.Authorization/roleAssignments');
    assert.equal(prop(assignment, 'properties', 'roleDefinitionId'), "[parameters('roleDefinitionId')]");
    assert.equal(moduleParameters(access)['roleDefinitionId'], "[reference('computeRole').outputs.id.value]");
  });

  void it('assigns every role on one resource or one cluster resource group, never wider', () => {
    const assignments = deployedResources(main).filter(
      ({ resource }) => resource.type === 'Microsoft.Authorization/roleAssignments',
    );
    assert.ok(assignments.length >= 9, `${assignments.length} role assignments`);
    for (const { resource, template, modulePath } of assignments) {
      const where = `${modulePath.join('/')} ${resource.name}`;
      assert.equal(template.$schema, RESOURCE_GROUP_SCHEMA, `${where} is deployed in a resource group`);
      // The compute role's assignment module, deployed into each cluster resource group.
      const inClusterGroup = modulePath[0]?.startsWith("[format('vmssp-compute-{0}'") === true;
      assert.ok(
        inClusterGroup || (resource.scope ?? '').startsWith('[resourceId('),
        `${where} is scoped to one resource`,
      );
    }
  });

  void it('lets Event Grid only send messages, and only to the reboot queue', () => {
    for (const symbol of ['healthSender', 'resourceGroupSenders']) {
      const sender = onlyResource(module(symbol), 'Microsoft.Authorization/roleAssignments');
      assert.match(
        sender.scope ?? '',
        /^\[resourceId\('Microsoft\.Storage\/storageAccounts\/queueServices\/queues', /,
      );
      assert.equal(
        prop(module(symbol).variables, 'storageQueueDataMessageSender'),
        ALLOWED_BUILT_IN_ROLE_IDS['Storage Queue Data Message Sender'],
      );
    }
  });
});

void describe('compiled template: run events topic', () => {
  void it('grants the app EventGrid Data Sender on the configured topic only, and only when it is set', () => {
    const deployment = moduleDeployment(main, 'eventsSender');
    assert.equal(deployment.condition, "[not(empty(parameters('eventsTopicResourceId')))]");
    const template = module('eventsSender');
    const sender = onlyResource(template, 'Microsoft.Authorization/roleAssignments');
    assert.match(
      sender.scope ?? '',
      /^\[resourceId\('Microsoft\.EventGrid\/topics', parameters\('topicName'\)\)\]$/,
    );
    assert.equal(
      prop(template.variables, 'eventGridDataSender'),
      ALLOWED_BUILT_IN_ROLE_IDS['EventGrid Data Sender'],
    );
    assert.equal(
      moduleParameters(deployment)['principalId'],
      "[reference('identity').outputs.principalId.value]",
    );
  });
});

void describe('compiled template: secrets', () => {
  const forbidden: readonly (readonly [string, RegExp])[] = [
    ['an account key', /AccountKey\s*=/i],
    ['a shared access signature', /SharedAccessSignature\s*=|[?&]sig=/i],
    ['a listKeys() call', /\blistKeys\s*\(|\blist[A-Z]\w*Keys\s*\(/],
    ['a key-based connection string', /DefaultEndpointsProtocol\s*=/i],
    ['an instrumentation key literal', /InstrumentationKey\s*=/i],
    ['a JWT', /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./],
    ['a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ];
  for (const [what, pattern] of forbidden) {
    void it(`contains no ${what}`, async () => {
      assert.doesNotMatch(mainText, pattern, `main.json contains ${what}`);
      assert.doesNotMatch(
        JSON.stringify(await mainParameters()),
        pattern,
        `main.bicepparam contains ${what}`,
      );
    });
  }

  void it('outputs no secure parameter and nothing listed from a resource, in any module', () => {
    const templates = [main, ...deployedModules()];
    for (const template of templates) {
      const secure = Object.entries(template.parameters)
        .filter(([, parameter]) => parameter.type.toLowerCase().startsWith('secure'))
        .map(([name]) => name);
      for (const [name, output] of Object.entries(template.outputs)) {
        const value = JSON.stringify(output.value);
        assert.doesNotMatch(value, /\blist\w*\(/, `output ${name} lists from a resource`);
        for (const parameter of secure) {
          assert.ok(!value.includes(`parameters('${parameter}')`), `output ${name} returns ${parameter}`);
        }
      }
    }
  });

  void it('disables shared-key (account key) access to storage and keeps it TLS 1.2 and private', () => {
    const account = onlyResource(module('storage'), 'Microsoft.Storage/storageAccounts');
    assert.equal(prop(account, 'properties', 'allowSharedKeyAccess'), false);
    assert.equal(prop(account, 'properties', 'minimumTlsVersion'), 'TLS1_2');
    assert.equal(prop(account, 'properties', 'allowBlobPublicAccess'), false);
    assert.equal(prop(account, 'properties', 'supportsHttpsTrafficOnly'), true);
    const container = onlyResource(
      module('storage'),
      'Microsoft.Storage/storageAccounts/blobServices/containers',
    );
    assert.equal(prop(container, 'properties', 'publicAccess'), 'None');
  });

  void it('creates the Key Vault in RBAC mode with soft delete and purge protection', () => {
    const vault = onlyResource(module('keyVault'), 'Microsoft.KeyVault/vaults');
    assert.equal(prop(vault, 'properties', 'enableRbacAuthorization'), true);
    assert.equal(prop(vault, 'properties', 'enableSoftDelete'), true);
    assert.equal(prop(vault, 'properties', 'enablePurgeProtection'), true);
    assert.equal(prop(vault, 'properties', 'accessPolicies'), undefined);
  });

  void it('disables local auth on Application Insights and basic publishing credentials on the app', () => {
    const insights = onlyResource(module('monitoring'), 'Microsoft.Insights/components');
    assert.equal(prop(insights, 'properties', 'DisableLocalAuth'), true);
    for (const policy of ['ftp', 'scm']) {
      const resource = resourceNamed(
        module('functionApp'),
        'Microsoft.Web/sites/basicPublishingCredentialsPolicies',
        policy,
      );
      assert.deepEqual(resource.properties, { allow: false }, policy);
    }
  });
});

void describe('compiled template: app settings', () => {
  function appSettings(): Record<string, unknown> {
    return z.record(z.string(), z.unknown()).parse(module('functionApp').variables['appSettings']);
  }

  void it('sets every key the app reads (SETTINGS_KEYS) and the host keys Azure needs, and nothing else', () => {
    const expected = [...SETTINGS_KEYS, 'APPLICATIONINSIGHTS_CONNECTION_STRING', ...AZURE_ONLY_KEYS];
    assert.deepEqual(Object.keys(appSettings()).sort(), [...expected].sort());
  });

  void it('passes each app key the main parameter or value it names', () => {
    const settings = appSettings();
    const passed = moduleParameters(moduleDeployment(main, 'functionApp'));
    const fromParameter: Record<string, string> = {
      VMSSP_CLUSTERS: 'clustersJson',
      VMSSP_SCHEDULE: 'schedule',
      VMSSP_REAPER_SCHEDULE: 'reaperSchedule',
      VMSSP_TASK_HUB: 'taskHub',
      VMSSP_REBOOT_QUEUE: 'rebootQueueName',
      VMSSP_QUIET_PERIOD: 'quietPeriod',
      VMSSP_EVENTS_TOPIC_ENDPOINT: 'eventsTopicEndpoint',
      AZURE_CLIENT_ID: 'identityClientId',
    };
    for (const [key, parameter] of Object.entries(fromParameter)) {
      assert.equal(settings[key], `[parameters('${parameter}')]`, key);
      assert.ok(passed[parameter] !== undefined, `main passes ${parameter}`);
    }
    assert.equal(settings['VMSSP_MAX_PARALLEL_POOLS'], "[string(parameters('maxParallelPools'))]");
    assert.equal(passed['clustersJson'], "[string(variables('clusterSettings'))]");
    for (const key of REQUIRED_SETTINGS_KEYS) assert.ok(settings[key], `${key} is required`);
  });

  void it('writes the settings plus the token references as the whole appsettings set', () => {
    const config = onlyResource(module('functionApp'), 'Microsoft.Web/sites/config');
    assert.match(config.name, /'appsettings'/);
    assert.equal(
      config.properties,
      "[union(variables('appSettings'), variables('durableSettings'), parameters('keyVaultReferences'))]",
    );
    assert.equal(
      moduleParameters(moduleDeployment(main, 'functionApp'))['keyVaultReferences'],
      "[variables('tokenSettings')]",
    );
  });

  for (const key of [...AZURE_ONLY_KEYS, ...LOCAL_ONLY_KEYS]) {
    void it(`knows ${key} as a host key`, () => assert.equal(classifySettingsKey(key), 'host'));
  }

  void it('never sets a simulator setting (VMSSP_SIMULATOR*): the seam is for a developer machine only', async () => {
    for (const key of SIMULATOR_SETTINGS_KEYS) assert.equal(classifySettingsKey(key), 'simulator', key);
    assert.deepEqual(
      Object.keys(appSettings()).filter((key) => classifySettingsKey(key) === 'simulator'),
      [],
    );
    // Nor anywhere else a deployment could carry one: a module, a parameter default, the sample parameters
    // (main.bicepparam), or the Bicep sources (a setting added by hand to a module).
    const sources = [...filesUnder('infra', '.bicep'), ...filesUnder('infra', '.bicepparam')];
    assert.ok(sources.includes('infra/modules/function-app.bicep'));
    for (const [where, text] of [
      ['the compiled template', mainText],
      ['the compiled parameters', JSON.stringify(await mainParameters())],
      ...sources.map((file) => [file, readRepoFile(file)]),
    ]) {
      assert.doesNotMatch(text ?? '', /VMSSP_SIMULATOR/i, `${where} names a simulator setting`);
    }
  });

  void it('never sets FUNCTIONS_WORKER_RUNTIME or a storage connection string (Flex, no keys)', () => {
    const keys = Object.keys(appSettings());
    assert.ok(!keys.includes('FUNCTIONS_WORKER_RUNTIME'));
    assert.ok(!keys.includes('AzureWebJobsStorage'));
    assert.ok((HOST_SETTINGS_KEYS as readonly string[]).includes('FUNCTIONS_WORKER_RUNTIME'));
  });

  void it('matches local.settings.sample.json apart from the local-only and Azure-only keys', () => {
    const sample = z
      .object({ Values: z.record(z.string(), z.string()) })
      .parse(JSON.parse(readRepoFile('local.settings.sample.json')));
    const local = Object.keys(sample.Values).filter((key) => !LOCAL_ONLY_KEYS.includes(key));
    const azure = Object.keys(appSettings()).filter((key) => !AZURE_ONLY_KEYS.includes(key));
    assert.deepEqual(local.sort(), azure.sort());
    assert.equal(sample.Values['AzureWebJobsStorage'], 'UseDevelopmentStorage=true');
  });

  void it('adds the token settings as Key Vault references named VMSSP_SECRET_<CLUSTER>_TOKEN', () => {
    assert.equal(
      tokenSettingNameOutput(),
      `[format('${SECRET_SETTING_PREFIX}{0}_TOKEN', toUpper(replace(parameters('clusterName'), '-', '_')))]`,
    );
    assert.equal(
      main.variables['tokenSettings'],
      "[toObject(variables('tokenClusters'), lambda('cluster', __bicep.tokenSettingName(lambdaVariables('cluster').name)), lambda('cluster', format('@Microsoft.KeyVault(SecretUri={0}secrets/{1}-token/)', variables('keyVaultUri'), lambdaVariables('cluster').name)))]",
    );
    assert.equal(
      main.variables['keyVaultUri'],
      "[format('https://{0}{1}/', variables('names').keyVault, environment().suffixes.keyvaultDns)]",
    );
  });

  void it('runs Node 22 on Flex Consumption with identity-based host and deployment storage', () => {
    const app = module('functionApp');
    const plan = onlyResource(app, 'Microsoft.Web/serverfarms');
    assert.deepEqual(prop(plan, 'sku'), { tier: 'FlexConsumption', name: 'FC1' });
    const site = onlyResource(app, 'Microsoft.Web/sites');
    assert.deepEqual(prop(site, 'properties', 'functionAppConfig', 'runtime'), {
      name: 'node',
      version: '22',
    });
    assert.deepEqual(
      prop(site, 'properties', 'functionAppConfig', 'deployment', 'storage', 'authentication'),
      {
        type: 'UserAssignedIdentity',
        userAssignedIdentityResourceId: "[parameters('identityId')]",
      },
    );
    assert.equal(prop(site, 'properties', 'keyVaultReferenceIdentity'), "[parameters('identityId')]");
    assert.equal(prop(site, 'properties', 'httpsOnly'), true);
    assert.equal(prop(site, 'identity', 'type'), 'UserAssigned');
    const settings = appSettings();
    assert.equal(settings['AzureWebJobsStorage__credential'], 'managedidentity');
    assert.equal(settings['AzureWebJobsStorage__clientId'], "[parameters('identityClientId')]");
  });
});

void describe('compiled template: wiring', () => {
  void it('outputs what the operator needs next', () => {
    for (const name of [
      'resourceGroupName',
      'functionAppName',
      'functionAppUrl',
      'identityPrincipalId',
      'identityClientId',
      'rebootQueueName',
      'keyVaultName',
      'keyVaultUri',
      'customRoleId',
      'vaultEntriesToFill',
    ]) {
      assert.ok(main.outputs[name] !== undefined, name);
    }
  });

  void it('subscribes the Health Resources topic to both event types and delivers to the queue with its identity', () => {
    const topic = moduleParameters(moduleDeployment(main, 'healthTopic'));
    assert.equal(topic['topicType'], 'Microsoft.ResourceNotifications.HealthResources');
    assert.equal(topic['source'], '[subscription().id]');
    const subscription = moduleParameters(moduleDeployment(main, 'healthSubscription'));
    assert.deepEqual(subscription['includedEventTypes'], [
      'Microsoft.ResourceNotifications.HealthResources.AvailabilityStatusChanged',
      'Microsoft.ResourceNotifications.HealthResources.ResourceAnnotated',
    ]);
    for (const symbol of ['healthSubscription', 'resourceGroupSubscriptions']) {
      const eventSubscription = onlyResource(
        module(symbol),
        'Microsoft.EventGrid/systemTopics/eventSubscriptions',
      );
      assert.equal(
        prop(eventSubscription, 'properties', 'deliveryWithResourceIdentity', 'identity', 'type'),
        'SystemAssigned',
      );
      assert.equal(
        prop(eventSubscription, 'properties', 'deliveryWithResourceIdentity', 'destination', 'endpointType'),
        'StorageQueue',
      );
      assert.equal(
        prop(eventSubscription, 'properties', 'destination'),
        undefined,
        'no delivery without the identity',
      );
    }
  });

  void it('gives the system topics their own identity', () => {
    const topic = onlyResource(module('healthTopic'), 'Microsoft.EventGrid/systemTopics');
    assert.deepEqual(prop(topic, 'identity'), { type: 'SystemAssigned' });
    assert.equal(prop(topic, 'location'), 'global');
  });
});

void describe('infra: sample parameters (main.bicepparam) as main.bicep completes them', () => {
  // Mirrors main.bicep's clusterSettings and tokenSettings (the first test pins the compiled expressions),
  // so that the sample parameters are proven to produce settings the app accepts.
  const Cluster = z.looseObject({
    name: z.string(),
    apiServer: z.looseObject({ caCertificate: z.unknown().optional(), auth: z.unknown().optional() }),
  });
  const Parameters = z.object({
    parameters: z.looseObject({ clusters: z.object({ value: z.array(Cluster) }) }),
  });
  const vaultUri = 'https://kv-vmssp-abcdefghijklm.vault.azure.net/';
  const subscriptionId = '11111111-2222-3333-4444-555555555555';
  const tokenSettingName = (name: string): string =>
    `${SECRET_SETTING_PREFIX}${name.replaceAll('-', '_').toUpperCase()}_TOKEN`;
  let clusters: z.infer<typeof Cluster>[] = [];

  before(async () => {
    clusters = Parameters.parse(await mainParameters()).parameters.clusters.value;
  });

  void it('mirrors the completion main.bicep compiles to', () => {
    const copy = z
      .array(z.object({ name: z.string(), input: z.string() }))
      .parse(main.variables['copy'])
      .find((entry) => entry.name === 'clusterSettings');
    const cluster = "parameters('clusters')[copyIndex('clusterSettings')]";
    const input = copy?.input ?? '';
    assert.ok(
      input.startsWith(`[union(${cluster}, createObject('subscriptionId', subscription().subscriptionId, `),
    );
    assert.ok(
      input.includes(
        `coalesce(tryGet(${cluster}.apiServer, 'caCertificate'), createObject('keyVaultSecretUri', format('{0}secrets/{1}-ca', variables('keyVaultUri'), ${cluster}.name)))`,
      ),
    );
    assert.ok(
      input.includes(
        `coalesce(tryGet(${cluster}.apiServer, 'auth'), createObject('serviceAccountToken', createObject('env', __bicep.tokenSettingName(${cluster}.name))))`,
      ),
    );
  });

  void it('produces VMSSP_CLUSTERS that loadSettings accepts', () => {
    const completed = clusters.map((cluster) => ({
      ...cluster,
      subscriptionId,
      apiServer: {
        ...cluster.apiServer,
        caCertificate: cluster.apiServer.caCertificate ?? {
          keyVaultSecretUri: `${vaultUri}secrets/${cluster.name}-ca`,
        },
        auth: cluster.apiServer.auth ?? { serviceAccountToken: { env: tokenSettingName(cluster.name) } },
      },
    }));
    const env: Record<string, string> = { VMSSP_CLUSTERS: JSON.stringify(completed) };
    for (const cluster of clusters) {
      if (cluster.apiServer.auth === undefined)
        env[tokenSettingName(cluster.name)] = 'token resolved by the platform';
    }
    const settings = loadSettings(env);
    assert.deepEqual(
      settings.clusters.map((cluster) => cluster.name),
      clusters.map((cluster) => cluster.name),
    );
  });

  void it('sends at least one cluster through the token defaults and one through explicit auth', () => {
    assert.ok(clusters.some((cluster) => cluster.apiServer.auth === undefined));
    assert.ok(clusters.some((cluster) => cluster.apiServer.auth !== undefined));
  });
});

function deployedModules(): ArmTemplate[] {
  return allResources(main)
    .filter(({ resource }) => resource.type === DEPLOYMENTS)
    .map(({ resource }) => moduleTemplateOf(resource));
}

function tokenSettingNameOutput(): unknown {
  const functions = z
    .array(z.looseObject({ namespace: z.string(), members: z.record(z.string(), z.unknown()) }))
    .parse(main['functions']);
  return prop(
    functions.find((entry) => entry.namespace === '__bicep')?.members,
    'tokenSettingName',
    'output',
    'value',
  );
}
