/**
 * The ARM compute ports (armCompute) against a scripted HTTPS endpoint: what goes on the wire (the PATCH body with its
 * explicit nulls, the image version PUT) and ARM answers the simulator does not give (a synchronous
 * ZRS refusal, marketplace image metadata, a hung connection).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { armCompute } from '../../../../shared/adapters/azure/arm-compute.js';
import { TerminalError, TransientError } from '../../../../shared/domain/errors.js';
import type { ScaleSetRef } from '../../../../shared/domain/resource-id.js';
import type { ComputePorts } from '../../../../shared/ports/compute/index.js';
import { fixedCredential, readFixture, SUBSCRIPTION } from './fixture-client.js';
import { armError, type HttpsStub, startHttpsStub, type StubHandler } from './https-stub.js';

const RG = 'rg-k8s-prod';
const pool: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-pool-a' };
const PROVIDERS = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute`;
const IMAGES = `/subscriptions/${SUBSCRIPTION}/providers/Microsoft.Compute/locations/westeurope/publishers/Canonical/artifacttypes/vmimage/offers/ubuntu-24_04-lts/skus/server/versions`;
const DEFINITION_ID = `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/vmss-pool-a`;

function gatewayFor(stub: HttpsStub, requestTimeoutMs?: number): ComputePorts {
  return armCompute({
    credential: fixedCredential,
    subscriptionIds: [SUBSCRIPTION],
    endpoint: stub.url,
    ca: stub.ca,
    retry: { maxRetries: 0 },
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
  });
}

/** The marketplace fixture without Trusted Launch, so the model alone does not tell the generation. */
function plainMarketplaceScaleSet(): Record<string, unknown> {
  const model = readFixture('vmss-uniform-marketplace.json') as {
    properties: { virtualMachineProfile: Record<string, unknown> };
  };
  delete model.properties.virtualMachineProfile['securityProfile'];
  return model;
}

/** Serves `routes` by method and path; anything else is ARM's 404. */
async function withStub(
  routes: Readonly<Record<string, ReturnType<StubHandler>>>,
  run: (stub: HttpsStub) => Promise<void>,
): Promise<HttpsStub> {
  const stub = await startHttpsStub(
    (request) =>
      routes[`${request.method} ${request.path}`] ??
      armError(404, 'ResourceNotFound', `The Resource '${request.path}' was not found.`),
  );
  try {
    await run(stub);
  } finally {
    await stub.close();
  }
  return stub;
}

void describe('scale set image update on the wire', () => {
  void it('PATCHes the image reference with explicit nulls and the new customData, nothing else', async () => {
    const stub = await withStub(
      {
        [`PATCH ${PROVIDERS}/virtualMachineScaleSets/vmss-pool-a`]: {
          status: 200,
          body: readFixture('vmss-uniform-marketplace.json'),
        },
      },
      (stub) =>
        gatewayFor(stub).scaleSets.requestImageUpdate(pool, {
          imageId: DEFINITION_ID,
          customDataBase64: 'I2Nsb3VkLWNvbmZpZwo=',
        }),
    );

    const [patch] = stub.requests;
    assert.equal(stub.requests.length, 1);
    assert.equal(patch?.method, 'PATCH');
    assert.deepEqual(patch.body, {
      properties: {
        virtualMachineProfile: {
          storageProfile: {
            imageReference: { id: DEFINITION_ID, publisher: null, offer: null, sku: null, version: null },
          },
          osProfile: { customData: 'I2Nsb3VkLWNvbmZpZwo=' },
        },
      },
    });
  });
});

void describe('image version PUT on the wire', () => {
  void it('sends the snapshot source, target regions with their storage type and excludeFromLatest', async () => {
    const path = `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/vmss-pool-a/versions/20261122.710.1`;
    const snapshotId = `${PROVIDERS}/snapshots/snap-1`;
    const stub = await withStub(
      { [`PUT ${path}`]: { status: 201, body: readFixture('gallery-image-version-replicating.json') } },
      (stub) =>
        gatewayFor(stub).imageVersions.request({
          ref: {
            subscriptionId: SUBSCRIPTION,
            resourceGroup: 'rg-images',
            galleryName: 'gal_nodes',
            imageName: 'vmss-pool-a',
            versionName: '20261122.710.1',
          },
          location: 'westeurope',
          sourceId: snapshotId,
          storageAccountType: 'Standard_ZRS',
          extraRegions: ['North Europe', 'westeurope'],
          excludeFromLatest: true,
          tags: { 'vmss-prototype/run': 'run-42' },
        }),
    );

    assert.deepEqual(
      stub.requests.map((request) => request.method),
      ['GET', 'PUT'],
      'looked for an existing version first',
    );
    assert.deepEqual(stub.requests[1]?.body, {
      location: 'westeurope',
      tags: { 'vmss-prototype/run': 'run-42' },
      properties: {
        storageProfile: { osDiskImage: { source: { id: snapshotId } } },
        publishingProfile: {
          targetRegions: [
            { name: 'westeurope', regionalReplicaCount: 1, storageAccountType: 'Standard_ZRS' },
            { name: 'North Europe', regionalReplicaCount: 1, storageAccountType: 'Standard_ZRS' },
          ],
          replicaCount: 1,
          storageAccountType: 'Standard_ZRS',
          excludeFromLatest: true,
        },
      },
    });
  });

  void it('maps a synchronous ZRS refusal to TerminalError ZrsUnsupported', async () => {
    const path = `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/vmss-pool-a/versions/1.0.0`;
    await withStub(
      {
        [`PUT ${path}`]: armError(
          400,
          'InvalidParameter',
          'ZRS storage account type is not supported in this region.',
        ),
      },
      async (stub) => {
        await assert.rejects(
          gatewayFor(stub).imageVersions.request({
            ref: {
              subscriptionId: SUBSCRIPTION,
              resourceGroup: 'rg-images',
              galleryName: 'gal_nodes',
              imageName: 'vmss-pool-a',
              versionName: '1.0.0',
            },
            location: 'westindia',
            sourceId: `${PROVIDERS}/snapshots/snap-1`,
            storageAccountType: 'Standard_ZRS',
            extraRegions: [],
            excludeFromLatest: true,
            tags: {},
          }),
          (error: unknown) => {
            assert.ok(error instanceof TerminalError);
            assert.equal(error.code, 'ZrsUnsupported');
            assert.match(
              error.message,
              /^requesting image version rg-images\/gal_nodes\/vmss-pool-a\/1\.0\.0: /,
            );
            return true;
          },
        );
      },
    );
  });
});

void describe('image facts of a marketplace scale set', () => {
  const scaleSetRoute = `GET ${PROVIDERS}/virtualMachineScaleSets/vmss-pool-a`;
  const version = '24.04.202611050';

  void it('reads generation and architecture from the marketplace image when the model does not imply them', async () => {
    const stub = await withStub(
      {
        [scaleSetRoute]: { status: 200, body: plainMarketplaceScaleSet() },
        [`GET ${IMAGES}`]: {
          status: 200,
          body: [{ name: version, location: 'westeurope', id: `${IMAGES}/${version}` }],
        },
        [`GET ${IMAGES}/${version}`]: {
          status: 200,
          body: {
            name: version,
            location: 'westeurope',
            id: `${IMAGES}/${version}`,
            properties: { hyperVGeneration: 'V2', architecture: 'x64' },
          },
        },
      },
      async (stub) => {
        const scaleSet = await gatewayFor(stub).scaleSets.get(pool, { imageFacts: true });

        assert.equal(scaleSet.hyperVGeneration, 'V2');
        assert.equal(scaleSet.architecture, 'x64');
      },
    );

    assert.equal(stub.requests[1]?.query.get('$top'), '1');
  });

  void it('reads the model alone unless asked for the image facts (one request, not two)', async () => {
    const stub = await withStub(
      { [scaleSetRoute]: { status: 200, body: plainMarketplaceScaleSet() } },
      async (stub) => {
        const scaleSet = await gatewayFor(stub).scaleSets.get(pool);

        assert.equal(scaleSet.hyperVGeneration, undefined, 'not looked up');
        assert.equal(scaleSet.imageReference?.kind, 'marketplace');
      },
    );

    assert.equal(stub.requests.length, 1);
  });

  void it('leaves the generation unknown when the image cannot be read (missing permission)', async () => {
    await withStub(
      {
        [scaleSetRoute]: { status: 200, body: plainMarketplaceScaleSet() },
        [`GET ${IMAGES}`]: armError(
          403,
          'AuthorizationFailed',
          "does not have authorization to perform action 'Microsoft.Compute/locations/publishers/artifacttypes/offers/skus/versions/read'",
        ),
      },
      async (stub) => {
        const scaleSet = await gatewayFor(stub).scaleSets.get(pool, { imageFacts: true });

        assert.equal(scaleSet.hyperVGeneration, undefined);
        assert.equal(scaleSet.architecture, 'x64', 'still known from the VM size');
      },
    );
  });

  void it('propagates throttling of the image lookup', async () => {
    await withStub(
      {
        [scaleSetRoute]: { status: 200, body: plainMarketplaceScaleSet() },
        [`GET ${IMAGES}`]: armError(429, 'TooManyRequests', 'Throttled.', { 'retry-after': '40' }),
      },
      async (stub) => {
        await assert.rejects(gatewayFor(stub).scaleSets.get(pool, { imageFacts: true }), (error: unknown) => {
          assert.ok(error instanceof TransientError);
          assert.equal(error.retryAfterMs, 40_000);
          assert.match(error.message, /^reading scale set rg-k8s-prod\/vmss-pool-a: reading its image: /);
          return true;
        });
      },
    );
  });

  void it('skips the lookup when Trusted Launch already implies generation 2', async () => {
    const stub = await withStub(
      { [scaleSetRoute]: { status: 200, body: readFixture('vmss-uniform-marketplace.json') } },
      async (stub) => {
        assert.equal(
          (await gatewayFor(stub).scaleSets.get(pool, { imageFacts: true })).hyperVGeneration,
          'V2',
        );
      },
    );

    assert.equal(stub.requests.length, 1);
  });
});

void describe('an endpoint that never answers', () => {
  let stub: HttpsStub;

  void before(async () => {
    stub = await startHttpsStub(() => 'hang');
  });

  void after(async () => {
    await stub.close();
  });

  void it('times the request out as TransientError instead of hanging', async () => {
    await assert.rejects(gatewayFor(stub, 200).scaleSets.get(pool), (error: unknown) => {
      assert.ok(error instanceof TransientError);
      assert.equal(error.code, 'Timeout');
      return true;
    });
  });
});
