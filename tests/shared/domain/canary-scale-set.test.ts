// The temporary canary scale set (issue #48): its name, prefix and model as publication will leave the
// pool's, and when a pool needs one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseCanaryRecord } from '../../../shared/domain/canary-record.js';
import {
  CANARY_SCALE_SET_NAME_MAX,
  canaryComputerNamePrefixOf,
  type CanaryScaleSetInput,
  canaryScaleSetNameOf,
  canaryScaleSetPlan,
  copiedPoolTags,
  isCanaryScaleSetOf,
  LINUX_COMPUTER_NAME_PREFIX_MAX,
  needsCanaryScaleSet,
  NO_OP_CLOUD_CONFIG_BASE64,
  type ScaleSetModelDocument,
} from '../../../shared/domain/canary-scale-set.js';
import { NO_OP_CLOUD_CONFIG, type ScaleSetExtension } from '../../../shared/domain/compute.js';

const DEFINITION = '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/pool-a';
const VERSION = `${DEFINITION}/versions/2026.1203.0800`;
const IDENTITY =
  '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet';
const SUBNET =
  '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/nodes';
const BACKEND =
  '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be';
const NAT_POOL =
  '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/inboundNatPools/ssh';

const MODEL: ScaleSetModelDocument = {
  id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/k8s-pool-a-vmss',
  name: 'k8s-pool-a-vmss',
  type: 'Microsoft.Compute/virtualMachineScaleSets',
  etag: '"7"',
  location: 'westeurope',
  zones: ['1', '2'],
  sku: { name: 'Standard_D4s_v5', tier: 'Standard', capacity: 12 },
  identity: {
    type: 'UserAssigned',
    principalId: 'p',
    userAssignedIdentities: { [IDENTITY]: { principalId: 'p1', clientId: 'c1' } },
  },
  tags: { poolName: 'pool-a', 'vmss-prototype.canary-run': 'old' },
  provisioningState: 'Succeeded',
  uniqueId: 'u',
  timeCreated: '2026-01-01T00:00:00Z',
  upgradePolicy: { mode: 'Manual' },
  virtualMachineProfile: {
    osProfile: {
      computerNamePrefix: 'k8s-pool-a-',
      adminUsername: 'azureuser',
      secrets: [{ sourceVault: { id: 'kv' } }],
      linuxConfiguration: { disablePasswordAuthentication: true },
    },
    storageProfile: {
      imageReference: { publisher: 'Canonical', offer: 'ubuntu', sku: '22_04-lts', version: 'latest' },
      osDisk: { createOption: 'FromImage', managedDisk: { storageAccountType: 'Premium_LRS' } },
    },
    networkProfile: {
      networkInterfaceConfigurations: [
        {
          name: 'nic',
          primary: true,
          ipConfigurations: [
            {
              name: 'ipconfig',
              subnet: { id: SUBNET },
              loadBalancerBackendAddressPools: [{ id: BACKEND }],
              loadBalancerInboundNatPools: [{ id: NAT_POOL }],
            },
          ],
        },
      ],
    },
    extensionProfile: {
      extensions: [
        {
          name: 'vmssCSE',
          publisher: 'Microsoft.Azure.Extensions',
          type: 'Microsoft.Compute/virtualMachineScaleSets/extensions',
          typePropertiesType: 'CustomScript',
          provisioningState: 'Succeeded',
        },
        {
          name: 'health',
          publisher: 'Microsoft.ManagedServices',
          type: 'Microsoft.Compute/virtualMachineScaleSets/extensions',
          typePropertiesType: 'ApplicationHealthLinux',
          settings: { port: 10256 },
          provisioningState: 'Succeeded',
        },
      ],
    },
  },
};

const INPUT: CanaryScaleSetInput = {
  source: { name: 'k8s-pool-a-vmss' },
  model: MODEL,
  imageVersionId: VERSION,
  newNodes: 'boot-from-image',
  keepExtensionTypes: ['ApplicationHealthLinux'],
  runId: 'run-20261203-0800-abc',
  canaries: 2,
};

void describe('canaryScaleSetPlan', () => {
  const plan = canaryScaleSetPlan(INPUT);
  const profile = plan.model.virtualMachineProfile ?? {};

  void it('is named after the pool and the run, the same on every call', () => {
    assert.equal(plan.name, canaryScaleSetNameOf('k8s-pool-a-vmss', INPUT.runId));
    assert.match(plan.name, /^k8s-pool-a-vmss-cnry-[0-9a-f]{8}$/);
    assert.deepEqual(canaryScaleSetPlan(INPUT), plan);
    assert.notEqual(canaryScaleSetPlan({ ...INPUT, runId: 'run-2' }).name, plan.name);
  });

  void it('has the canary count as capacity and the version as image', () => {
    assert.deepEqual(plan.model.sku, { name: 'Standard_D4s_v5', tier: 'Standard', capacity: 2 });
    assert.deepEqual(profile.storageProfile?.['imageReference'], { id: VERSION });
    assert.deepEqual(
      profile.storageProfile?.['osDisk'],
      MODEL.virtualMachineProfile?.storageProfile?.['osDisk'],
    );
  });

  void it('boots the no-op customData publication puts', () => {
    assert.equal(profile.osProfile?.['customData'], NO_OP_CLOUD_CONFIG_BASE64);
    assert.equal(Buffer.from(NO_OP_CLOUD_CONFIG_BASE64, 'base64').toString('utf8'), NO_OP_CLOUD_CONFIG);
  });

  void it('drops the bootstrap extensions as publication does and keeps the others, without read-only fields', () => {
    assert.deepEqual(plan.droppedExtensions, ['vmssCSE']);
    assert.deepEqual(profile.extensionProfile?.extensions, [
      {
        name: 'health',
        publisher: 'Microsoft.ManagedServices',
        typePropertiesType: 'ApplicationHealthLinux',
        settings: { port: 10256 },
      },
    ]);
  });

  void it('keeps every extension publication keeps', () => {
    const all = canaryScaleSetPlan({
      ...INPUT,
      keepExtensionTypes: ['CustomScript', 'ApplicationHealthLinux'],
    });
    assert.deepEqual(all.droppedExtensions, []);
    assert.equal(all.model.virtualMachineProfile?.extensionProfile?.extensions?.length, 2);
  });

  void it('copies the network (subnet, backend pool) without the NAT pools another scale set owns', () => {
    assert.deepEqual(profile.networkProfile, {
      networkInterfaceConfigurations: [
        {
          name: 'nic',
          primary: true,
          ipConfigurations: [
            { name: 'ipconfig', subnet: { id: SUBNET }, loadBalancerBackendAddressPools: [{ id: BACKEND }] },
          ],
        },
      ],
    });
  });

  void it('copies the identity as a PUT takes it', () => {
    assert.deepEqual(plan.model.identity, {
      type: 'UserAssigned',
      userAssignedIdentities: { [IDENTITY]: {} },
    });
  });

  void it('copies the OS profile without secrets, with its own prefix', () => {
    assert.deepEqual(profile.osProfile, {
      computerNamePrefix: plan.computerNamePrefix,
      adminUsername: 'azureuser',
      linuxConfiguration: { disablePasswordAuthentication: true },
      customData: NO_OP_CLOUD_CONFIG_BASE64,
    });
    assert.match(plan.computerNamePrefix, /^k8s-pool-a-c[0-9a-f]{8}-$/);
  });

  void it('sends none of the fields ARM computes', () => {
    for (const field of ['id', 'name', 'type', 'etag', 'provisioningState', 'uniqueId', 'timeCreated']) {
      assert.equal(field in plan.model, false, field);
    }
    assert.deepEqual(plan.model['upgradePolicy'], { mode: 'Manual' });
    assert.deepEqual(plan.model.zones, ['1', '2']);
    assert.equal(plan.model.location, 'westeurope');
  });

  void it('is tagged with its purpose, the run and the pool, over the pool tags', () => {
    assert.deepEqual(plan.model.tags, {
      poolName: 'pool-a',
      'vmss-prototype.purpose': 'canary-scale-set',
      'vmss-prototype.run-id': INPUT.runId,
      'vmss-prototype.source-scale-set': 'k8s-pool-a-vmss',
    });
    assert.equal(isCanaryScaleSetOf(plan.model.tags ?? {}, INPUT.runId), true);
    assert.equal(isCanaryScaleSetOf(plan.model.tags ?? {}, 'another-run'), false);
    assert.equal(isCanaryScaleSetOf(MODEL.tags ?? {}), false);
    // Its tags are no canary record (`vmss-prototype.canary-*`): nothing reads it as a pinned pool.
    assert.equal(parseCanaryRecord(plan.model.tags ?? {}).kind, 'none');
  });

  void it("leaves out the pool's own records and cluster-autoscaler's tags", () => {
    assert.deepEqual(
      copiedPoolTags({
        costCenter: '42',
        poolName: 'pool-a',
        'vmss-prototype.canary-run': 'old',
        'vmss-prototype.stopped.3': 'run-1',
        'cluster-autoscaler-enabled': 'true',
        'cluster-autoscaler-name': 'prod',
        'k8s.io/cluster-autoscaler/node-template/label/pool': 'a',
        // Azure tag names take no '/': the Azure provider reads its node templates with '_'.
        'k8s.io_cluster-autoscaler_node-template_label_pool': 'a',
        'k8s.io_cluster-autoscaler_node-template_autoscaling-options_scaledownunneededtime': '1m',
        min: '1',
        MAX: '10',
      }),
      { costCenter: '42', poolName: 'pool-a' },
    );
  });

  void it('leaves the pool model it was given untouched', () => {
    assert.equal(MODEL.sku?.capacity, 12);
    assert.equal(MODEL.virtualMachineProfile?.extensionProfile?.extensions?.length, 2);
  });

  const refused: { name: string; input: CanaryScaleSetInput }[] = [
    { name: 'no canary', input: { ...INPUT, canaries: 0 } },
    { name: 'a fraction of a canary', input: { ...INPUT, canaries: 1.5 } },
    { name: 'a pool whose new nodes run its bootstrap', input: { ...INPUT, newNodes: 'run-pool-bootstrap' } },
  ];
  for (const row of refused) {
    void it(`refuses ${row.name}`, () => {
      assert.throws(() => canaryScaleSetPlan(row.input), RangeError);
    });
  }

  void it('without a prefix in the model, starts from the scale set name', () => {
    const bare = canaryScaleSetPlan({
      ...INPUT,
      model: { location: 'westeurope', virtualMachineProfile: {} },
    });
    assert.match(bare.computerNamePrefix, /^k8s-pool-a-vmss-c[0-9a-f]{8}-$/);
    assert.deepEqual(bare.model.virtualMachineProfile?.extensionProfile, { extensions: [] });
    assert.deepEqual(bare.model.sku, { capacity: 2 });
  });
});

void describe('canary names within Azure limits', () => {
  const long = 'a'.repeat(80);
  const cases: { name: string; source: string; max: number; of: (text: string) => string }[] = [
    {
      name: 'scale set name, long pool',
      source: long,
      max: CANARY_SCALE_SET_NAME_MAX,
      of: (s) => canaryScaleSetNameOf(s, 'r'),
    },
    {
      name: 'scale set name, separator at the cut',
      source: `${'a'.repeat(40)}---${'b'.repeat(20)}`,
      max: CANARY_SCALE_SET_NAME_MAX,
      of: (s) => canaryScaleSetNameOf(s, 'r'),
    },
    {
      name: 'prefix, long',
      source: long,
      max: LINUX_COMPUTER_NAME_PREFIX_MAX,
      of: (s) => canaryComputerNamePrefixOf(s, 'r'),
    },
    {
      name: 'prefix, odd characters',
      source: 'Pool_A!',
      max: LINUX_COMPUTER_NAME_PREFIX_MAX,
      of: (s) => canaryComputerNamePrefixOf(s, 'r'),
    },
  ];
  for (const row of cases) {
    void it(row.name, () => {
      const value = row.of(row.source);
      assert.ok(value.length <= row.max, `${value} (${value.length})`);
      assert.match(value, /^[a-z0-9][a-z0-9.-]*[a-z0-9-]$/);
      assert.doesNotMatch(value, /[-.]{2}[0-9a-f]/);
    });
  }

  void it('the prefix is never the pool prefix, so node names cannot collide', () => {
    for (const prefix of ['k8s-pool-a-', 'k8s-pool-a-cdeadbeef-', '', 'x']) {
      assert.notEqual(canaryComputerNamePrefixOf(prefix, 'r'), prefix.toLowerCase());
    }
  });
});

void describe('needsCanaryScaleSet', () => {
  const CSE: ScaleSetExtension = {
    name: 'vmssCSE',
    publisher: 'Microsoft.Azure.Extensions',
    type: 'CustomScript',
  };
  const HEALTH: ScaleSetExtension = {
    name: 'health',
    publisher: 'Microsoft.ManagedServices',
    type: 'ApplicationHealthLinux',
  };
  const base = {
    newNodes: 'boot-from-image' as const,
    extensions: [HEALTH],
    keepExtensionTypes: ['ApplicationHealthLinux'],
    modelImageId: VERSION as string | undefined,
    imageDefinitionId: DEFINITION,
  };
  const cases: { name: string; need: Parameters<typeof needsCanaryScaleSet>[0]; expected: boolean }[] = [
    { name: 'published model (our version, no bootstrap extension)', need: base, expected: false },
    {
      name: 'published model on the definition (latest)',
      need: { ...base, modelImageId: DEFINITION },
      expected: false,
    },
    {
      name: 'ids compared case-insensitively',
      need: { ...base, modelImageId: VERSION.toUpperCase() },
      expected: false,
    },
    { name: 'bootstrap extension still there', need: { ...base, extensions: [CSE, HEALTH] }, expected: true },
    {
      name: 'bootstrap extension being deleted',
      need: { ...base, extensions: [{ ...CSE, provisioningState: 'Deleting' }] },
      expected: true,
    },
    { name: 'marketplace image (first refresh)', need: { ...base, modelImageId: undefined }, expected: true },
    {
      name: 'another gallery image',
      need: {
        ...base,
        modelImageId:
          '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/other/images/x/versions/1.0.0',
      },
      expected: true,
    },
    {
      name: 'kubeadm pool keeps its bootstrap',
      need: { ...base, newNodes: 'run-pool-bootstrap', extensions: [CSE], modelImageId: undefined },
      expected: false,
    },
  ];
  for (const row of cases) {
    void it(row.name, () => {
      assert.equal(needsCanaryScaleSet(row.need), row.expected);
    });
  }
});
