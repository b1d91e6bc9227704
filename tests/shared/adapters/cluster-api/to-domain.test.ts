/**
 * The Cluster API converters over recorded-style objects (tests/fixtures/cluster-api/): the pool view
 * with CAPZ's defaults, the image kinds, the strategy, and the machines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { AzureMachinePool, MachinePool } from '../../../../shared/adapters/cluster-api/schema.js';
import {
  parseObject,
  toCapzImage,
  toMachinePoolMachine,
  toMachinePoolView,
  toRollingUpdateStrategy,
} from '../../../../shared/adapters/cluster-api/to-domain.js';
import type {
  CapzImage,
  MachinePoolMachine,
  RollingUpdateStrategy,
} from '../../../../shared/domain/cluster-api.js';
import { TerminalError } from '../../../../shared/domain/errors.js';
import { clusterApiFixture } from './fixtures.js';

void describe('toMachinePoolView', () => {
  const machinePool = parseObject(MachinePool, clusterApiFixture('machinepool.json'), 'fixture');
  const azureMachinePool = parseObject(
    AzureMachinePool,
    clusterApiFixture('azuremachinepool.json'),
    'fixture',
  );

  void it('reads the pool, its AzureMachinePool, the image as written and the strategy', () => {
    assert.deepEqual(toMachinePoolView('default', machinePool, azureMachinePool), {
      namespace: 'default',
      name: 'capz-pool0',
      azureMachinePool: 'capz-pool0',
      clusterName: 'capz',
      replicas: 3,
      autoscaled: true,
      image: {
        kind: 'compute-gallery',
        gallery: 'capi_gallery',
        name: 'capi-ubun2-2404',
        version: '1.31.4',
        subscriptionId: '00000000-1111-2222-3333-444444444444',
        resourceGroup: 'capi-images',
      },
      imageFields: {
        computeGallery: {
          gallery: 'capi_gallery',
          name: 'capi-ubun2-2404',
          version: '1.31.4',
          subscriptionID: '00000000-1111-2222-3333-444444444444',
          resourceGroup: 'capi-images',
        },
      },
      strategy: { maxSurge: '25%', maxUnavailable: 1, deletePolicy: 'Newest' },
      resourceVersion: '81301',
    });
  });

  void it("applies Cluster API's and CAPZ's defaults to a bare pool", () => {
    const bareMachinePool = structuredClone(machinePool);
    delete bareMachinePool.spec.replicas;
    bareMachinePool.metadata.annotations = {
      'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '1',
    };
    const bareAzureMachinePool = structuredClone(azureMachinePool);
    delete bareAzureMachinePool.spec.template.image;
    delete bareAzureMachinePool.spec.strategy;

    const view = toMachinePoolView('ns', bareMachinePool, bareAzureMachinePool);

    assert.equal(view.replicas, 1);
    assert.equal(view.autoscaled, false, 'both size annotations make it autoscaled');
    assert.equal(view.image, undefined);
    assert.equal(view.imageFields, undefined);
    assert.deepEqual(view.strategy, { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' });
  });

  void it('marks a pool a ClusterClass topology manages', () => {
    const managed = structuredClone(machinePool);
    managed.metadata.labels = { ...managed.metadata.labels, 'topology.cluster.x-k8s.io/owned': '' };
    assert.equal(toMachinePoolView('ns', managed, azureMachinePool).topologyOwned, true);
    assert.equal(toMachinePoolView('ns', machinePool, azureMachinePool).topologyOwned, undefined);
  });

  void it('reports an object it cannot read as terminal, naming the field', () => {
    assert.throws(
      () => parseObject(MachinePool, { metadata: { name: 'x' }, spec: {} }, 'MachinePool default/x'),
      (error: unknown) =>
        error instanceof TerminalError &&
        error.code === 'UnexpectedClusterApiObject' &&
        /^reading MachinePool default\/x: .*\(spec\.clusterName: /.test(error.message),
    );
  });
});

void describe('toCapzImage', () => {
  const cases: { name: string; image: Record<string, unknown>; expected: CapzImage }[] = [
    {
      name: 'a compute gallery version without subscription',
      image: { computeGallery: { gallery: 'g', name: 'def', version: '1.2.3' } },
      expected: { kind: 'compute-gallery', gallery: 'g', name: 'def', version: '1.2.3' },
    },
    {
      name: 'an image id',
      image: {
        id: '/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/galleries/g/images/d/versions/1.0.0',
      },
      expected: {
        kind: 'id',
        id: '/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/galleries/g/images/d/versions/1.0.0',
      },
    },
    {
      name: 'a marketplace image',
      image: {
        marketplace: {
          publisher: 'cncf-upstream',
          offer: 'capi',
          sku: 'ubuntu-2404-gen1',
          version: 'latest',
        },
      },
      expected: { kind: 'other', description: 'marketplace cncf-upstream/capi/ubuntu-2404-gen1/latest' },
    },
    {
      name: 'a shared gallery image',
      image: {
        sharedGallery: { subscriptionID: 's', resourceGroup: 'r', gallery: 'g', name: 'n', version: '1' },
      },
      expected: { kind: 'other', description: 'sharedGallery s/r/g/n/1' },
    },
    {
      name: 'a compute gallery without version',
      image: { computeGallery: { gallery: 'g', name: 'def' } },
      expected: { kind: 'other', description: 'computeGallery g/def' },
    },
    {
      name: 'an unknown kind',
      image: { communityGallery: {} },
      expected: { kind: 'other', description: 'image with communityGallery' },
    },
  ];
  for (const { name, image, expected } of cases) {
    void it(name, () => assert.deepEqual(toCapzImage(image), expected));
  }
});

void describe('toRollingUpdateStrategy', () => {
  const cases: {
    name: string;
    strategy: Parameters<typeof toRollingUpdateStrategy>[0];
    expected: RollingUpdateStrategy | undefined;
  }[] = [
    {
      name: 'absent: CAPZ defaults',
      strategy: undefined,
      expected: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' },
    },
    {
      name: 'RollingUpdate without rollingUpdate: defaults',
      strategy: { type: 'RollingUpdate' },
      expected: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' },
    },
    {
      name: 'partial: the rest defaulted',
      strategy: { rollingUpdate: { maxUnavailable: '10%', deletePolicy: 'Random' } },
      expected: { maxSurge: 1, maxUnavailable: '10%', deletePolicy: 'Random' },
    },
    {
      name: 'an unknown delete policy: Oldest',
      strategy: { rollingUpdate: { deletePolicy: 'Whatever' } },
      expected: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' },
    },
    { name: 'another type: undefined', strategy: { type: 'Recreate' }, expected: undefined },
  ];
  for (const { name, strategy, expected } of cases) {
    void it(name, () => assert.deepEqual(toRollingUpdateStrategy(strategy), expected));
  }
});

void describe('toMachinePoolMachine', () => {
  const recorded = clusterApiFixture('azuremachinepoolmachine.json');
  const cases: { name: string; object: unknown; expected: MachinePoolMachine }[] = [
    {
      name: 'a ready machine on the latest model',
      object: recorded,
      expected: {
        name: 'capz-pool0-0',
        instanceId: '0',
        providerId:
          'azure:///subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/capz-rg/providers/Microsoft.Compute/virtualMachineScaleSets/capz-pool0/virtualMachines/0',
        nodeName: 'capz-pool0-vmss000000',
        provisioningState: 'Succeeded',
        ready: true,
        latestModelApplied: true,
        createdAt: '2026-10-01T08:03:11Z',
        deleting: false,
      },
    },
    {
      name: 'a machine being deleted',
      object: {
        ...recorded,
        metadata: { ...(recorded['metadata'] as object), deletionTimestamp: '2026-10-02T00:00:00Z' },
        status: { ready: false, latestModelApplied: false, provisioningState: 'Deleting' },
      },
      expected: {
        name: 'capz-pool0-0',
        instanceId: '0',
        providerId:
          'azure:///subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/capz-rg/providers/Microsoft.Compute/virtualMachineScaleSets/capz-pool0/virtualMachines/0',
        provisioningState: 'Deleting',
        ready: false,
        latestModelApplied: false,
        createdAt: '2026-10-01T08:03:11Z',
        deleting: true,
      },
    },
    {
      name: 'a machine just created (no spec fields, no status)',
      object: { metadata: { name: 'm', creationTimestamp: '2026-10-01T00:00:00Z' } },
      expected: {
        name: 'm',
        instanceId: '',
        ready: false,
        latestModelApplied: false,
        createdAt: '2026-10-01T00:00:00Z',
        deleting: false,
      },
    },
  ];
  for (const { name, object, expected } of cases) {
    void it(name, () => assert.deepEqual(toMachinePoolMachine(object), expected));
  }
});
