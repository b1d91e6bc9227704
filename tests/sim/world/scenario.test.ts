/** Tests for the scenario format: the sample parses, malformed scenarios are refused naming the path. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { KUBEADM_SCENARIO, SAMPLE_SCENARIO } from '../../../sim/index.js';
import {
  latencyOf,
  loadScenarioFile,
  parseDurationMs,
  parseScenario,
  parseScenarioYaml,
  resolveTime,
  ScenarioError,
} from '../../../sim/world/scenario.js';

function minimal(): Record<string, unknown> {
  return {
    subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
    location: 'westeurope',
    clusters: [
      { name: 'prod', resourceGroup: 'rg-prod', scaleSets: [{ name: 'k8s-pool1-1-vmss', capacity: 2 }] },
    ],
  };
}

function variant(change: (scenario: Record<string, unknown>) => void): Record<string, unknown> {
  const scenario = structuredClone(minimal());
  change(scenario);
  return scenario;
}

function firstScaleSet(scenario: Record<string, unknown>): Record<string, unknown> {
  const clusters = scenario.clusters as { scaleSets: Record<string, unknown>[] }[];
  const scaleSet = clusters[0]?.scaleSets[0];
  assert.ok(scaleSet);
  return scaleSet;
}

function firstCluster(scenario: Record<string, unknown>): Record<string, unknown> {
  const cluster = (scenario.clusters as Record<string, unknown>[])[0];
  assert.ok(cluster);
  return cluster;
}

void describe('sample scenario', () => {
  void it('parses with the pools the demo needs', async () => {
    const scenario = await loadScenarioFile(SAMPLE_SCENARIO);
    const cluster = scenario.clusters[0];
    assert.ok(cluster);
    const names = cluster.scaleSets.map((scaleSet) => scaleSet.name);
    assert.ok(names.includes('k8s-pool1-12345678-vmss'));
    assert.ok(cluster.scaleSets.some((scaleSet) => scaleSet.role === 'control-plane'));
    assert.ok(cluster.scaleSets.some((scaleSet) => scaleSet.ephemeralOsDisk));
    assert.ok(cluster.scaleSets.some((scaleSet) => scaleSet.upgradePolicy === 'Automatic'));
    assert.ok(cluster.scaleSets.some((scaleSet) => 'aks-managed-poolName' in scaleSet.tags));
    assert.ok(cluster.workloads.some((workload) => workload.kind === 'Deployment' && workload.pdb));
    assert.ok(cluster.workloads.some((workload) => workload.kind === 'DaemonSet'));
    assert.equal(latencyOf(scenario).name, 'kamino-observed');
  });

  void it('the kubeadm scenario parses: a self-assembled cluster whose worker pool joins with a long-lived token', async () => {
    const scenario = await loadScenarioFile(KUBEADM_SCENARIO);
    const cluster = scenario.clusters[0];
    assert.ok(cluster);
    assert.deepEqual(cluster.kubeadm?.tokens, [{ token: '7f3k9q.m2x8c4v6b1n5z0ad', ttl: '720h' }]);
    const workers = cluster.scaleSets.find((scaleSet) => scaleSet.role === 'agent');
    assert.equal(workers?.bootstrapFlavour, 'kubeadm');
    assert.match(workers?.customData ?? '', /kubeadm join 10\.0\.0\.4:6443 --token 7f3k9q\.m2x8c4v6b1n5z0ad/);
    assert.ok(workers?.extensions.some((extension) => extension.type === 'CustomScript'));
    assert.ok(workers?.kured);
    assert.ok(cluster.scaleSets.some((scaleSet) => scaleSet.role === 'control-plane'));
    assert.ok(
      cluster.scaleSets.every((scaleSet) => !JSON.stringify(scaleSet).includes('cluster.x-k8s.io')),
      'not Cluster API',
    );
    assert.equal(latencyOf(scenario).name, 'kamino-observed');
  });

  void it('fills defaults for a minimal scenario', () => {
    const scenario = parseScenario(minimal());
    const scaleSet = scenario.clusters[0]?.scaleSets[0];
    assert.equal(scaleSet?.orchestrationMode, 'Uniform');
    assert.equal(scaleSet?.upgradePolicy, 'Manual');
    assert.equal(scenario.region.zoneRedundantStorage, true);
    assert.equal(scenario.clusters[0]?.serviceAccount.name, 'vmss-prototype');
  });
});

void describe('relative times', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  const cases: { ref: string; expected: string }[] = [
    { ref: '-3h', expected: '2026-11-22T09:00:00.000Z' },
    { ref: '+10m', expected: '2026-11-22T12:10:00.000Z' },
    { ref: '2d', expected: '2026-11-24T12:00:00.000Z' },
    { ref: '-1.5h', expected: '2026-11-22T10:30:00.000Z' },
    { ref: '2026-11-20T08:00:00Z', expected: '2026-11-20T08:00:00.000Z' },
    { ref: '2026-11-20T08:00:00+01:00', expected: '2026-11-20T07:00:00.000Z' },
  ];
  for (const { ref, expected } of cases) {
    void it(`${ref} → ${expected}`, () => {
      assert.equal(new Date(resolveTime(ref, now)).toISOString(), expected);
    });
  }
  void it('refuses a duration without a unit', () => {
    assert.throws(() => parseDurationMs('3'), /expected a number and a unit/);
  });
});

void describe('malformed scenarios', () => {
  const cases: { name: string; scenario: unknown; path: string; message: RegExp }[] = [
    {
      name: 'missing subscription',
      scenario: variant((s) => delete s.subscriptionId),
      path: 'subscriptionId',
      message: /expected/,
    },
    {
      name: 'subscription is not a GUID',
      scenario: variant((s) => (s.subscriptionId = 'my-sub')),
      path: 'subscriptionId',
      message: /GUID/,
    },
    {
      name: 'no clusters',
      scenario: variant((s) => (s.clusters = [])),
      path: 'clusters',
      message: /at least one cluster/,
    },
    {
      name: 'negative capacity',
      scenario: variant((s) => (firstScaleSet(s).capacity = -1)),
      path: 'clusters[0].scaleSets[0].capacity',
      message: />=0|too small|expected/i,
    },
    {
      name: 'unknown upgrade policy',
      scenario: variant((s) => (firstScaleSet(s).upgradePolicy = 'Sometimes')),
      path: 'clusters[0].scaleSets[0].upgradePolicy',
      message: /Manual|Automatic|Rolling/,
    },
    {
      name: 'misspelled field',
      scenario: variant((s) => (firstScaleSet(s).capacityy = 3)),
      path: 'clusters[0].scaleSets[0]',
      message: /capacityy/,
    },
    {
      name: 'node index beyond capacity',
      scenario: variant((s) => (firstScaleSet(s).nodes = [{ index: 5, cordoned: true }])),
      path: 'clusters[0].scaleSets[0].nodes[0].index',
      message: /outside the scale set/,
    },
    {
      name: 'kured time that is neither RFC3339 nor relative',
      scenario: variant((s) => (firstScaleSet(s).kured = { mostRecentRebootNeeded: 'yesterday' })),
      path: 'clusters[0].scaleSets[0].kured.mostRecentRebootNeeded',
      message: /RFC3339/,
    },
    {
      name: 'PDB with both bounds',
      scenario: variant(
        (s) =>
          (firstCluster(s).workloads = [
            { kind: 'Deployment', name: 'web', replicas: 2, pdb: { minAvailable: 1, maxUnavailable: 1 } },
          ]),
      ),
      path: 'clusters[0].workloads[0].pdb',
      message: /exactly one/,
    },
    {
      name: 'unknown workload kind',
      scenario: variant((s) => (firstCluster(s).workloads = [{ kind: 'CronJob', name: 'x' }])),
      path: 'clusters[0].workloads[0].kind',
      message: /Deployment|expected/i,
    },
    {
      name: 'duplicate scale set',
      scenario: variant((s) => {
        const cluster = firstCluster(s);
        cluster.scaleSets = [...(cluster.scaleSets as unknown[]), { name: 'K8S-POOL1-1-VMSS', capacity: 1 }];
      }),
      path: 'clusters[0].scaleSets[1].name',
      message: /duplicate scale set/,
    },
    {
      name: 'preset missing its duration',
      scenario: variant((s) => (s.faults = [{ preset: 'arm-429-storm' }])),
      path: 'faults[0].for',
      message: /needs for/,
    },
    {
      name: 'fault rule with a success status',
      scenario: variant(
        (s) => (s.faults = [{ api: 'arm', operation: '*', status: 200, code: 'x', message: 'y' }]),
      ),
      path: 'faults[0].status',
      message: />=400/,
    },
    {
      name: 'unknown latency profile',
      scenario: variant((s) => (s.latency = { profile: 'slowest' })),
      path: 'latency.profile',
      message: /unknown latency profile/,
    },
    {
      name: 'zone the region does not offer',
      scenario: variant((s) => {
        s.region = { zones: ['1'] };
        firstScaleSet(s).zones = ['1', '2'];
      }),
      path: 'clusters[0].scaleSets[0].zones',
      message: /zone 2/,
    },
    {
      name: 'short token',
      scenario: variant((s) => (firstCluster(s).tokens = { admin: 'short' })),
      path: 'clusters[0].tokens.admin',
      message: /16 characters/,
    },
    {
      name: 'malformed kubeadm bootstrap token',
      scenario: variant(
        (s) => (firstCluster(s).kubeadm = { tokens: [{ token: 'ABCDEF.0123456789abcdef' }] }),
      ),
      path: 'clusters[0].kubeadm.tokens[0].token',
      message: /bootstrap token/,
    },
    {
      name: 'scrub-leaves without a path',
      scenario: variant((s) => (s.faults = [{ preset: 'scrub-leaves' }])),
      path: 'faults[0].path',
      message: /needs path/,
    },
  ];
  for (const { name, scenario, path, message } of cases) {
    void it(`refuses ${name}, naming ${path}`, () => {
      assert.throws(
        () => parseScenario(scenario, 'test.yaml'),
        (error: unknown) => {
          assert.ok(error instanceof ScenarioError);
          const problem = error.problems.find((line) => line.startsWith(`${path}: `));
          assert.ok(problem, `expected a problem at ${path}, got:\n${error.problems.join('\n')}`);
          assert.match(problem, message);
          assert.match(error.message, /^reading scenario test\.yaml: /);
          return true;
        },
      );
    });
  }

  void it('reports YAML syntax errors with their line', () => {
    assert.throws(
      () => parseScenarioYaml('subscriptionId: x\nclusters: [\n', 'broken.yaml'),
      /reading scenario broken\.yaml: line \d+/,
    );
  });

  void it('reports a missing file by name', async () => {
    await assert.rejects(
      loadScenarioFile('/nonexistent/scenario.yaml'),
      /reading scenario \/nonexistent\/scenario\.yaml: cannot read/,
    );
  });
});
