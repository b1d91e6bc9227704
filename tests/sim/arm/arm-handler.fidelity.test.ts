/**
 * What real clients (az 2.45's get-modify-put, the Azure SDK, kubectl's Azure cousins) found where the
 * simulated ARM differed from Azure, driven through the real @azure/arm-compute client (and
 * @azure/core-rest-pipeline for the resource group read): get-modify-put keeps what az leaves out,
 * scale-set etags and preconditions, Compute-style throttling, snapshot PUT statuses, resource groups,
 * scale-set-level instance view and power actions, disk lists and marketplace image reads.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { ComputeManagementClient } from '@azure/arm-compute';
import {
  createDefaultHttpClient,
  createHttpHeaders,
  createPipelineRequest,
  type PipelineResponse,
} from '@azure/core-rest-pipeline';

import { toRefreshError } from '../../../shared/adapters/azure/errors.js';
import { TransientError } from '../../../shared/domain/errors.js';
import { ArmThrottle, COMPUTE_POLICIES } from '../../../sim/arm/throttling.js';
import {
  type ArmTestWorld,
  FAST_POLL,
  rawRequest,
  restError,
  startArmTestWorld,
  staticCredential,
  SUBSCRIPTION,
} from './arm-test-world.js';

const RG = 'rg-fidelity';
const SCALE_SET_ID = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a`;
const GALLERY = 'gal_fidelity';

/** A client that does not retry, so a 429 reaches the test as the service sent it. */
function noRetryClient(world: ArmTestWorld): ComputeManagementClient {
  return new ComputeManagementClient(staticCredential(), SUBSCRIPTION, {
    endpoint: world.url,
    tlsOptions: { ca: world.ca },
    retryOptions: { maxRetries: 0 },
  });
}

function seed(state: ArmTestWorld['state']): void {
  state.addScaleSet({
    resourceGroup: RG,
    name: 'vmss-a',
    instances: 3,
    computerNamePrefix: 'pool-a-',
    tags: { pool: 'a' },
    extensions: [
      {
        name: 'vmssCSE',
        publisher: 'Microsoft.Azure.Extensions',
        type: 'CustomScript',
        protectedSettings: { commandToExecute: 'join --token s3cret' },
      },
    ],
  });
  state.addGallery({
    resourceGroup: RG,
    name: GALLERY,
    images: [{ name: 'pool-a', versions: [{ name: '2026.1122.1000', sourceId: '/subscriptions/x/snap' }] }],
  });
}

void describe('simulated ARM fidelity through @azure/arm-compute', () => {
  let world: ArmTestWorld;

  before(async () => {
    world = await startArmTestWorld({
      seed,
      marketplaceImages: true,
      resourceGroups: () => [{ name: 'rg-Empty', location: 'westeurope' }],
    });
  });

  after(async () => {
    await world.close();
  });

  void it("never returns an extension's protected settings, and keeps them", async () => {
    const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
    const inModel = scaleSet.virtualMachineProfile?.extensionProfile?.extensions?.find(
      (e) => e.name === 'vmssCSE',
    );
    assert.ok(inModel, 'the model lists the extension');
    assert.equal(inModel.protectedSettings, undefined);
    const extension = await world.client.virtualMachineScaleSetExtensions.get(RG, 'vmss-a', 'vmssCSE');
    assert.equal(extension.protectedSettings, undefined);
    const listed: { name?: string; protectedSettings?: unknown }[] = [];
    for await (const entry of world.client.virtualMachineScaleSetExtensions.list(RG, 'vmss-a'))
      listed.push(entry);
    assert.deepEqual(
      listed.map((entry) => [entry.name, entry.protectedSettings]),
      [['vmssCSE', undefined]],
    );
    const stored = world.state.scaleSetResource(SCALE_SET_ID)?.properties;
    assert.ok(JSON.stringify(stored).includes('s3cret'), 'ARM keeps them with the model');
  });

  void describe('get-modify-put keeps what az leaves out', () => {
    void it('a scale set PUT without imageReference keeps the stored image reference', async () => {
      const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
      const profile = scaleSet.virtualMachineProfile ?? {};
      delete profile.storageProfile?.imageReference;

      await world.settle(
        world.client.virtualMachineScaleSets.createOrUpdate(
          RG,
          'vmss-a',
          { ...scaleSet, tags: { ...scaleSet.tags, x: 'y' }, virtualMachineProfile: profile },
          FAST_POLL,
        ),
      );

      const stored = world.state.getScaleSet(SCALE_SET_ID);
      assert.equal(stored?.imageReference.publisher, 'Canonical');
      assert.equal(stored?.imageReference.offer, 'ubuntu-24_04-lts');
      assert.equal(stored?.tags.x, 'y');
    });

    void it('an image version PUT without its source keeps the stored source and applies the change', async () => {
      const version = await world.client.galleryImageVersions.get(RG, GALLERY, 'pool-a', '2026.1122.1000');
      const storageProfile = { ...version.storageProfile };
      delete storageProfile.osDiskImage;
      delete storageProfile.source;

      await world.settle(
        world.client.galleryImageVersions.createOrUpdate(
          RG,
          GALLERY,
          'pool-a',
          '2026.1122.1000',
          {
            ...version,
            storageProfile,
            publishingProfile: { ...version.publishingProfile, excludeFromLatest: true },
          },
          FAST_POLL,
        ),
      );

      const stored = world.state.getImageVersion(
        `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/${GALLERY}/images/pool-a/versions/2026.1122.1000`,
      );
      assert.equal(stored?.sourceId, '/subscriptions/x/snap');
      assert.equal(stored?.excludeFromLatest, true);
    });
  });

  void describe('scale-set etags and preconditions', () => {
    void it('every write changes the etag; If-Match with the current one updates', async () => {
      const before = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
      assert.match(before.etag ?? '', /^"\d+"$/);

      const updated = await world.settle(
        world.client.virtualMachineScaleSets.update(
          RG,
          'vmss-a',
          { tags: { pool: 'a', round: '1' } },
          { ...FAST_POLL, ifMatch: before.etag ?? '' },
        ),
      );

      assert.notEqual(updated.etag, before.etag);
      assert.equal((await world.client.virtualMachineScaleSets.get(RG, 'vmss-a')).etag, updated.etag);
    });

    void it('a model update after another tool changed the scale set fails 412 instead of overwriting', async () => {
      const read = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');
      // Another tool (az vmss update --set tags.owner=ops) writes in between.
      await world.settle(
        world.client.virtualMachineScaleSets.update(RG, 'vmss-a', { tags: { owner: 'ops' } }, FAST_POLL),
      );

      const error = await world.client.virtualMachineScaleSets
        .update(RG, 'vmss-a', { tags: { pool: 'a' } }, { ...FAST_POLL, ifMatch: read.etag ?? '' })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );

      const rest = restError(error);
      assert.equal(rest.statusCode, 412);
      assert.equal(rest.code, 'PreconditionFailed');
      const current = world.state.getScaleSet(SCALE_SET_ID)?.etag ?? '';
      assert.equal(
        rest.message,
        `Etag provided in if-match header ${read.etag ?? ''} does not match etag ${current} of resource.`,
      );
      assert.deepEqual(world.state.getScaleSet(SCALE_SET_ID)?.tags, { owner: 'ops' });
    });

    void it('If-None-Match: * on an existing scale set is refused 412', async () => {
      const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');

      const error = await world.client.virtualMachineScaleSets
        .createOrUpdate(RG, 'vmss-a', scaleSet, { ...FAST_POLL, ifNoneMatch: '*' })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );

      assert.equal(restError(error).statusCode, 412);
      assert.equal(restError(error).code, 'PreconditionFailed');
    });
  });

  void describe('throttling as Compute reports and refuses it', () => {
    void it('every response carries the subscription and Compute policy remaining counts', async () => {
      const seen: { status: number; headers: Record<string, string | undefined> }[] = [];
      const onResponse = (response: PipelineResponse): void => {
        seen.push({
          status: response.status,
          headers: {
            reads: response.headers.get('x-ms-ratelimit-remaining-subscription-reads'),
            writes: response.headers.get('x-ms-ratelimit-remaining-subscription-writes'),
            resource: response.headers.get('x-ms-ratelimit-remaining-resource'),
          },
        });
      };

      await world.client.virtualMachineScaleSets.get(RG, 'vmss-a', { onResponse });
      await world.client.virtualMachineScaleSets.get(RG, 'vmss-a', { onResponse });
      for await (const _page of world.client.virtualMachineScaleSets.list(RG, { onResponse })) {
        // drain
      }
      await world.client.virtualMachineScaleSets.getInstanceView(RG, 'vmss-a', { onResponse });

      const [first, second, list, view] = seen;
      assert.match(first?.headers.reads ?? '', /^\d+$/);
      assert.equal(Number(second?.headers.reads), Number(first?.headers.reads) - 1);
      const remaining = (header: string | undefined, policy: string): number => {
        const match = new RegExp(`^Microsoft\\.Compute/${policy};(\\d+)$`).exec(header ?? '');
        assert.ok(match?.[1], `${header ?? '(none)'} names ${policy}`);
        return Number(match[1]);
      };
      assert.equal(
        remaining(second?.headers.resource, 'GetVMScaleSet3Min'),
        remaining(first?.headers.resource, 'GetVMScaleSet3Min') - 1,
      );
      remaining(list?.headers.resource, 'HighCostGetVMScaleSet3Min');
      remaining(view?.headers.resource, 'HighCostGetVMScaleSet3Min');
    });

    void it('a write reports the writes bucket', async () => {
      let writes: string | undefined;
      await world.settle(
        world.client.virtualMachineScaleSets.update(
          RG,
          'vmss-a',
          { tags: { pool: 'a' } },
          {
            ...FAST_POLL,
            onResponse: (response) => {
              if (response.request.method === 'PATCH')
                writes = response.headers.get('x-ms-ratelimit-remaining-subscription-writes');
            },
          },
        ),
      );

      assert.match(writes ?? '', /^\d+$/);
    });

    void it('an injected 429 has Compute shape, and the product maps it to a transient error with the wait', async () => {
      world.faults.inject('Microsoft.Compute/virtualMachineScaleSets/instanceView/read', {
        status: 429,
        code: 'TooManyRequests',
        message: 'throttled',
        retryAfterSeconds: 17,
      });
      let headers: { retryAfter?: string | undefined; resource?: string | undefined } = {};

      const error = await noRetryClient(world)
        .virtualMachineScaleSets.getInstanceView(RG, 'vmss-a', {
          onResponse: (response) => {
            headers = {
              retryAfter: response.headers.get('retry-after'),
              resource: response.headers.get('x-ms-ratelimit-remaining-resource'),
            };
          },
        })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );

      const rest = restError(error);
      assert.equal(rest.statusCode, 429);
      assert.equal(rest.code, 'OperationNotAllowed');
      const details = (
        rest.details as { error?: { details?: { code: string; target: string; message: string }[] } }
      ).error?.details;
      assert.equal(details?.[0]?.code, 'TooManyRequests');
      assert.equal(details?.[0]?.target, 'HighCostGetVMScaleSet3Min');
      const counter = JSON.parse(details?.[0]?.message ?? '{}') as {
        operationGroup?: string;
        startTime?: string;
        endTime?: string;
        allowedRequestCount?: number;
        measuredRequestCount?: number;
      };
      assert.equal(counter.operationGroup, 'HighCostGetVMScaleSet3Min');
      // The policy's 3-minute window, its cap counted and one more: a counter that says why it refused.
      assert.equal(Date.parse(counter.endTime ?? '') - Date.parse(counter.startTime ?? ''), 180_000);
      assert.equal(counter.allowedRequestCount, 1080);
      assert.equal(counter.measuredRequestCount, 1081);
      assert.equal(headers.retryAfter, '17');
      // And the headers agree with it: the bucket is empty, not full.
      assert.equal(headers.resource, 'Microsoft.Compute/HighCostGetVMScaleSet3Min;0');
      const mapped = toRefreshError(error, 'listing scale sets', world.clock.nowMs());
      assert.ok(mapped instanceof TransientError);
      assert.equal(mapped.retryAfterMs, 17_000);
    });
  });

  void describe('snapshots', () => {
    void it('a new snapshot PUT answers 202 without a body, a repeated PUT 200; never 201', async () => {
      const disk = world.state.listInstances(SCALE_SET_ID)[0]?.osDiskId ?? '';
      const statuses: number[] = [];
      const body = {
        location: 'westeurope',
        creationData: { createOption: 'Copy' as const, sourceResourceId: disk },
      };
      const onResponse = (response: PipelineResponse): void => {
        if (response.request.method === 'PUT') statuses.push(response.status);
      };

      const created = await world.settle(
        world.client.snapshots.createOrUpdate(RG, 'snap-a', body, { ...FAST_POLL, onResponse }),
      );
      await world.settle(
        world.client.snapshots.createOrUpdate(RG, 'snap-a', body, { ...FAST_POLL, onResponse }),
      );

      assert.deepEqual(statuses, [202, 200]);
      assert.equal(created.provisioningState, 'Succeeded');
    });
  });

  void describe('resource groups, scale-set instance view and power actions, disks, marketplace images', () => {
    async function getResourceGroup(
      name: string,
    ): Promise<{ status: number; body: Record<string, unknown> }> {
      const client = createDefaultHttpClient();
      const token = await staticCredential().getToken('https://management.azure.com/.default');
      const request = createPipelineRequest({
        url: `${world.url}/subscriptions/${SUBSCRIPTION}/resourcegroups/${name}?api-version=2021-04-01`,
        method: 'GET',
        headers: createHttpHeaders({ authorization: `Bearer ${token?.token ?? ''}` }),
      });
      // createPipelineRequest does not take TLS settings; the HTTP client reads them from the request.
      request.tlsSettings = { ca: world.ca };
      const response = await client.sendRequest(request);
      return {
        status: response.status,
        body: JSON.parse(response.bodyAsText ?? '{}') as Record<string, unknown>,
      };
    }

    void it('reads a resource group with its location, and answers ResourceGroupNotFound for a missing one', async () => {
      const found = await getResourceGroup('RG-FIDELITY');
      const configured = await getResourceGroup('rg-empty');
      const missing = await getResourceGroup('rg-missing');

      assert.equal(found.status, 200);
      assert.equal(found.body.name, RG);
      assert.equal(found.body.location, 'westeurope');
      assert.equal(found.body.id, `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}`);
      assert.equal(configured.body.name, 'rg-Empty');
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, {
        error: { code: 'ResourceGroupNotFound', message: "Resource group 'rg-missing' could not be found." },
      });
    });

    void it('reports the scale-set instance view as status summaries', async () => {
      const view = await world.client.virtualMachineScaleSets.getInstanceView(RG, 'vmss-a');

      assert.deepEqual(view.virtualMachine?.statusesSummary, [
        { code: 'ProvisioningState/succeeded', count: 3 },
      ]);
      assert.equal(view.extensions?.[0]?.name, 'vmssCSE');
      assert.equal(view.statuses?.[0]?.code, 'ProvisioningState/succeeded');
    });

    void it('powers off the named instances, then starts them all, as scale-set-level actions', async () => {
      const powerOf = (): string[] =>
        world.state.listInstances(SCALE_SET_ID).map((instance) => instance.powerState);

      await world.settle(
        world.client.virtualMachineScaleSets.powerOff(RG, 'vmss-a', {
          ...FAST_POLL,
          vmInstanceIDs: { instanceIds: ['1', '2'] },
        }),
      );
      assert.deepEqual(powerOf(), ['running', 'stopped', 'stopped']);
      await world.settle(
        world.client.virtualMachineScaleSets.deallocate(RG, 'vmss-a', {
          ...FAST_POLL,
          vmInstanceIDs: { instanceIds: ['2'] },
        }),
      );
      assert.deepEqual(powerOf(), ['running', 'stopped', 'deallocated']);

      await world.settle(world.client.virtualMachineScaleSets.start(RG, 'vmss-a', FAST_POLL));
      assert.deepEqual(powerOf(), ['running', 'running', 'running']);
      await world.settle(
        world.client.virtualMachineScaleSets.restart(RG, 'vmss-a', {
          ...FAST_POLL,
          vmInstanceIDs: { instanceIds: ['0'] },
        }),
      );
      assert.deepEqual(powerOf(), ['running', 'running', 'running']);
    });

    void it('refuses an instance id the scale set does not have', async () => {
      const error = await world.client.virtualMachineScaleSets
        .powerOff(RG, 'vmss-a', { ...FAST_POLL, vmInstanceIDs: { instanceIds: ['7'] } })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );

      assert.equal(restError(error).statusCode, 400);
      assert.match(restError(error).message, /instanceId 7 is not an active Virtual Machine Scale Set VM/);
    });

    void it('lists the managed disks of a resource group', async () => {
      const names: string[] = [];
      for await (const disk of world.client.disks.listByResourceGroup(RG)) names.push(disk.name ?? '');

      assert.equal(names.length, 3);
      assert.ok(names.every((name) => name.startsWith('vmss-a_')));
    });

    void it('reads marketplace image versions: the newest by name, and its Hyper-V generation', async () => {
      const [newest] = await world.client.virtualMachineImages.list(
        'westeurope',
        'Canonical',
        'ubuntu-24_04-lts',
        'server',
        { top: 1, orderby: 'name desc' },
      );
      const image = await world.client.virtualMachineImages.get(
        'westeurope',
        'Canonical',
        'ubuntu-24_04-lts',
        'server',
        newest?.name ?? '',
      );
      const missing = await world.client.virtualMachineImages
        .get('westeurope', 'Canonical', 'ubuntu-24_04-lts', 'server', '0.0.1')
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );

      assert.equal(newest?.name, '1.0.202611010');
      assert.equal(image.hyperVGeneration, 'V2');
      assert.equal(image.architecture, 'x64');
      assert.equal(restError(missing).statusCode, 404);
    });

    void it('authorizes location-level reads on the subscription, as ARM names the scope', async () => {
      const denied = await startArmTestWorld({
        seed,
        marketplaceImages: true,
        authorizer: (action) => !action.includes('/publishers/'),
      });
      try {
        const response = await rawRequest(
          denied,
          'GET',
          `/subscriptions/${SUBSCRIPTION}/providers/Microsoft.Compute/locations/westeurope/publishers/Canonical/artifacttypes/vmimage/offers/ubuntu-24_04-lts/skus/server/versions?api-version=2026-04-01`,
        );

        assert.equal(response.status, 403);
        assert.match(
          JSON.stringify(response.body),
          new RegExp(
            `'Microsoft.Compute/locations/publishers/artifacttypes/offers/skus/versions/read' over scope '/subscriptions/${SUBSCRIPTION}'`,
          ),
        );
      } finally {
        await denied.close();
      }
    });
  });
});

void describe('simulated ARM with an enforcing throttle', () => {
  let world: ArmTestWorld;
  let throttle: ArmThrottle | undefined;

  before(async () => {
    world = await startArmTestWorld({
      seed,
      throttle: (clock) => {
        throttle = new ArmThrottle({ clock, enforce: true });
        return throttle;
      },
    });
  });

  after(async () => {
    await world.close();
  });

  void it('refuses once the policy bucket is empty, names the policy, and serves again after it refills', async () => {
    throttle?.exhaust(SUBSCRIPTION, COMPUTE_POLICIES.getScaleSet);
    let retryAfter: string | undefined;

    const error = await noRetryClient(world)
      .virtualMachineScaleSets.get(RG, 'vmss-a', {
        onResponse: (response) => (retryAfter = response.headers.get('retry-after')),
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    world.clock.advance(Number(retryAfter ?? '0'));
    const served = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');

    assert.equal(restError(error).statusCode, 429);
    assert.equal(restError(error).code, 'OperationNotAllowed');
    assert.match(restError(error).message, /too many requests have been received for this subscription/);
    assert.ok(Number(retryAfter) >= 1);
    assert.equal(served.name, 'vmss-a');
  });
});
