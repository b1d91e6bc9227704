/**
 * The Cluster API scenario fields (sim/world/capz/scenario.ts): what parses, the errors that name the
 * path, and the strategy arithmetic CAPZ's rolling update uses (sim/world/capz/strategy.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CAPZ_SCENARIO } from '../../../../sim/index.js';
import {
  type MachineView,
  scaledValue,
  selectMachinesToDelete,
} from '../../../../sim/world/capz/strategy.js';
import { loadScenarioFile, parseScenario, ScenarioError } from '../../../../sim/world/scenario.js';

const SUBSCRIPTION = '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f';
const OWNER = 'sigs.k8s.io_cluster-api-provider-azure_cluster_lab';

function scenario(clusters: unknown[]): unknown {
  return { subscriptionId: SUBSCRIPTION, location: 'westeurope', clusters };
}

function problems(data: unknown): string[] {
  try {
    parseScenario(data, 'test');
  } catch (error) {
    if (error instanceof ScenarioError) return [...error.problems];
    throw error;
  }
  return [];
}

void describe('Cluster API scenario fields', () => {
  void it('parses the shipped capz scenario: a management cluster without scale sets', async () => {
    const parsed = await loadScenarioFile(CAPZ_SCENARIO);
    const mgmt = parsed.clusters.find((cluster) => cluster.name === 'mgmt');
    const lab = parsed.clusters.find((cluster) => cluster.name === 'capz-lab');
    assert.deepEqual(mgmt?.clusterApi, {
      namespace: 'default',
      syncPeriod: '10m',
      tokenTTL: '15m',
      servedVersions: ['v1beta1', 'v1beta2'],
    });
    assert.equal(mgmt?.scaleSets.length, 0);
    assert.deepEqual(lab?.managedBy, { managementCluster: 'mgmt' });
    const pool = lab?.scaleSets.find((scaleSet) => scaleSet.name === 'capz-lab-mp-0');
    assert.deepEqual(pool?.machinePool?.strategy, { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' });
  });

  void it('takes the Cluster API versions served: one or both, never none', () => {
    const mgmt = (servedVersions: unknown): unknown =>
      scenario([{ name: 'mgmt', resourceGroup: 'rg', scaleSets: [], clusterApi: { servedVersions } }]);
    assert.deepEqual(
      parseScenario(mgmt(['v1beta2', 'v1beta1', 'v1beta2']), 'test').clusters[0]?.clusterApi?.servedVersions,
      ['v1beta1', 'v1beta2'],
    );
    assert.equal(problems(mgmt(['v1beta1'])).length, 0);
    assert.equal(problems(mgmt([])).length, 1);
    assert.match(problems(mgmt(['v1alpha4']))[0] ?? '', /^clusters\[0\]\.clusterApi\.servedVersions\[0\]/);
  });

  void it('names the path of each mistake', () => {
    const pool = { name: 'mp-0', capacity: 1, tags: { [OWNER]: 'owned' }, machinePool: {} };
    assert.deepEqual(problems(scenario([{ name: 'lab', resourceGroup: 'rg', scaleSets: [] }])), [
      'clusters[0].scaleSets: a cluster needs at least one scale set (only a Cluster API management cluster, clusterApi, may have none)',
    ]);
    assert.deepEqual(
      problems(
        scenario([
          { name: 'lab', resourceGroup: 'rg', managedBy: { managementCluster: 'nope' }, scaleSets: [pool] },
        ]),
      ),
      ['clusters[0].managedBy.managementCluster: unknown management cluster nope; known: none'],
    );
    assert.deepEqual(
      problems(
        scenario([
          { name: 'lab', resourceGroup: 'rg', managedBy: { managementCluster: 'other' }, scaleSets: [pool] },
          { name: 'other', resourceGroup: 'rg2', scaleSets: [{ name: 'x', capacity: 1 }] },
        ]),
      ),
      [
        'clusters[0].managedBy.managementCluster: cluster other is not a Cluster API management cluster (it has no clusterApi)',
      ],
    );
    assert.deepEqual(
      problems(
        scenario([
          {
            name: 'lab',
            resourceGroup: 'rg',
            managedBy: { managementCluster: 'mgmt' },
            scaleSets: [{ ...pool, tags: {}, machinePool: { autoscaler: { min: 3, max: 1 } } }],
          },
          { name: 'mgmt', resourceGroup: 'rg2', clusterApi: {} },
        ]),
      ),
      [
        `clusters[0].scaleSets[0].machinePool: machinePool needs the CAPZ owner tag ${OWNER}: owned`,
        'clusters[0].scaleSets[0].machinePool.autoscaler: min 3 is above max 1',
      ],
    );
    assert.deepEqual(
      problems(
        scenario([
          {
            name: 'lab',
            resourceGroup: 'rg',
            scaleSets: [{ ...pool, machinePool: { strategy: { maxSurge: 'x' } } }],
          },
        ]),
      ).map((problem) => problem.split(':')[0]),
      ['clusters[0].scaleSets[0].machinePool.strategy.maxSurge', 'clusters[0].scaleSets[0].machinePool'],
    );
  });
});

void describe('CAPZ rolling-update strategy', () => {
  const machine = (name: string, ready: boolean, latest: boolean, createdMs: number): MachineView => ({
    name,
    ready,
    latestModelApplied: latest,
    provisioningState: 'Succeeded',
    deleting: false,
    createdMs,
    randomRank: name,
  });

  void it('resolves percentages as intstr does: maxSurge up, maxUnavailable down', () => {
    assert.equal(scaledValue('25%', 3, true), 1);
    assert.equal(scaledValue('25%', 3, false), 0);
    assert.equal(scaledValue(2, 3, false), 2);
  });

  void it('protects an unready replacement, then deletes the oldest old machine once it is ready', () => {
    const old = [machine('a', true, false, 1), machine('b', true, false, 2), machine('c', true, false, 3)];
    assert.deepEqual(
      selectMachinesToDelete([...old, machine('d', false, true, 4)], 3, 0, 'Oldest', true),
      [],
    );
    assert.deepEqual(
      selectMachinesToDelete([...old, machine('d', true, true, 4)], 3, 0, 'Oldest', true).map((m) => m.name),
      ['a'],
    );
    assert.deepEqual(
      selectMachinesToDelete([...old, machine('d', true, true, 4)], 3, 0, 'Newest', true).map((m) => m.name),
      ['c'],
    );
  });

  void it('deletes old ready machines within maxUnavailable only', () => {
    const old = [machine('a', true, false, 1), machine('b', true, false, 2), machine('c', true, false, 3)];
    assert.deepEqual(selectMachinesToDelete(old, 3, 0, 'Oldest', true), []);
    assert.deepEqual(
      selectMachinesToDelete(old, 3, 1, 'Oldest', true).map((m) => m.name),
      ['a'],
    );
    assert.deepEqual(
      selectMachinesToDelete(old, 3, '50%', 'Oldest', true).map((m) => m.name),
      ['a'],
    );
  });
});
