// Static checks of infra/*.bicep (no Bicep compiler here): pinned api-versions, least privilege, no
// secrets, app settings equal to the keys the app reads, parameters and modules wired as declared.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { z } from 'zod';

import { loadSettings } from '../../shared/config/settings.js';
import {
  classifySettingsKey,
  HOST_SETTINGS_KEYS,
  SECRET_SETTING_PREFIX,
  SETTINGS_KEYS,
} from '../../shared/config/settings-keys.js';
import {
  infraBicepFiles,
  moduleDeclarations,
  objectLiteralKeys,
  outputDeclarations,
  paramDeclarations,
  readRepoFile,
  REPO_ROOT,
  resourceDeclarations,
  stringLiterals,
} from './bicep-text.js';

const files = infraBicepFiles();
const main = fileNamed('infra/main.bicep');

function fileNamed(path: string) {
  const file = files.find((candidate) => candidate.path === path);
  if (file === undefined) throw new Error(`reading ${path}: no such Bicep file`);
  return file;
}

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
};

const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

void describe('infra bicep: api-versions', () => {
  const declarations = files.flatMap((file) =>
    resourceDeclarations(file.code).map((declaration) => ({ file: file.path, ...declaration })),
  );

  void it('finds the resource declarations', () => {
    assert.ok(declarations.length >= 25, `only ${declarations.length} resource declarations found`);
  });

  for (const declaration of declarations) {
    void it(`${declaration.file}:${declaration.line} ${declaration.symbol} pins a dated api-version`, () => {
      assert.match(declaration.apiVersion ?? '(none)', /^\d{4}-\d{2}-\d{2}(-preview)?$/);
    });
  }

  void it('uses one api-version per resource type across files', () => {
    const versions = new Map<string, Set<string>>();
    for (const declaration of declarations) {
      const type = declaration.type.toLowerCase();
      versions.set(type, (versions.get(type) ?? new Set()).add(declaration.apiVersion ?? ''));
    }
    const mixed = [...versions]
      .filter(([, set]) => set.size > 1)
      .map(([type, set]) => `${type}: ${[...set].join(', ')}`);
    assert.deepEqual(mixed, []);
  });

  void it('declares every resource with a full type (no nested shorthand without an api-version)', () => {
    for (const file of files) {
      assert.doesNotMatch(
        file.code,
        /^\s*resource\s+\w+\s+'[^'/]+'/m,
        `${file.path} has a nested shorthand resource`,
      );
    }
  });
});

void describe('infra bicep: least privilege', () => {
  const allInfra = [
    ...files.map((file) => ({ path: file.path, text: file.source })),
    { path: 'infra/main.parameters.json', text: readRepoFile('infra/main.parameters.json') },
  ];

  for (const [role, id] of Object.entries(PRIVILEGED_ROLE_IDS)) {
    void it(`never references the ${role} role`, () => {
      for (const file of allInfra)
        assert.ok(!file.text.toLowerCase().includes(id), `${file.path} references ${role}`);
    });
  }

  void it('references only the expected built-in data-plane roles', () => {
    const allowed = new Set(Object.values(ALLOWED_BUILT_IN_ROLE_IDS));
    const used = new Set<string>();
    for (const file of files) {
      for (const literal of stringLiterals(file.code)) {
        for (const guid of literal.match(GUID) ?? []) used.add(guid.toLowerCase());
      }
    }
    const unexpected = [...used].filter((guid) => !allowed.has(guid));
    assert.deepEqual(unexpected, []);
    assert.deepEqual([...used].sort(), [...allowed].sort(), 'every allowed role is actually assigned');
  });

  void it('defines exactly one role, the compute custom role, in modules/compute-role.bicep', () => {
    const definitions = files.flatMap((file) =>
      resourceDeclarations(file.code)
        .filter(
          (declaration) =>
            declaration.type === 'Microsoft.Authorization/roleDefinitions' && !declaration.existing,
        )
        .map(() => file.path),
    );
    assert.deepEqual(definitions, ['infra/modules/compute-role.bicep']);
  });

  void it('grants no data actions and no wildcard in the custom role', () => {
    const role = fileNamed('infra/modules/compute-role.bicep');
    assert.match(role.code, /^\s*actions:\s*actions\s*$/m, 'actions come from the parameter');
    assert.match(role.code, /^\s*dataActions:\s*\[\]\s*$/m);
    assert.match(role.code, /^\s*notDataActions:\s*\[\]\s*$/m);
    for (const literal of stringLiterals(role.code))
      assert.ok(!literal.includes('*'), `wildcard in '${literal}'`);
  });

  void it('builds the custom role from infra/azure/compute-actions.json', () => {
    assert.match(
      main.code,
      /var\s+computeActions\s*=\s*map\(\s*loadJsonContent\('azure\/compute-actions\.json'\),\s*(\w+)\s*=>\s*\1\.action\s*\)/,
    );
    assert.match(main.code, /^\s*actions:\s*computeActions\s*$/m);
    assert.ok(existsSync(join(REPO_ROOT, 'infra', 'azure', 'compute-actions.json')));
  });

  void it('makes the custom role assignable only on the cluster resource groups, and assigns it there', () => {
    assert.match(
      main.code,
      /assignableScopes:\s*map\(clusterResourceGroups,\s*(\w+)\s*=>\s*'\$\{subscription\(\)\.id\}\/resourceGroups\/\$\{\1\}'\)/,
    );
    assert.match(
      main.code,
      /module\s+computeAccess\s+'modules\/compute-role-assignment\.bicep'\s*=\s*\[\s*for\s+(\w+)\s+in\s+clusterResourceGroups:\s*\{\s*name:[^\n]*\n\s*scope:\s*resourceGroup\(\1\)/,
    );
  });

  void it('scopes every role assignment to a resource or a cluster resource group, never a subscription', () => {
    for (const file of files) {
      for (const declaration of resourceDeclarations(file.code)) {
        if (declaration.type !== 'Microsoft.Authorization/roleAssignments') continue;
        const body = file.code
          .split('\n')
          .slice(declaration.line - 1, declaration.line + 4)
          .join('\n');
        const scoped = /^\s*scope:\s*\w+\s*$/m.test(body);
        const groupModule = file.path === 'infra/modules/compute-role-assignment.bicep';
        assert.ok(scoped || groupModule, `${file.path}:${declaration.line} has no resource scope`);
        assert.doesNotMatch(body, /scope:\s*subscription\(\)/);
      }
    }
  });

  void it('assigns the compute role module at resource-group scope only', () => {
    const assignment = fileNamed('infra/modules/compute-role-assignment.bicep');
    assert.doesNotMatch(assignment.code, /targetScope/);
  });

  void it('lets Event Grid only send messages, and only to the reboot queue', () => {
    const sender = fileNamed('infra/modules/queue-sender-role.bicep');
    assert.match(sender.code, /c6a89b2d-59bc-44d0-9896-0f6e12d7b80a/);
    assert.match(sender.code, /^\s*scope:\s*queue\s*$/m);
  });
});

void describe('infra bicep: secrets', () => {
  const forbidden: readonly (readonly [string, RegExp])[] = [
    ['an account key', /AccountKey\s*=/i],
    ['a shared access signature', /SharedAccessSignature\s*=|[?&]sig=/i],
    ['a listKeys() call', /\blistKeys\s*\(|\blist[A-Z]\w*Keys\s*\(/],
    ['a key-based connection string', /DefaultEndpointsProtocol\s*=/i],
    ['an instrumentation key literal', /InstrumentationKey\s*=/i],
    ['a JWT', /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./],
    ['a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ];
  const texts = [
    ...files.map((file) => ({ path: file.path, text: file.source })),
    { path: 'infra/main.parameters.json', text: readRepoFile('infra/main.parameters.json') },
  ];
  for (const [what, pattern] of forbidden) {
    void it(`contains no ${what}`, () => {
      for (const file of texts) assert.doesNotMatch(file.text, pattern, `${file.path} contains ${what}`);
    });
  }

  void it('outputs no secure parameter', () => {
    for (const file of files) {
      const secure = paramDeclarations(file.code)
        .filter((param) => param.decorators.includes('@secure()'))
        .map((param) => param.name);
      for (const output of outputDeclarations(file.code)) {
        for (const name of secure) {
          assert.doesNotMatch(output.expression, new RegExp(`\\b${name}\\b`), `${file.path} outputs ${name}`);
        }
      }
    }
  });

  void it('disables shared-key (account key) access to storage and never enables it', () => {
    assert.match(fileNamed('infra/modules/storage.bicep').code, /^\s*allowSharedKeyAccess:\s*false\s*$/m);
    for (const file of files) assert.doesNotMatch(file.code, /allowSharedKeyAccess:\s*true/);
  });

  void it('keeps the storage account TLS 1.2 and private', () => {
    const storage = fileNamed('infra/modules/storage.bicep').code;
    assert.match(storage, /^\s*minimumTlsVersion:\s*'TLS1_2'\s*$/m);
    assert.match(storage, /^\s*allowBlobPublicAccess:\s*false\s*$/m);
    assert.match(storage, /^\s*publicAccess:\s*'None'\s*$/m);
  });

  void it('creates the Key Vault in RBAC mode with soft delete and purge protection', () => {
    const vault = fileNamed('infra/modules/key-vault.bicep').code;
    assert.match(vault, /^\s*enableRbacAuthorization:\s*true\s*$/m);
    assert.match(vault, /^\s*enableSoftDelete:\s*true\s*$/m);
    assert.match(vault, /^\s*enablePurgeProtection:\s*true\s*$/m);
    assert.doesNotMatch(vault, /accessPolicies/);
  });

  void it('disables local auth on Application Insights and basic publishing credentials on the app', () => {
    assert.match(fileNamed('infra/modules/monitoring.bicep').code, /^\s*DisableLocalAuth:\s*true\s*$/m);
    const app = fileNamed('infra/modules/function-app.bicep').code;
    for (const policy of ['ftp', 'scm']) {
      assert.match(app, new RegExp(`name: '${policy}'\\s*properties: \\{\\s*allow: false`));
    }
  });
});

void describe('infra bicep: app settings', () => {
  const app = fileNamed('infra/modules/function-app.bicep');
  const bicepKeys = objectLiteralKeys(app.code, 'var appSettings = union(');

  void it('sets exactly SETTINGS_KEYS plus the host keys Azure needs', () => {
    const expected = [...SETTINGS_KEYS, 'APPLICATIONINSIGHTS_CONNECTION_STRING', ...AZURE_ONLY_KEYS];
    assert.deepEqual([...bicepKeys].sort(), [...expected].sort());
  });

  void it('sets each key once', () => {
    assert.equal(new Set(bicepKeys).size, bicepKeys.length);
  });

  for (const key of [...AZURE_ONLY_KEYS, ...LOCAL_ONLY_KEYS]) {
    void it(`knows ${key} as a host key`, () => assert.equal(classifySettingsKey(key), 'host'));
  }

  void it('never sets FUNCTIONS_WORKER_RUNTIME or a storage connection string (Flex, no keys)', () => {
    assert.ok(!bicepKeys.includes('FUNCTIONS_WORKER_RUNTIME'));
    assert.ok(!bicepKeys.includes('AzureWebJobsStorage'));
    assert.ok((HOST_SETTINGS_KEYS as readonly string[]).includes('FUNCTIONS_WORKER_RUNTIME'));
  });

  void it('matches local.settings.sample.json apart from the local-only and Azure-only keys', () => {
    const sample = z
      .object({ Values: z.record(z.string(), z.string()) })
      .parse(JSON.parse(readRepoFile('local.settings.sample.json')));
    const local = Object.keys(sample.Values).filter((key) => !LOCAL_ONLY_KEYS.includes(key));
    const azure = bicepKeys.filter((key) => !AZURE_ONLY_KEYS.includes(key));
    assert.deepEqual(local.sort(), azure.sort());
    assert.equal(sample.Values['AzureWebJobsStorage'], 'UseDevelopmentStorage=true');
  });

  void it('adds the token settings as Key Vault references named VMSSP_SECRET_<CLUSTER>_TOKEN', () => {
    assert.match(app.code, /^\s*secretSettings\s*$/m, 'the secret settings are merged into the app settings');
    const literals = stringLiterals(main.code);
    const name = literals.find((literal) => literal.startsWith(SECRET_SETTING_PREFIX));
    assert.equal(name, `${SECRET_SETTING_PREFIX}\${toUpper(replace(clusterName, '-', '_'))}_TOKEN`);
    assert.ok(
      literals.includes('@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${cluster.name}-token/)'),
      'the token setting is a Key Vault reference to <cluster>-token',
    );
  });

  void it('runs Node 22 on Flex Consumption with identity-based deployment storage', () => {
    assert.match(app.code, /tier:\s*'FlexConsumption'\s*name:\s*'FC1'/);
    assert.match(app.code, /runtime:\s*\{\s*name:\s*'node'\s*version:\s*'22'\s*\}/);
    assert.match(app.code, /type:\s*'UserAssignedIdentity'\s*userAssignedIdentityResourceId:\s*identityId/);
    assert.match(app.code, /^\s*AzureWebJobsStorage__credential:\s*'managedidentity'\s*$/m);
    assert.match(app.code, /^\s*keyVaultReferenceIdentity:\s*identityId\s*$/m);
  });
});

void describe('infra bicep: wiring', () => {
  const mainModules = moduleDeclarations(main.code);
  const moduleFiles = files.filter((file) => file.path.startsWith('infra/modules/'));

  for (const file of moduleFiles) {
    void it(`main.bicep uses ${file.path}`, () => {
      const path = file.path.replace(/^infra\//, '');
      assert.ok(mainModules.some((module) => module.path === path));
    });
  }

  void it('points every module at an existing file', () => {
    for (const module of mainModules)
      assert.ok(existsSync(join(REPO_ROOT, 'infra', module.path)), module.path);
  });

  void it('targets the subscription', () => {
    assert.match(main.code, /^targetScope = 'subscription'$/m);
  });

  void it('describes every parameter of every file', () => {
    for (const file of files) {
      for (const param of paramDeclarations(file.code)) {
        assert.ok(
          param.decorators.some((decorator) => decorator.startsWith('@description(')),
          `${file.path} param ${param.name}`,
        );
      }
    }
  });

  void it('passes every parameter a module requires and only the ones it declares', () => {
    for (const module of mainModules) {
      const declared = paramDeclarations(fileNamed(`infra/${module.path}`).code);
      const start = main.code.search(new RegExp(`^module ${module.symbol} `, 'm'));
      const passed = objectLiteralKeys(main.code.slice(start), 'params:');
      const unknown = passed.filter((name) => !declared.some((param) => param.name === name));
      const missing = declared.filter((param) => !param.hasDefault && !passed.includes(param.name));
      assert.deepEqual(unknown, [], `${module.symbol} passes undeclared parameters`);
      assert.deepEqual(
        missing.map((param) => param.name),
        [],
        `${module.symbol} misses required parameters`,
      );
    }
  });

  const Parameters = z.object({
    $schema: z.string(),
    contentVersion: z.string(),
    parameters: z.record(z.string(), z.object({ value: z.unknown() }).strict()),
  });
  const parameters = Parameters.parse(JSON.parse(readRepoFile('infra/main.parameters.json'))).parameters;
  const mainParams = paramDeclarations(main.code);

  void it('names only parameters main.bicep declares in main.parameters.json', () => {
    const unknown = Object.keys(parameters).filter(
      (name) => !mainParams.some((param) => param.name === name),
    );
    assert.deepEqual(unknown, []);
  });

  void it('gives every required parameter in main.parameters.json', () => {
    const missing = mainParams.filter((param) => !param.hasDefault && !(param.name in parameters));
    assert.deepEqual(
      missing.map((param) => param.name),
      [],
    );
  });

  void it('outputs what the operator needs next', () => {
    const names = outputDeclarations(main.code).map((output) => output.name);
    for (const name of [
      'functionAppName',
      'functionAppUrl',
      'identityPrincipalId',
      'identityClientId',
      'rebootQueueName',
      'keyVaultUri',
      'customRoleId',
    ]) {
      assert.ok(names.includes(name), name);
    }
  });

  void it('subscribes the Health Resources topic to both event types and delivers to the queue with its identity', () => {
    assert.match(main.code, /topicType:\s*'Microsoft\.ResourceNotifications\.HealthResources'/);
    assert.match(main.code, /source:\s*subscription\(\)\.id/);
    assert.match(main.code, /'Microsoft\.ResourceNotifications\.HealthResources\.AvailabilityStatusChanged'/);
    assert.match(main.code, /'Microsoft\.ResourceNotifications\.HealthResources\.ResourceAnnotated'/);
    const subscription = fileNamed('infra/modules/event-subscription.bicep').code;
    assert.match(
      subscription,
      /deliveryWithResourceIdentity:\s*\{\s*identity:\s*\{\s*type:\s*'SystemAssigned'/,
    );
    assert.match(subscription, /endpointType:\s*'StorageQueue'/);
    const start = subscription.indexOf('resource eventSubscription');
    const properties = objectLiteralKeys(subscription.slice(start), 'properties:');
    assert.ok(properties.includes('deliveryWithResourceIdentity'));
    assert.ok(!properties.includes('destination'), 'no delivery without the topic identity');
  });
});

void describe('infra: sample parameters as main.bicep completes them', () => {
  // Mirrors main.bicep's clusterSettings and tokenSettings (the test above pins their literals), so that
  // the sample parameters are proven to produce settings the app accepts.
  const Cluster = z.looseObject({
    name: z.string(),
    apiServer: z.looseObject({ caCertificate: z.unknown().optional(), auth: z.unknown().optional() }),
  });
  const Clusters = z.object({
    parameters: z.looseObject({ clusters: z.object({ value: z.array(Cluster) }) }),
  });
  const clusters = Clusters.parse(JSON.parse(readRepoFile('infra/main.parameters.json'))).parameters.clusters
    .value;
  const vaultUri = 'https://kv-vmssp-abcdefghijklm.vault.azure.net/';
  const subscriptionId = '11111111-2222-3333-4444-555555555555';
  const tokenSettingName = (name: string): string =>
    `${SECRET_SETTING_PREFIX}${name.replaceAll('-', '_').toUpperCase()}_TOKEN`;
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

  void it('mirrors the conventions main.bicep uses', () => {
    const literals = stringLiterals(main.code);
    assert.ok(literals.includes('${keyVaultUri}secrets/${cluster.name}-ca'));
    assert.match(
      main.code,
      /auth:\s*cluster\.apiServer\.\?auth \?\? \{ serviceAccountToken: \{ env: tokenSettingName\(cluster\.name\) \} \}/,
    );
    assert.match(main.code, /subscriptionId:\s*subscription\(\)\.subscriptionId/);
  });

  void it('produces VMSSP_CLUSTERS that loadSettings accepts', () => {
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
