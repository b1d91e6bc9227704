/**
 * Error behaviour of the simulated ARM as the real SDK and raw clients see it: authentication,
 * RBAC denials naming the action, api-version checks, throttling with Retry-After that the SDK's
 * retry policy absorbs, 5xx, failed LROs, not-found and malformed requests.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { createActionListAuthorizer } from '../../../sim/arm/action-authorizer.js';
import {
  type ArmTestWorld,
  CLIENT_ID,
  FAST_POLL,
  OBJECT_ID,
  rawRequest,
  restError,
  startArmTestWorld,
  SUBSCRIPTION,
} from './arm-test-world.js';

const RG = 'rg-nodes';
const VMSS_PATH = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/pool`;

function errorCode(body: unknown): string {
  return (body as { error: { code: string } }).error.code;
}

describe('simulated ARM: errors, throttling and api-versions', () => {
  let world: ArmTestWorld;

  before(async () => {
    world = await startArmTestWorld({
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'pool', instances: 1 }),
    });
  });

  after(async () => {
    await world.close();
  });

  it('answers 401 AuthenticationFailed with a Bearer challenge when the Authorization header is missing', async () => {
    const response = await rawRequest(world, 'GET', `${VMSS_PATH}?api-version=2026-04-01`, { token: false });

    assert.equal(response.status, 401);
    assert.equal(errorCode(response.body), 'AuthenticationFailed');
    assert.match(response.headers['www-authenticate'] ?? '', /^Bearer /);
  });

  it('logs what each request named, method and path with its query, api-version left out', async () => {
    await rawRequest(
      world,
      'GET',
      `${VMSS_PATH}/virtualMachines?$expand=instanceView&api-version=2026-04-01`,
    );
    assert.deepEqual(world.log.entries.at(-1)?.target, {
      method: 'GET',
      path: `${VMSS_PATH}/virtualMachines?%24expand=instanceView`,
    });
  });

  const apiVersionCases = [
    { name: 'missing', query: '', code: 'MissingApiVersionParameter' },
    { name: 'malformed', query: '?api-version=latest', code: 'InvalidApiVersionParameter' },
    { name: 'unknown date', query: '?api-version=2099-01-01', code: 'NoRegisteredProviderFound' },
    {
      name: 'a gallery version on the compute RP',
      query: '?api-version=2025-12-03',
      code: 'NoRegisteredProviderFound',
    },
  ];
  for (const testCase of apiVersionCases) {
    it(`refuses a ${testCase.name} api-version with 400 ${testCase.code}`, async () => {
      const response = await rawRequest(world, 'GET', `${VMSS_PATH}${testCase.query}`);

      assert.equal(response.status, 400);
      assert.equal(errorCode(response.body), testCase.code);
    });
  }

  const acceptedVersionCases = [
    { path: VMSS_PATH, version: '2024-07-01' },
    { path: VMSS_PATH, version: '2026-04-01' },
    {
      path: `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/snapshots`,
      version: '2023-10-02',
    },
    {
      path: `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries`,
      version: '2024-03-03',
    },
  ];
  for (const testCase of acceptedVersionCases) {
    it(`accepts api-version ${testCase.version} on ${testCase.path.split('/').pop() ?? ''}`, async () => {
      const response = await rawRequest(world, 'GET', `${testCase.path}?api-version=${testCase.version}`);

      assert.equal(response.status, 200);
    });
  }

  it('retries a 429 with Retry-After through the SDK throttling policy and then succeeds', async () => {
    world.faults.inject(
      'Microsoft.Compute/virtualMachineScaleSets/read',
      {
        status: 429,
        retryAfterSeconds: 0,
        code: 'TooManyRequests',
        message: 'The request is being throttled.',
      },
      2,
    );

    const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'pool');

    assert.equal(scaleSet.name, 'pool');
    assert.deepEqual(
      world.log.statuses('Microsoft.Compute/virtualMachineScaleSets/read').slice(-3),
      [429, 429, 200],
    );
  });

  it('sends Retry-After with an injected 429', async () => {
    world.faults.inject('Microsoft.Compute/virtualMachineScaleSets/read', {
      status: 429,
      retryAfterSeconds: 17,
      code: 'TooManyRequests',
      message: 'The request is being throttled.',
    });

    const response = await rawRequest(world, 'GET', `${VMSS_PATH}?api-version=2026-04-01`);

    assert.equal(response.status, 429);
    assert.equal(response.headers['retry-after'], '17');
  });

  it('retries a transient 503 and gives up on a persistent 500 with the ARM error code', async () => {
    world.faults.inject('Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read', {
      status: 503,
      code: 'ServiceUnavailable',
      message: 'The service is temporarily unavailable.',
    });
    const vm = await world.client.virtualMachineScaleSetVMs.get(RG, 'pool', '0');
    assert.equal(vm.instanceId, '0');

    world.faults.inject(
      'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read',
      { status: 500, code: 'InternalExecutionError', message: 'An internal execution error occurred.' },
      4, // the first try and the client's three retries
    );
    await assert.rejects(world.client.virtualMachineScaleSetVMs.get(RG, 'pool', '0'), (error) => {
      assert.equal(restError(error).statusCode, 500);
      assert.equal(restError(error).code, 'InternalExecutionError');
      return true;
    });
  });

  it('surfaces a snapshot quota fault from the fault hook', async () => {
    world.faults.inject('Microsoft.Compute/snapshots/write', {
      status: 409,
      code: 'OperationNotAllowed',
      message: 'Operation could not be completed as it results in exceeding approved Snapshots quota.',
    });
    const diskId = world.state.listInstances(VMSS_PATH)[0]?.osDiskId ?? '';

    await assert.rejects(
      world.client.snapshots.beginCreateOrUpdateAndWait(
        RG,
        'snap',
        { location: 'westeurope', creationData: { createOption: 'Copy', sourceResourceId: diskId } },
        FAST_POLL,
      ),
      (error) => {
        assert.equal(restError(error).statusCode, 409);
        assert.equal(restError(error).code, 'OperationNotAllowed');
        assert.match(restError(error).message, /exceeding approved Snapshots quota/);
        return true;
      },
    );
  });

  it('fails a power-off LRO injected as …/powerOff/action#lro and leaves the instance running', async () => {
    world.faults.inject('Microsoft.Compute/virtualMachineScaleSets/virtualMachines/powerOff/action#lro', {
      status: 500,
      code: 'InternalExecutionError',
      message: 'The VM agent did not respond.',
    });

    await assert.rejects(
      world.settle(world.client.virtualMachineScaleSetVMs.beginPowerOffAndWait(RG, 'pool', '0', FAST_POLL)),
      (error) => {
        assert.match(String(error), /The VM agent did not respond/);
        return true;
      },
    );
    assert.equal(world.state.listInstances(VMSS_PATH)[0]?.powerState, 'running');
  });

  const notFoundCases = [
    { name: 'a missing scale set', path: `${VMSS_PATH}-missing`, status: 404, code: 'ResourceNotFound' },
    { name: 'a missing instance', path: `${VMSS_PATH}/virtualMachines/42`, status: 404, code: 'NotFound' },
    {
      name: 'a missing snapshot',
      path: `${VMSS_PATH.replace(/virtualMachineScaleSets\/pool$/, 'snapshots/none')}`,
      status: 404,
      code: 'ResourceNotFound',
    },
    {
      name: 'an unknown resource type',
      path: VMSS_PATH.replace('virtualMachineScaleSets/pool', 'availabilitySets/x'),
      status: 404,
      code: 'InvalidResourceType',
    },
  ];
  for (const testCase of notFoundCases) {
    it(`answers ${testCase.status} ${testCase.code} for ${testCase.name}`, async () => {
      const version = testCase.path.includes('/snapshots/') ? '2026-03-02' : '2026-04-01';
      const response = await rawRequest(world, 'GET', `${testCase.path}?api-version=${version}`);

      assert.equal(response.status, testCase.status);
      assert.equal(errorCode(response.body), testCase.code);
    });
  }

  it('answers 404 ParentResourceNotFound when creating under a gallery that does not exist', async () => {
    await assert.rejects(
      world.client.galleryImages.beginCreateOrUpdateAndWait(
        RG,
        'no_gallery',
        'pool',
        {
          location: 'westeurope',
          osType: 'Linux',
          osState: 'Generalized',
          identifier: { publisher: 'p', offer: 'o', sku: 's' },
        },
        FAST_POLL,
      ),
      (error) => {
        assert.equal(restError(error).statusCode, 404);
        assert.equal(restError(error).code, 'ParentResourceNotFound');
        return true;
      },
    );
  });

  it('names the missing scale set in ResourceNotFound the way ARM does', async () => {
    await assert.rejects(world.client.virtualMachineScaleSets.get(RG, 'absent'), (error) => {
      assert.equal(restError(error).statusCode, 404);
      assert.match(
        restError(error).message,
        /The Resource 'Microsoft\.Compute\/virtualMachineScaleSets\/absent' under resource group 'rg-nodes' was not found/,
      );
      return true;
    });
  });

  it('answers 400 InvalidRequestContent for a body that is not JSON', async () => {
    const path = VMSS_PATH.replace('virtualMachineScaleSets/pool', 'snapshots/x');
    const response = await rawRequest(world, 'PUT', `${path}?api-version=2026-03-02`, {
      body: '{"location": ',
    });

    assert.equal(response.status, 400);
    assert.equal(errorCode(response.body), 'InvalidRequestContent');
  });

  it('answers 405 for a method the resource does not support', async () => {
    const response = await rawRequest(world, 'POST', `${VMSS_PATH}?api-version=2026-04-01`);

    assert.equal(response.status, 405);
    assert.equal(errorCode(response.body), 'MethodNotAllowed');
  });
});

describe('simulated ARM: RBAC from an action list', () => {
  let world: ArmTestWorld;
  let authorizer: ReturnType<typeof createActionListAuthorizer>;

  before(async () => {
    const directory = mkdtempSync(join(tmpdir(), 'arm-actions-'));
    const file = join(directory, 'compute-actions.json');
    writeFileSync(
      file,
      JSON.stringify([
        { action: 'Microsoft.Compute/virtualMachineScaleSets/read', why: 'read the scale set model' },
        { action: 'Microsoft.Compute/disks/read', why: 'read the OS disk before the snapshot' },
      ]),
    );
    authorizer = createActionListAuthorizer(file);
    world = await startArmTestWorld({
      authorizer,
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'pool', instances: 1 }),
    });
  });

  after(async () => {
    await world.close();
  });

  it('allows listed actions and records them as used', async () => {
    await world.client.virtualMachineScaleSets.get(RG, 'pool');

    assert.deepEqual(authorizer.used(), ['Microsoft.Compute/virtualMachineScaleSets/read']);
  });

  it('answers 403 AuthorizationFailed naming the client, the action and the scope', async () => {
    const diskId = world.state.listInstances(VMSS_PATH)[0]?.osDiskId ?? '';

    await assert.rejects(
      world.client.snapshots.beginCreateOrUpdateAndWait(
        RG,
        'snap',
        { location: 'westeurope', creationData: { createOption: 'Copy', sourceResourceId: diskId } },
        FAST_POLL,
      ),
      (error) => {
        const rest = restError(error);
        assert.equal(rest.statusCode, 403);
        assert.equal(rest.code, 'AuthorizationFailed');
        assert.equal(
          rest.message,
          `The client '${CLIENT_ID}' with object id '${OBJECT_ID}' does not have authorization to perform action 'Microsoft.Compute/snapshots/write' over scope '/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/snapshots/snap' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
        );
        return true;
      },
    );
    assert.deepEqual(authorizer.denied(), ['Microsoft.Compute/snapshots/write']);
  });

  it('scopes an action verb to the resource it acts on', async () => {
    await assert.rejects(
      world.client.virtualMachineScaleSetVMs.beginStartAndWait(RG, 'pool', '0', FAST_POLL),
      (error) => {
        assert.match(
          restError(error).message,
          /action 'Microsoft\.Compute\/virtualMachineScaleSets\/virtualMachines\/start\/action' over scope '\/subscriptions\/[^']+\/virtualMachineScaleSets\/pool\/virtualMachines\/0'/,
        );
        return true;
      },
    );
  });
});

describe('simulated ARM: linked authorization and the product role (infra/azure/compute-actions.json)', () => {
  it('answers 403 LinkedAuthorizationFailed when the caller may write snapshots but not read the source disk', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'arm-actions-'));
    const file = join(directory, 'compute-actions.json');
    writeFileSync(
      file,
      JSON.stringify([{ action: 'Microsoft.Compute/snapshots/write', why: 'snapshot the OS disk' }]),
    );
    const world = await startArmTestWorld({
      authorizer: createActionListAuthorizer(file),
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'pool', instances: 1 }),
    });
    try {
      const diskId = world.state.listInstances(VMSS_PATH)[0]?.osDiskId ?? '';
      await assert.rejects(
        world.client.snapshots.beginCreateOrUpdateAndWait(
          RG,
          'snap',
          { location: 'westeurope', creationData: { createOption: 'Copy', sourceResourceId: diskId } },
          FAST_POLL,
        ),
        (error) => {
          assert.equal(restError(error).statusCode, 403);
          assert.equal(restError(error).code, 'LinkedAuthorizationFailed');
          assert.match(
            restError(error).message,
            /does not have permission to perform action\(s\) 'Microsoft\.Compute\/disks\/read' on the linked scope\(s\)/,
          );
          return true;
        },
      );
    } finally {
      await world.close();
    }
  });

  it('lets the role file carry a whole Uniform refresh without a single denial', async () => {
    const authorizer = createActionListAuthorizer('infra/azure/compute-actions.json');
    const world = await startArmTestWorld({
      authorizer,
      seed: (state) =>
        state.addScaleSet({
          resourceGroup: RG,
          name: 'pool',
          instances: 2,
          extensions: [{ name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' }],
        }),
    });
    const { client } = world;
    try {
      await client.virtualMachineScaleSets.get(RG, 'pool');
      const vm = await client.virtualMachineScaleSetVMs.get(RG, 'pool', '0');
      await world.settle(client.virtualMachineScaleSetVMs.beginPowerOffAndWait(RG, 'pool', '0', FAST_POLL));
      // The power state, as the product reads it: the instance with its instance view (no instanceView/read).
      await client.virtualMachineScaleSetVMs.get(RG, 'pool', '0', { expand: 'instanceView' });
      const source = vm.storageProfile?.osDisk?.managedDisk?.id ?? '';
      const snapshot = await world.settle(
        client.snapshots.beginCreateOrUpdateAndWait(
          RG,
          'snap',
          { location: 'westeurope', creationData: { createOption: 'Copy', sourceResourceId: source } },
          FAST_POLL,
        ),
      );
      await world.settle(client.virtualMachineScaleSetVMs.beginStartAndWait(RG, 'pool', '0', FAST_POLL));
      await world.settle(
        client.galleries.beginCreateOrUpdateAndWait(RG, 'g', { location: 'westeurope' }, FAST_POLL),
      );
      const image = await world.settle(
        client.galleryImages.beginCreateOrUpdateAndWait(
          RG,
          'g',
          'pool',
          {
            location: 'westeurope',
            osType: 'Linux',
            osState: 'Generalized',
            hyperVGeneration: 'V2',
            identifier: { publisher: 'VMSS-Prototype-Pattern', offer: RG, sku: 'pool' },
          },
          FAST_POLL,
        ),
      );
      await world.settle(
        client.galleryImageVersions.beginCreateOrUpdateAndWait(
          RG,
          'g',
          'pool',
          '2026.1122.1000',
          {
            location: 'westeurope',
            storageProfile: { osDiskImage: { source: { id: snapshot.id ?? '' } } },
            publishingProfile: { excludeFromLatest: true },
          },
          FAST_POLL,
        ),
        60,
      );
      await world.settle(
        client.galleryImageVersions.beginUpdateAndWait(
          RG,
          'g',
          'pool',
          '2026.1122.1000',
          { publishingProfile: { excludeFromLatest: false } },
          FAST_POLL,
        ),
      );
      // A first refresh's canary scale set: created from the pool's model (its subnet, backend pool and
      // identity are the creation's linked checks), then deleted.
      const network = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Network`;
      const identity = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet`;
      await world.settle(
        client.virtualMachineScaleSets.beginCreateOrUpdateAndWait(
          RG,
          'pool-cnry',
          {
            location: 'westeurope',
            sku: { name: 'Standard_D4s_v5', capacity: 1 },
            identity: { type: 'UserAssigned', userAssignedIdentities: { [identity]: {} } },
            upgradePolicy: { mode: 'Manual' },
            virtualMachineProfile: {
              storageProfile: { imageReference: { id: image.id ?? '' } },
              osProfile: { computerNamePrefix: 'poolc', adminUsername: 'azureuser' },
              networkProfile: {
                networkInterfaceConfigurations: [
                  {
                    name: 'nic',
                    primary: true,
                    ipConfigurations: [
                      {
                        name: 'ip',
                        subnet: { id: `${network}/virtualNetworks/vnet/subnets/nodes` },
                        loadBalancerBackendAddressPools: [
                          { id: `${network}/loadBalancers/lb/backendAddressPools/nodes` },
                        ],
                      },
                    ],
                  },
                ],
              },
            },
          },
          FAST_POLL,
        ),
        60,
      );
      await world.settle(client.virtualMachineScaleSets.beginDeleteAndWait(RG, 'pool-cnry', FAST_POLL), 60);
      await world.settle(client.snapshots.beginDeleteAndWait(RG, 'snap', FAST_POLL));
      await world.settle(
        client.virtualMachineScaleSets.beginUpdateAndWait(
          RG,
          'pool',
          {
            virtualMachineProfile: {
              storageProfile: {
                imageReference: {
                  id: image.id,
                  publisher: null,
                  offer: null,
                  sku: null,
                  version: null,
                } as never,
              },
              osProfile: { customData: 'I2Nsb3VkLWNvbmZpZwo=' },
            },
          },
          FAST_POLL,
        ),
      );
      for await (const _extension of client.virtualMachineScaleSetExtensions.list(RG, 'pool')) {
        // listing is what the product does before choosing what to delete
      }
      await world.settle(
        client.virtualMachineScaleSetExtensions.beginDeleteAndWait(RG, 'pool', 'vmssCSE', FAST_POLL),
      );
      await world.settle(
        client.galleryImageVersions.beginDeleteAndWait(RG, 'g', 'pool', '2026.1122.1000', FAST_POLL),
      );

      assert.deepEqual(authorizer.denied(), []);
      const unused = authorizer.allowed.filter((action) => !authorizer.used().includes(action));
      // Only the Flexible-mode VM actions, Run Command (capture.mode run-command), the delete of a
      // scale-set VM (a rejected canary's) and live capture's disk actions (the copy disk and its
      // attach; tests/infra/permissions.test.ts runs a live refresh) stay unused by a Uniform refresh with
      // the prep pod.
      assert.ok(
        unused.every(
          (action) =>
            action.startsWith('Microsoft.Compute/virtualMachines/') ||
            action.endsWith('/runCommand/action') ||
            action.endsWith('/attachDetachDataDisks/action') ||
            action === 'Microsoft.Compute/disks/write' ||
            action === 'Microsoft.Compute/disks/delete' ||
            action === 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/delete',
        ),
        `unused: ${unused.join(', ')}`,
      );
    } finally {
      await world.close();
    }
  });
});
