import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { weighCapzOwnership } from '../../../shared/application/capz-pool.js';
import type { ClusterHandle, PoolConfiguration } from '../../../shared/application/refresh-dependencies.js';
import type { MachinePoolView } from '../../../shared/domain/cluster-api.js';
import { NotFoundError } from '../../../shared/domain/errors.js';
import { checkScaleSetEligibility } from '../../../shared/domain/scale-set.js';
import type { MachinePoolsPort } from '../../../shared/ports/cluster-api/machine-pools.js';
import { aScaleSet } from '../../builders/scale-set.js';

const CAPZ_TAGS = { 'sigs.k8s.io_cluster-api-provider-azure_cluster_capz-lab': 'owned' };

const POOL: MachinePoolView = {
  namespace: 'fleet',
  name: 'capz-lab-mp-0',
  azureMachinePool: 'capz-lab-mp-0',
  clusterName: 'capz-lab',
  replicas: 3,
  autoscaled: false,
  image: { kind: 'id', id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/images/base' },
  imageFields: { id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/images/base' },
  strategy: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' },
  resourceVersion: '4',
};

function handleWith(pools: Partial<MachinePoolsPort> | undefined): ClusterHandle {
  return {
    ...(pools === undefined ? {} : { clusterApi: { machinePools: pools as MachinePoolsPort } }),
  } as unknown as ClusterHandle;
}

function configuration(capz?: PoolConfiguration['capz']): PoolConfiguration {
  return { ...(capz === undefined ? {} : { capz }) } as unknown as PoolConfiguration;
}

void describe('weighCapzOwnership', () => {
  const scaleSet = aScaleSet({ name: 'capz-lab-mp-0', tags: CAPZ_TAGS });
  const eligibility = checkScaleSetEligibility(scaleSet);
  const found: Partial<MachinePoolsPort> = {
    findByScaleSet: (namespace, name) => {
      assert.equal(namespace, 'fleet');
      assert.equal(name, 'capz-lab-mp-0');
      return Promise.resolve(POOL);
    },
  };

  void it('keeps the refusal, pointing at the capz settings, when no management cluster is named', async () => {
    const weighed = await weighCapzOwnership(handleWith(undefined), configuration(), scaleSet, eligibility);
    assert.equal(weighed.eligibility.eligible, false);
    const [reason] = weighed.eligibility.eligible ? [] : weighed.eligibility.reasons;
    assert.equal(reason?.code, 'capz-managed');
    assert.match(reason?.remedy ?? '', /`capz` settings \(docs\/capz\.md\)/);
    assert.equal(weighed.capz, undefined);
  });

  void it('refuses with what CAPZ will do when the rollout is not accepted', async () => {
    const weighed = await weighCapzOwnership(
      handleWith(found),
      configuration({ namespace: 'fleet', rollout: 'refuse' }),
      scaleSet,
      eligibility,
    );
    const [reason] = weighed.eligibility.eligible ? [] : weighed.eligibility.reasons;
    assert.equal(reason?.code, 'capz-rollout-not-allowed');
    assert.match(
      reason?.reason ?? '',
      /CAPZ will replace 3 machines of MachinePool fleet\/capz-lab-mp-0, none unavailable .*, surge 1 machine, oldest first; to accept that/,
    );
    assert.match(reason?.remedy ?? '', /capz\.rollout to "allow"/);
    assert.equal(weighed.capz?.description.startsWith('CAPZ will replace 3 machines'), true);
  });

  void it('makes the pool eligible, carrying its MachinePool and prior image, when the rollout is accepted', async () => {
    const weighed = await weighCapzOwnership(
      handleWith(found),
      configuration({ namespace: 'fleet', rollout: 'allow' }),
      scaleSet,
      eligibility,
    );
    assert.deepEqual(weighed.eligibility, { eligible: true });
    assert.deepEqual(weighed.capz?.priorImage, POOL.imageFields);
    assert.equal(weighed.capz?.azureMachinePool, 'capz-lab-mp-0');
  });

  void it('keeps other refusals of the scale set when the rollout is accepted', async () => {
    const windows = aScaleSet({ name: 'capz-lab-mp-0', tags: CAPZ_TAGS, osType: 'Windows' });
    const weighed = await weighCapzOwnership(
      handleWith(found),
      configuration({ namespace: 'fleet', rollout: 'allow' }),
      windows,
      checkScaleSetEligibility(windows),
    );
    const codes = weighed.eligibility.eligible ? [] : weighed.eligibility.reasons.map((r) => r.code);
    assert.deepEqual(codes, ['windows']);
  });

  void it('refuses a pool a ClusterClass topology manages, whatever the rollout setting', async () => {
    const topology: Partial<MachinePoolsPort> = {
      findByScaleSet: () => Promise.resolve({ ...POOL, topologyOwned: true }),
    };
    const weighed = await weighCapzOwnership(
      handleWith(topology),
      configuration({ namespace: 'fleet', rollout: 'allow' }),
      scaleSet,
      eligibility,
    );
    const [reason] = weighed.eligibility.eligible ? [] : weighed.eligibility.reasons;
    assert.equal(reason?.code, 'capz-managed');
    assert.match(reason?.reason ?? '', /ClusterClass topology manages/);
    assert.equal(weighed.capz, undefined);
  });

  void it('names the namespace when the management cluster has no such AzureMachinePool', async () => {
    const missing: Partial<MachinePoolsPort> = {
      findByScaleSet: () => Promise.reject(new NotFoundError('NotFound', 'no such AzureMachinePool')),
    };
    const weighed = await weighCapzOwnership(
      handleWith(missing),
      configuration({ namespace: 'fleet', rollout: 'allow' }),
      scaleSet,
      eligibility,
    );
    const [reason] = weighed.eligibility.eligible ? [] : weighed.eligibility.reasons;
    assert.equal(reason?.code, 'capz-managed');
    assert.match(reason?.reason ?? '', /no AzureMachinePool named capz-lab-mp-0 in namespace fleet/);
  });

  void it('names the MachinePool, not the AzureMachinePool, when the owner is the one missing', async () => {
    const missing: Partial<MachinePoolsPort> = {
      findByScaleSet: () =>
        Promise.reject(
          new NotFoundError('MachinePoolNotFound', 'reading MachinePool fleet/capz-lab-mp-0: not found'),
        ),
    };
    const weighed = await weighCapzOwnership(
      handleWith(missing),
      configuration({ namespace: 'fleet', rollout: 'allow' }),
      scaleSet,
      eligibility,
    );
    const [reason] = weighed.eligibility.eligible ? [] : weighed.eligibility.reasons;
    assert.equal(reason?.code, 'capz-managed');
    assert.match(reason?.reason ?? '', /reading MachinePool fleet\/capz-lab-mp-0: not found/);
    assert.doesNotMatch(reason?.reason ?? '', /no AzureMachinePool/);
    assert.match(reason?.remedy ?? '', /kubectl get machinepools -n fleet/);
  });
});
