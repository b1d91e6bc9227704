import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  checkScaleSetEligibility,
  type IneligibilityCode,
  type ScaleSet,
} from '../../../shared/domain/scale-set.js';
import { aScaleSet } from '../../builders/scale-set.js';

void describe('checkScaleSetEligibility', () => {
  const cases: { name: string; scaleSet: ScaleSet; codes: IneligibilityCode[]; reason?: RegExp }[] = [
    { name: 'self-managed Uniform Linux pool with managed disks', scaleSet: aScaleSet(), codes: [] },
    {
      name: 'aks-engine pool (poolName/creationSource aksengine tags are not AKS)',
      scaleSet: aScaleSet({
        tags: {
          poolName: 'agentpool1',
          creationSource: 'aksengine-k8s-agentpool1-12345678-vmss',
          orchestrator: 'Kubernetes:1.24.9',
        },
      }),
      codes: [],
    },
    {
      name: 'Flexible orchestration',
      scaleSet: aScaleSet({ orchestrationMode: 'Flexible', upgradePolicyMode: undefined }),
      codes: [],
    },
    {
      name: 'gallery image already',
      scaleSet: aScaleSet({
        imageReference: {
          kind: 'gallery',
          id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/pool-a',
        },
      }),
      codes: [],
    },
    {
      name: 'ephemeral OS disk',
      scaleSet: aScaleSet({ ephemeralOsDisk: true, ephemeralOsDiskPlacement: 'ResourceDisk' }),
      codes: ['ephemeral-os-disk'],
      reason: /ephemeral OS disk on ResourceDisk/,
    },
    {
      name: 'upgrade policy Automatic',
      scaleSet: aScaleSet({ upgradePolicyMode: 'Automatic' }),
      codes: ['upgrade-policy-not-manual'],
      reason: /all instances at once/,
    },
    {
      name: 'upgrade policy Rolling',
      scaleSet: aScaleSet({ upgradePolicyMode: 'Rolling' }),
      codes: ['upgrade-policy-not-manual'],
      reason: /roll/,
    },
    {
      name: 'automatic OS upgrade with Manual mode',
      scaleSet: aScaleSet({ automaticOsUpgrade: true }),
      codes: ['automatic-os-upgrade'],
    },
    { name: 'Windows', scaleSet: aScaleSet({ osType: 'Windows' }), codes: ['windows'] },
    {
      name: "a run's temporary canary scale set",
      scaleSet: aScaleSet({
        tags: {
          poolName: 'agentpool1',
          'vmss-prototype.purpose': 'canary-scale-set',
          'vmss-prototype.run-id': 'run-7',
          'vmss-prototype.source-scale-set': 'k8s-agentpool1-12345678-vmss',
        },
      }),
      codes: ['canary-scale-set'],
      reason: /canary scale set of run run-7 for pool k8s-agentpool1-12345678-vmss/,
    },
    {
      name: 'AKS by aks-managed-* tags',
      scaleSet: aScaleSet({
        resourceGroup: 'rg-nodes-custom',
        tags: {
          'aks-managed-poolName': 'nodepool1',
          'aks-managed-createOperationID': '6df685b8-5985-4a36-8a00-7233bda89377',
        },
      }),
      codes: ['aks-managed'],
      reason: /tag aks-managed-poolName/,
    },
    {
      name: 'AKS by legacy creationSource tag',
      scaleSet: aScaleSet({
        resourceGroup: 'nodes',
        tags: { poolName: 'agentpool', creationSource: 'vmssclient-aks-agentpool-16282925-vmss' },
      }),
      codes: ['aks-managed'],
      reason: /creationSource/,
    },
    {
      name: 'AKS by MC_ node resource group (lowercased, no tags)',
      scaleSet: aScaleSet({ resourceGroup: 'mc_rg-prod_aks-prod_westeurope', tags: {} }),
      codes: ['aks-managed'],
      reason: /MC_/,
    },
    {
      name: 'a resource group merely starting with mc',
      scaleSet: aScaleSet({ resourceGroup: 'mcafee-cluster' }),
      codes: [],
    },
    {
      name: 'CAPZ-owned',
      scaleSet: aScaleSet({
        tags: {
          'sigs.k8s.io_cluster-api-provider-azure_cluster_prod-weu': 'owned',
          'sigs.k8s.io_cluster-api-provider-azure_role': 'node',
        },
      }),
      codes: ['capz-managed'],
      reason: /cluster prod-weu/,
    },
    {
      name: 'a typical AKS pool fails on every count, management first',
      scaleSet: aScaleSet({
        resourceGroup: 'MC_rg_aks_westeurope',
        tags: { 'aks-managed-orchestrator': 'Kubernetes:1.30.7' },
        ephemeralOsDisk: true,
        upgradePolicyMode: 'Rolling',
        automaticOsUpgrade: true,
        osType: 'Windows',
      }),
      codes: [
        'aks-managed',
        'windows',
        'ephemeral-os-disk',
        'automatic-os-upgrade',
        'upgrade-policy-not-manual',
      ],
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const result = checkScaleSetEligibility(c.scaleSet);
      if (c.codes.length === 0) {
        assert.deepEqual(result, { eligible: true });
        return;
      }
      assert.equal(result.eligible, false);
      if (!result.eligible) {
        assert.deepEqual(
          result.reasons.map((reason) => reason.code),
          c.codes,
        );
        for (const reason of result.reasons) {
          assert.ok(reason.reason.includes(c.scaleSet.name), 'the reason names the scale set');
          assert.ok(reason.remedy.length > 0, 'every refusal says what to do');
        }
        if (c.reason !== undefined) {
          assert.match(result.reasons[0].reason, c.reason);
        }
      }
    });
  }
});
