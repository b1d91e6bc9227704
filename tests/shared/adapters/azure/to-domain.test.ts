/**
 * Converter tests: ARM JSON fixtures go through the real SDK deserializers (in-memory HTTP client),
 * then through to-domain; the domain objects are compared whole.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  architectureFromVmSize,
  type ImageFacts,
  imageFactsFromGalleryImage,
  toExtension,
  toImageReference,
  toScaleSet,
} from '../../../../shared/adapters/azure/to-domain.js';
import {
  toImageDefinition,
  toImageVersion,
  toSnapshot,
} from '../../../../shared/adapters/azure/to-domain-gallery.js';
import {
  isMemberOf,
  toFlexibleInstance,
  toPowerState,
  toUniformInstance,
} from '../../../../shared/adapters/azure/to-domain-instances.js';
import type { ImageVersion, ScaleSetInstance } from '../../../../shared/domain/compute.js';
import type { ScaleSetRef } from '../../../../shared/domain/resource-id.js';
import type { ScaleSet } from '../../../../shared/domain/scale-set.js';
import { clientForFixture, clientServing, readFixture, SUBSCRIPTION } from './fixture-client.js';

const RG = 'rg-k8s-prod';
const poolA: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-pool-a' };
const armPool: ScaleSetRef = {
  subscriptionId: SUBSCRIPTION,
  resourceGroup: 'rg-k8s-prod',
  name: 'vmss-arm-pool',
};
const flexPool: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-flex-pool' };
const winPool: ScaleSetRef = { subscriptionId: SUBSCRIPTION, resourceGroup: RG, name: 'vmss-win' };
const vmssId = (rg: string, name: string): string =>
  `/subscriptions/${SUBSCRIPTION}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;

interface ScaleSetCase {
  readonly name: string;
  readonly fixture: string;
  readonly ref: ScaleSetRef;
  readonly facts?: ImageFacts;
  readonly expected: ScaleSet;
}

const scaleSetCases: readonly ScaleSetCase[] = [
  {
    name: 'Uniform, marketplace image, managed OS disk, Trusted Launch (gen 2 inferred), two extensions',
    fixture: 'vmss-uniform-marketplace.json',
    ref: poolA,
    expected: {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: RG,
      name: 'vmss-pool-a',
      id: vmssId(RG, 'vmss-pool-a'),
      capacity: 3,
      etag: '"12"',
      imageReferenceFields: {
        offer: 'ubuntu-24_04-lts',
        publisher: 'Canonical',
        sku: 'server',
        version: 'latest',
      },
      provisioningState: 'Succeeded',
      location: 'westeurope',
      orchestrationMode: 'Uniform',
      osType: 'Linux',
      upgradePolicyMode: 'Manual',
      automaticOsUpgrade: false,
      ephemeralOsDisk: false,
      imageReference: {
        kind: 'marketplace',
        publisher: 'Canonical',
        offer: 'ubuntu-24_04-lts',
        sku: 'server',
        version: 'latest',
      },
      tags: { cluster: 'prod-weu-1', pool: 'pool-a' },
      extensions: [
        {
          name: 'vmss-cse',
          publisher: 'Microsoft.Azure.Extensions',
          type: 'CustomScript',
          provisioningState: 'Succeeded',
        },
        {
          name: 'HealthExtension',
          publisher: 'Microsoft.ManagedServices',
          type: 'ApplicationHealthLinux',
          provisioningState: 'Succeeded',
        },
      ],
      vmSize: 'Standard_D4s_v5',
      hyperVGeneration: 'V2',
      securityType: 'TrustedLaunch',
      architecture: 'x64',
      zones: ['1', '2', '3'],
    },
  },
  {
    name: 'Uniform, ephemeral OS disk, Rolling + automatic OS upgrade, gallery image facts win over the SKU',
    fixture: 'vmss-uniform-ephemeral-gallery.json',
    ref: armPool,
    facts: { hyperVGeneration: 'V1', architecture: 'Arm64' },
    expected: {
      subscriptionId: SUBSCRIPTION,
      // ARM's own id wins over the casing the caller used.
      resourceGroup: 'RG-K8S-PROD',
      name: 'vmss-arm-pool',
      capacity: 2,
      imageReferenceFields: {
        id: '/subscriptions/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/k8s-node-arm64',
      },
      provisioningState: 'Succeeded',
      id: vmssId('RG-K8S-PROD', 'vmss-arm-pool'),
      location: 'northeurope',
      orchestrationMode: 'Uniform',
      osType: 'Linux',
      upgradePolicyMode: 'Rolling',
      automaticOsUpgrade: true,
      ephemeralOsDisk: true,
      ephemeralOsDiskPlacement: 'ResourceDisk',
      imageReference: {
        kind: 'gallery',
        id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/k8s-node-arm64`,
      },
      tags: {},
      extensions: [],
      vmSize: 'Standard_D4pds_v5',
      hyperVGeneration: 'V1',
      architecture: 'Arm64',
      zones: [],
    },
  },
  {
    name: 'Flexible, no upgrade policy, managed image, osType from linuxConfiguration, x64 from the VM size',
    fixture: 'vmss-flexible-managed-image.json',
    ref: flexPool,
    expected: {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: RG,
      name: 'vmss-flex-pool',
      capacity: 2,
      imageReferenceFields: {
        id: '/subscriptions/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/resourceGroups/rg-images/providers/Microsoft.Compute/images/k8s-node-2026-02',
      },
      provisioningState: 'Succeeded',
      id: vmssId(RG, 'vmss-flex-pool'),
      location: 'westeurope',
      orchestrationMode: 'Flexible',
      osType: 'Linux',
      automaticOsUpgrade: false,
      ephemeralOsDisk: false,
      imageReference: {
        kind: 'managed-image',
        id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/images/k8s-node-2026-02`,
      },
      tags: { 'sigs.k8s.io_cluster-api-provider-azure_cluster_capz-1': 'owned' },
      extensions: [],
      vmSize: 'Standard_D2s_v5',
      architecture: 'x64',
      zones: ['2'],
    },
  },
  {
    name: 'Windows from windowsConfiguration, shared gallery image, Automatic upgrade mode, no tags',
    fixture: 'vmss-windows-shared-gallery.json',
    ref: winPool,
    expected: {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: RG,
      name: 'vmss-win',
      capacity: 1,
      imageReferenceFields: {
        sharedGalleryImageId:
          '/SharedGalleries/a1b2c3d4-0000-1111-2222-333344445555-PARTNERIMAGES/Images/win2022-k8s/Versions/latest',
      },
      provisioningState: 'Succeeded',
      id: vmssId(RG, 'vmss-win'),
      location: 'westeurope',
      orchestrationMode: 'Uniform',
      osType: 'Windows',
      upgradePolicyMode: 'Automatic',
      automaticOsUpgrade: false,
      ephemeralOsDisk: false,
      imageReference: {
        kind: 'shared-gallery',
        id: '/SharedGalleries/a1b2c3d4-0000-1111-2222-333344445555-PARTNERIMAGES/Images/win2022-k8s/Versions/latest',
      },
      tags: {},
      extensions: [],
      vmSize: 'Standard_D4s_v5',
      architecture: 'x64',
      zones: [],
    },
  },
];

void describe('toScaleSet', () => {
  for (const testCase of scaleSetCases) {
    void it(testCase.name, async () => {
      const model = await clientForFixture(testCase.fixture).virtualMachineScaleSets.get(
        testCase.ref.resourceGroup,
        testCase.ref.name,
      );

      const scaleSet = toScaleSet(model, testCase.ref, testCase.facts);

      assert.deepEqual(scaleSet, testCase.expected);
    });
  }
});

void describe('toImageReference', () => {
  const cases = [
    { name: 'absent', input: undefined, expected: undefined },
    { name: 'empty object', input: {}, expected: undefined },
    {
      name: 'gallery version id (pinned)',
      input: {
        id: '/subscriptions/s/resourceGroups/r/providers/microsoft.compute/galleries/g/images/i/versions/1.2.3',
      },
      expected: {
        kind: 'gallery',
        id: '/subscriptions/s/resourceGroups/r/providers/microsoft.compute/galleries/g/images/i/versions/1.2.3',
      },
    },
    {
      name: 'community gallery',
      input: { communityGalleryImageId: '/CommunityGalleries/pub-1/Images/ubuntu/Versions/latest' },
      expected: { kind: 'community-gallery', id: '/CommunityGalleries/pub-1/Images/ubuntu/Versions/latest' },
    },
    {
      name: 'marketplace without version means latest',
      input: { publisher: 'Canonical', offer: 'o', sku: 's' },
      expected: { kind: 'marketplace', publisher: 'Canonical', offer: 'o', sku: 's', version: 'latest' },
    },
    {
      name: 'marketplace with a null id left over (as PATCHed models show)',
      input: { id: '', publisher: 'Canonical', offer: 'o', sku: 's', version: '1.0.0' },
      expected: { kind: 'marketplace', publisher: 'Canonical', offer: 'o', sku: 's', version: '1.0.0' },
    },
  ] as const;
  for (const testCase of cases) {
    void it(testCase.name, () => {
      assert.deepEqual(toImageReference(testCase.input), testCase.expected);
    });
  }
});

void describe('toPowerState', () => {
  const cases = [
    { codes: ['ProvisioningState/succeeded', 'PowerState/running'], expected: 'running' },
    { codes: ['ProvisioningState/updating', 'PowerState/stopping'], expected: 'stopping' },
    { codes: ['PowerState/stopped'], expected: 'stopped' },
    { codes: ['PowerState/deallocating'], expected: 'deallocating' },
    { codes: ['powerstate/Deallocated'], expected: 'deallocated' },
    { codes: ['PowerState/starting'], expected: 'starting' },
    { codes: ['PowerState/hibernated'], expected: 'unknown' },
    { codes: ['ProvisioningState/creating'], expected: 'unknown' },
    { codes: [], expected: 'unknown' },
  ] as const;
  for (const testCase of cases) {
    void it(`${testCase.codes.join(', ') || 'no statuses'} → ${testCase.expected}`, () => {
      assert.equal(toPowerState(testCase.codes.map((code) => ({ code }))), testCase.expected);
    });
  }
});

void describe('instances', () => {
  void it('Uniform instance: instance view power state, managed OS disk id, vmId, computer name', async () => {
    const vm = await clientForFixture('vmss-vm-uniform-running.json').virtualMachineScaleSetVMs.get(
      RG,
      'vmss-pool-a',
      '3',
    );

    const instance = toUniformInstance(poolA, vm);

    const expected: ScaleSetInstance = {
      scaleSet: poolA,
      instanceId: '3',
      resourceId: `${vmssId(RG, 'vmss-pool-a')}/virtualMachines/3`,
      vmId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      computerName: 'pool-a000003',
      createdAt: '2026-11-20T07:00:03.000Z',
      exactVersion: '24.04.202611050',
      powerState: 'running',
      provisioningState: 'Succeeded',
      osDiskId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/RG-K8S-PROD/providers/Microsoft.Compute/disks/vmss-pool-a_3_OsDisk_1_4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e`,
      osDiskType: 'Premium_LRS',
      ephemeralOsDisk: false,
      location: 'westeurope',
      zones: ['2'],
      dataDisks: [],
      hyperVGeneration: 'V2',
    };
    assert.deepEqual(instance, expected);
  });

  void it('Uniform instance on an ephemeral OS disk has no OS disk id; provisioning state from the statuses', async () => {
    const vm = await clientForFixture('vm-ephemeral-deallocating.json').virtualMachineScaleSetVMs.get(
      'RG-K8S-PROD',
      'vmss-arm-pool',
      '0',
    );

    const instance = toUniformInstance(armPool, vm);

    assert.equal(instance.ephemeralOsDisk, true);
    assert.equal(instance.osDiskId, undefined);
    assert.equal(instance.osDiskType, undefined, 'an ephemeral OS disk has no managed disk type');
    assert.equal(instance.powerState, 'deallocating');
    assert.equal(instance.provisioningState, 'Updating');
    assert.equal(instance.computerName, undefined);
    assert.equal(instance.hyperVGeneration, undefined);
  });

  void it('Flexible member: the VM name is the instance id; membership compares ids without case', async () => {
    const vm = await clientForFixture('vm-flexible-member-stopped.json').virtualMachines.get(
      RG,
      'vmss-flex-pool_a1b2c3d4',
    );

    const instance = toFlexibleInstance(flexPool, vm);

    const expected: ScaleSetInstance = {
      scaleSet: flexPool,
      instanceId: 'vmss-flex-pool_a1b2c3d4',
      resourceId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/vmss-flex-pool_a1b2c3d4`,
      vmId: '1f3e5d7c-9b2a-4c6e-8d0f-a1b2c3d4e5f6',
      computerName: 'flex00000A',
      createdAt: '2026-10-01T08:00:00.000Z',
      imageId:
        '/subscriptions/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/resourceGroups/rg-images/providers/Microsoft.Compute/images/k8s-node-2026-02',
      powerState: 'stopped',
      provisioningState: 'Succeeded',
      osDiskId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/disks/vmss-flex-pool_a1b2c3d4_OsDisk_1_9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b`,
      osDiskType: 'Premium_LRS',
      ephemeralOsDisk: false,
      location: 'westeurope',
      zones: ['2'],
      dataDisks: [],
      hyperVGeneration: 'V1',
    };
    assert.deepEqual(instance, expected);
    assert.equal(isMemberOf(vm, flexPool), true);
    assert.equal(isMemberOf(vm, poolA), false);
  });
});

void describe('snapshots, images, extensions', () => {
  void it('incremental snapshot with its source disk and tags', async () => {
    const snapshot = await clientForFixture('snapshot-incremental.json').snapshots.get(
      RG,
      'snap-vmss-pool-a-3-20261122t0710',
    );

    assert.deepEqual(toSnapshot(snapshot, 'ignored-when-the-id-parses'), {
      id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/snapshots/snap-vmss-pool-a-3-20261122t0710`,
      name: 'snap-vmss-pool-a-3-20261122t0710',
      resourceGroup: RG,
      location: 'westeurope',
      provisioningState: 'Succeeded',
      sourceResourceId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/RG-K8S-PROD/providers/Microsoft.Compute/disks/vmss-pool-a_3_OsDisk_1_4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e`,
      incremental: true,
      tags: {
        'vmss-prototype/source-vm-id': '7c9e6679-7425-40de-944b-e07fc1f90ae7',
        'vmss-prototype/run': 'run-42',
      },
    });
  });

  void it('image definition with a SecurityType feature', async () => {
    const ref = {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: 'rg-images',
      galleryName: 'gal_nodes',
      imageName: 'vmss-pool-a',
    };
    const image = await clientForFixture('gallery-image-definition.json').galleryImages.get(
      'rg-images',
      'gal_nodes',
      'vmss-pool-a',
    );

    assert.deepEqual(toImageDefinition(image, ref), {
      id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/vmss-pool-a`,
      ref,
      location: 'westeurope',
      provisioningState: 'Succeeded',
      spec: {
        osType: 'Linux',
        osState: 'Generalized',
        hyperVGeneration: 'V2',
        architecture: 'x64',
        securityType: 'TrustedLaunchSupported',
        identifier: { publisher: 'VMSS-Prototype-Pattern', offer: 'rg-k8s-prod', sku: 'vmss-pool-a' },
        description: 'Prototype images of rg-k8s-prod/vmss-pool-a',
        tags: { 'managed-by': 'vmss-prototype' },
      },
    });
  });

  void it('image definition without hyperVGeneration takes ARM default V1 (and feeds scale set facts)', async () => {
    const ref = {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: 'rg-images',
      galleryName: 'gal_nodes',
      imageName: 'k8s-node-arm64',
    };
    const image = await clientForFixture('gallery-image-definition-legacy.json').galleryImages.get(
      'rg-images',
      'gal_nodes',
      'k8s-node-arm64',
    );

    const definition = toImageDefinition(image, ref);

    assert.equal(definition.spec.hyperVGeneration, 'V1');
    assert.equal(definition.spec.architecture, 'Arm64');
    assert.equal(definition.spec.osState, 'Specialized');
    assert.equal(definition.spec.securityType, undefined);
    assert.deepEqual(imageFactsFromGalleryImage(image), { hyperVGeneration: 'V1', architecture: 'Arm64' });
  });

  void it('image version while replicating (expand=ReplicationStatus), region names with spaces', async () => {
    const ref = {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: 'rg-images',
      galleryName: 'gal_nodes',
      imageName: 'vmss-pool-a',
      versionName: '20261122.710.1',
    };
    const version = await clientForFixture('gallery-image-version-replicating.json').galleryImageVersions.get(
      'rg-images',
      'gal_nodes',
      'vmss-pool-a',
      '20261122.710.1',
      { expand: 'ReplicationStatus' },
    );

    const expected: ImageVersion = {
      id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/gal_nodes/images/vmss-pool-a/versions/20261122.710.1`,
      ref,
      location: 'westeurope',
      provisioningState: 'Creating',
      excludeFromLatest: true,
      storageAccountType: 'Standard_ZRS',
      replicationState: 'Replicating',
      // The least regional progress: what the wait judges how long the rest takes by.
      replicationProgress: 12,
      sourceId: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-k8s-prod/providers/Microsoft.Compute/snapshots/snap-vmss-pool-a-3-20261122t0710`,
      publishedAt: '2026-11-22T07:12:05.987Z',
      tags: { 'vmss-prototype/source-vm-id': '7c9e6679-7425-40de-944b-e07fc1f90ae7' },
      // Its target regions carry no excludeFromLatest of their own: a publication need not read it first.
      regionalExclusion: false,
    };
    assert.deepEqual(toImageVersion(version, ref), expected);
    // A region with a flag of its own (it overrides the version's): a publication must read it first.
    const flagged = {
      ...version,
      publishingProfile: {
        ...version.publishingProfile,
        targetRegions: (version.publishingProfile?.targetRegions ?? []).map((region, index) =>
          index === 0 ? { ...region, excludeFromLatest: false } : region,
        ),
      },
    };
    assert.equal(toImageVersion(flagged, ref).regionalExclusion, true);
  });

  void it('listed versions: replication from the regional summary, source from storageProfile.source', async () => {
    const ref = {
      subscriptionId: SUBSCRIPTION,
      resourceGroup: 'rg-images',
      galleryName: 'gal_nodes',
      imageName: 'vmss-pool-a',
    };
    const { client } = clientServing(readFixture('gallery-image-versions-list.json'));
    const versions: ImageVersion[] = [];
    for await (const version of client.galleryImageVersions.listByGalleryImage(
      'rg-images',
      'gal_nodes',
      'vmss-pool-a',
    )) {
      versions.push(toImageVersion(version, { ...ref, versionName: version.name ?? '' }));
    }

    assert.deepEqual(
      versions.map((version) => [
        version.ref.versionName,
        version.provisioningState,
        version.excludeFromLatest,
        version.storageAccountType,
        version.replicationState,
        version.sourceId?.split('/').pop(),
      ]),
      [
        ['20261101.905.1', 'Succeeded', false, 'Standard_LRS', 'Unknown', 'snap-vmss-pool-a-1-20261101t0905'],
        ['20261115.1200.1', 'Failed', true, undefined, 'Failed', 'standalone-vm'],
      ],
    );
  });

  void it('extensions: the extension type, not the ARM resource type', async () => {
    const { client } = clientServing(readFixture('vmss-extensions-list.json'));
    const extensions = [];
    for await (const extension of client.virtualMachineScaleSetExtensions.list(RG, 'vmss-pool-a')) {
      extensions.push(toExtension(extension));
    }

    assert.deepEqual(extensions, [
      {
        name: 'vmss-cse',
        publisher: 'Microsoft.Azure.Extensions',
        type: 'CustomScript',
        provisioningState: 'Succeeded',
      },
      { name: 'AKSLinuxBilling', publisher: 'Microsoft.AKS', type: 'Compute.AKS.Linux.Billing' },
    ]);
  });
});

void describe('architectureFromVmSize', () => {
  const cases = [
    { size: 'Standard_D4ps_v5', expected: 'Arm64' },
    { size: 'Standard_E8pds_v6', expected: 'Arm64' },
    { size: 'Standard_D2pls_v5', expected: 'Arm64' },
    { size: 'Standard_D4s_v5', expected: 'x64' },
    { size: 'Standard_D16ads_v5', expected: 'x64' },
    { size: 'Standard_DS2_v2', expected: 'x64' },
    { size: 'Standard_B2ms', expected: undefined },
    { size: undefined, expected: undefined },
  ] as const;
  for (const testCase of cases) {
    void it(`${testCase.size ?? 'no size'} → ${testCase.expected ?? 'unknown'}`, () => {
      assert.equal(architectureFromVmSize(testCase.size), testCase.expected);
    });
  }
});
