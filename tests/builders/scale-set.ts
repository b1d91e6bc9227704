/** Builder for the domain ScaleSet: an eligible Uniform Linux scale set with managed OS disks. */

import { scaleSetResourceId } from '../../shared/domain/resource-id.js';
import type { ScaleSet } from '../../shared/domain/scale-set.js';
import { DEFAULT_POOL } from './node.js';

export function aScaleSet(overrides: Partial<ScaleSet> = {}): ScaleSet {
  const ref = {
    subscriptionId: overrides.subscriptionId ?? DEFAULT_POOL.subscriptionId,
    resourceGroup: overrides.resourceGroup ?? DEFAULT_POOL.resourceGroup,
    name: overrides.name ?? DEFAULT_POOL.name,
  };
  return {
    ...ref,
    id: scaleSetResourceId(ref),
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
    tags: { cluster: 'prod-weu', poolName: 'pool-a' },
    hyperVGeneration: 'V2',
    securityType: 'TrustedLaunch',
    architecture: 'x64',
    zones: ['1', '2', '3'],
    ...overrides,
  };
}
