import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  formatProviderId,
  galleryDefinitionIdOf,
  galleryImageResourceId,
  isScaleSetInstanceId,
  parseComputeResourceId,
  parseGalleryImageId,
  parseProviderId,
  parseScaleSetResourceId,
  type ProviderIdFailureReason,
  type ProviderIdParseResult,
  resourceGroupOfId,
  sameResourceId,
  sameScaleSet,
  scaleSetInstanceResourceId,
  scaleSetKey,
  scaleSetResourceId,
  virtualMachineResourceId,
} from '../../../shared/domain/resource-id.js';

const SUB = '6b1f9c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
const VMSS_PREFIX = `azure:///subscriptions/${SUB}/resourceGroups/rg-cluster/providers/Microsoft.Compute`;

void describe('parseProviderId: accepted ids', () => {
  const cases: { name: string; raw: string; expected: ProviderIdParseResult }[] = [
    {
      name: 'Uniform instance as cloud-provider-azure writes it',
      raw: `${VMSS_PREFIX}/virtualMachineScaleSets/k8s-pool-a/virtualMachines/12`,
      expected: {
        ok: true,
        providerId: {
          kind: 'scale-set-instance',
          scaleSet: { subscriptionId: SUB, resourceGroup: 'rg-cluster', name: 'k8s-pool-a' },
          instanceId: '12',
        },
      },
    },
    {
      name: 'segment keywords in any casing, names keep theirs',
      raw: `AZURE:///SUBSCRIPTIONS/${SUB}/resourcegroups/RG-Cluster/PROVIDERS/microsoft.compute/VIRTUALMACHINESCALESETS/Pool-A/VirtualMachines/0`,
      expected: {
        ok: true,
        providerId: {
          kind: 'scale-set-instance',
          scaleSet: { subscriptionId: SUB, resourceGroup: 'RG-Cluster', name: 'Pool-A' },
          instanceId: '0',
        },
      },
    },
    {
      name: 'AKS-style MC_ resource group, lowercased',
      raw: `azure:///subscriptions/${SUB}/resourceGroups/mc_rg_aks1_westeurope/providers/Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1-12345678-vmss/virtualMachines/3`,
      expected: {
        ok: true,
        providerId: {
          kind: 'scale-set-instance',
          scaleSet: {
            subscriptionId: SUB,
            resourceGroup: 'mc_rg_aks1_westeurope',
            name: 'aks-nodepool1-12345678-vmss',
          },
          instanceId: '3',
        },
      },
    },
    {
      name: 'Flexible member (indistinguishable from a standalone VM)',
      raw: `${VMSS_PREFIX}/virtualMachines/flexprofile-mp-0_df53ee36`,
      expected: {
        ok: true,
        providerId: {
          kind: 'virtual-machine',
          virtualMachine: {
            subscriptionId: SUB,
            resourceGroup: 'rg-cluster',
            name: 'flexprofile-mp-0_df53ee36',
          },
        },
      },
    },
    {
      name: 'surrounding whitespace is ignored',
      raw: `  ${VMSS_PREFIX}/virtualMachines/vm-1\n`,
      expected: {
        ok: true,
        providerId: {
          kind: 'virtual-machine',
          virtualMachine: { subscriptionId: SUB, resourceGroup: 'rg-cluster', name: 'vm-1' },
        },
      },
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.deepEqual(parseProviderId(c.raw), c.expected);
    });
  }
});

void describe('parseProviderId: rejected ids', () => {
  const cases: { name: string; raw: string | undefined; reason: ProviderIdFailureReason }[] = [
    { name: 'undefined', raw: undefined, reason: 'missing' },
    { name: 'empty', raw: '', reason: 'missing' },
    { name: 'blank', raw: '   ', reason: 'missing' },
    { name: 'AWS', raw: 'aws:///eu-west-1a/i-0123456789abcdef0', reason: 'not-azure' },
    { name: 'kind', raw: 'kind://docker/kind/kind-worker', reason: 'not-azure' },
    { name: 'k3s', raw: 'k3s://node-1', reason: 'not-azure' },
    { name: 'GCE', raw: 'gce://project/zone/instance', reason: 'not-azure' },
    {
      name: 'no scheme',
      raw: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/x`,
      reason: 'malformed',
    },
    {
      name: 'host not empty',
      raw: `azure://subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/x`,
      reason: 'malformed',
    },
    {
      name: 'scale set without instance',
      raw: `${VMSS_PREFIX}/virtualMachineScaleSets/pool-a`,
      reason: 'malformed',
    },
    {
      name: 'non-decimal instance id',
      raw: `${VMSS_PREFIX}/virtualMachineScaleSets/pool-a/virtualMachines/00000a`.replace('00000a', 'abc'),
      reason: 'malformed',
    },
    {
      name: 'negative instance id',
      raw: `${VMSS_PREFIX}/virtualMachineScaleSets/pool-a/virtualMachines/-1`,
      reason: 'malformed',
    },
    {
      name: 'trailing slash',
      raw: `${VMSS_PREFIX}/virtualMachineScaleSets/pool-a/virtualMachines/1/`,
      reason: 'malformed',
    },
    {
      name: 'double slash inside',
      raw: `${VMSS_PREFIX}//virtualMachineScaleSets/pool-a/virtualMachines/1`,
      reason: 'malformed',
    },
    {
      name: 'extra trailing segments',
      raw: `${VMSS_PREFIX}/virtualMachineScaleSets/pool-a/virtualMachines/1/networkInterfaces/nic`,
      reason: 'malformed',
    },
    {
      name: 'missing resourceGroups keyword',
      raw: `azure:///subscriptions/${SUB}/groups/rg/providers/Microsoft.Compute/virtualMachines/x`,
      reason: 'malformed',
    },
    { name: 'subscription only', raw: `azure:///subscriptions/${SUB}`, reason: 'malformed' },
    {
      name: 'other resource provider (Arc/HCI)',
      raw: `azure:///subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.AzureStackHCI/virtualMachineInstances/x`,
      reason: 'not-a-scale-set',
    },
    { name: 'other compute type', raw: `${VMSS_PREFIX}/availabilitySets/as-1`, reason: 'not-a-scale-set' },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const result = parseProviderId(c.raw);
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.equal(result.reason, c.reason);
        assert.ok(result.message.length > 0);
      }
    });
  }
});

void describe('scale set identity', () => {
  const a = { subscriptionId: SUB.toUpperCase(), resourceGroup: 'RG-Cluster', name: 'Pool-A' };
  const cases: { name: string; b: typeof a; same: boolean }[] = [
    {
      name: 'resource group lowercased by cloud-provider',
      b: { ...a, resourceGroup: 'rg-cluster' },
      same: true,
    },
    {
      name: 'everything in other casing',
      b: { subscriptionId: SUB, resourceGroup: 'rg-CLUSTER', name: 'pool-a' },
      same: true,
    },
    { name: 'other name', b: { ...a, name: 'Pool-B' }, same: false },
    { name: 'other resource group', b: { ...a, resourceGroup: 'RG-Other' }, same: false },
    {
      name: 'other subscription',
      b: { ...a, subscriptionId: '00000000-0000-0000-0000-000000000000' },
      same: false,
    },
    {
      name: 'name and group swapped boundary',
      b: { ...a, resourceGroup: 'RG-Cluster/Pool', name: 'A' },
      same: false,
    },
  ];
  for (const c of cases) {
    void it(`sameScaleSet: ${c.name}`, () => {
      assert.equal(sameScaleSet(a, c.b), c.same);
      assert.equal(scaleSetKey(a) === scaleSetKey(c.b), c.same);
    });
  }
});

void describe('ARM resource ids', () => {
  const ref = { subscriptionId: SUB, resourceGroup: 'RG-Cluster', name: 'pool-a' };
  void it('builds a scale set id and parses it back', () => {
    const id = scaleSetResourceId(ref);
    assert.equal(
      id,
      `/subscriptions/${SUB}/resourceGroups/RG-Cluster/providers/Microsoft.Compute/virtualMachineScaleSets/pool-a`,
    );
    assert.deepEqual(parseScaleSetResourceId(id), ref);
  });
  void it('rejects non-scale-set ids', () => {
    assert.equal(parseScaleSetResourceId(virtualMachineResourceId(ref)), undefined);
    assert.equal(parseScaleSetResourceId(`${scaleSetResourceId(ref)}/virtualMachines/1`), undefined);
    assert.equal(parseScaleSetResourceId('not an id'), undefined);
  });
  void it('builds instance and VM ids that parse as compute resource ids', () => {
    assert.deepEqual(parseComputeResourceId(scaleSetInstanceResourceId(ref, '7')), {
      ok: true,
      providerId: { kind: 'scale-set-instance', scaleSet: ref, instanceId: '7' },
    });
    assert.deepEqual(parseComputeResourceId(virtualMachineResourceId(ref)), {
      ok: true,
      providerId: { kind: 'virtual-machine', virtualMachine: ref },
    });
  });
  void it('formats providerIDs like cloud-provider-azure (lowercased resource group) and round-trips', () => {
    const raw = formatProviderId({ kind: 'scale-set-instance', scaleSet: ref, instanceId: '4' });
    assert.equal(
      raw,
      `azure:///subscriptions/${SUB}/resourceGroups/rg-cluster/providers/Microsoft.Compute/virtualMachineScaleSets/pool-a/virtualMachines/4`,
    );
    const parsed = parseProviderId(raw);
    assert.ok(
      parsed.ok &&
        parsed.providerId.kind === 'scale-set-instance' &&
        sameScaleSet(parsed.providerId.scaleSet, ref),
    );
  });
});

void describe('gallery image ids', () => {
  const definition =
    '/subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/galleries/g_1/images/prod-pool1';
  const cases: { id: string; want: ReturnType<typeof parseGalleryImageId> }[] = [
    {
      id: definition,
      want: { subscriptionId: 's', resourceGroup: 'RG', galleryName: 'g_1', imageName: 'prod-pool1' },
    },
    {
      id: `${definition}/versions/2026.1122.120000`,
      want: {
        subscriptionId: 's',
        resourceGroup: 'RG',
        galleryName: 'g_1',
        imageName: 'prod-pool1',
        versionName: '2026.1122.120000',
      },
    },
    {
      id: definition.toLowerCase().replace('/images/', '/IMAGES/'),
      want: { subscriptionId: 's', resourceGroup: 'rg', galleryName: 'g_1', imageName: 'prod-pool1' },
    },
    {
      id: `${definition}/`,
      want: { subscriptionId: 's', resourceGroup: 'RG', galleryName: 'g_1', imageName: 'prod-pool1' },
    },
    { id: '/subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/images/legacy', want: undefined },
    { id: `${definition}/versions`, want: undefined },
    { id: `${definition}/replicas/1`, want: undefined },
    { id: 'not an id', want: undefined },
  ];
  for (const c of cases) {
    void it(`parses ${c.id}`, () => assert.deepEqual(parseGalleryImageId(c.id), c.want));
  }

  void it('builds a definition id and finds it from a version id', () => {
    const ref = { subscriptionId: 's', resourceGroup: 'RG', galleryName: 'g_1', imageName: 'prod-pool1' };
    assert.equal(galleryImageResourceId(ref), definition);
    assert.equal(galleryDefinitionIdOf(`${definition}/versions/1.2.3`), definition);
    assert.equal(galleryDefinitionIdOf('marketplace'), 'marketplace');
  });

  void it('resource groups, scale set instance ids and case-insensitive comparison', () => {
    assert.equal(
      resourceGroupOfId(
        '/subscriptions/s/resourceGroups/Flex-RG/providers/Microsoft.Compute/virtualMachines/vm1',
      ),
      'Flex-RG',
    );
    assert.equal(
      isScaleSetInstanceId(
        '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/p/virtualMachines/3',
      ),
      true,
    );
    assert.equal(
      isScaleSetInstanceId(
        '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1',
      ),
      false,
    );
    assert.equal(sameResourceId('/A/b', '/a/B'), true);
    assert.equal(sameResourceId(undefined, '/a'), false);
  });
});
