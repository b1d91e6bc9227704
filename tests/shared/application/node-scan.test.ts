// Reading only the nodes a step needs, page by page: shared/application/node-scan.ts, and the steps of a
// refresh that use it (planning, holdings, generations) never list the whole cluster at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  keptNodes,
  MAX_NAME_LOOKUPS,
  poolMemberNodes,
  poolMembersAndKept,
  resourceIdOfNode,
  suggestedPoolLabel,
} from '../../../shared/application/node-scan.js';
import type { PoolRefreshResult } from '../../../shared/application/refresh-contracts.js';
import type { ClusterNode } from '../../../shared/domain/cluster-node.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';
import { aNode, DEFAULT_POOL } from '../../builders/node.js';
import { createFakeWorld, failureOf } from '../../functions/orchestrations/fake-world.js';

const nodes = Array.from({ length: 7 }, (_, index) => aNode({ name: `node-${index}` }));

void describe('keptNodes', () => {
  void it('keeps the nodes asked for, reading one page at a time', async () => {
    const kube = new FakeKubernetes({ nodePageSize: 3 });
    for (const node of nodes) kube.nodes.add(node);
    const kept = await keptNodes(kube, (node) => Number(node.name.slice(5)) % 2 === 0);
    assert.deepEqual(
      kept.map((node) => node.name),
      ['node-0', 'node-2', 'node-4', 'node-6'],
    );
    assert.equal(kube.callsTo('nodes.scan').length, 3, 'three pages of three');
    assert.equal(kube.callsTo('nodes.list').length, 0);
  });

  void it('a list that restarts from its first page keeps each node once', async () => {
    const restarting = {
      nodes: {
        async scan(visit: (page: readonly ClusterNode[]) => void | Promise<void>, restart: () => void) {
          await visit(nodes.slice(0, 3));
          restart(); // the continue token expired: the pages come again
          await visit(nodes.slice(0, 3));
          await visit(nodes.slice(3));
        },
      },
    };
    const kept = await keptNodes(restarting, () => true);
    assert.deepEqual(
      kept.map((node) => node.name),
      nodes.map((node) => node.name),
    );
  });
});

const OTHER_POOL = { ...DEFAULT_POOL, name: 'k8s-pool-b' };

/** `count` nodes of `pool`, each with the `agentpool` label unless `unlabelled` names it. */
function poolNodes(pool: typeof DEFAULT_POOL, label: string, count: number, unlabelled: number[] = []) {
  return Array.from({ length: count }, (_, instanceId) => {
    const node = aNode({ pool, instanceId });
    return unlabelled.includes(instanceId) ? node : { ...node, labels: { ...node.labels, agentpool: label } };
  });
}

function instancesOf(members: readonly ClusterNode[]) {
  return members.map((node) => ({ resourceId: resourceIdOfNode(node) ?? '', computerName: node.name }));
}

function kubeWith(...groups: ClusterNode[][]): FakeKubernetes {
  const kube = new FakeKubernetes({ nodePageSize: 2 });
  for (const node of groups.flat()) kube.nodes.add(node);
  return kube;
}

/** The `nodes.scan` pages read without a label selector: pages of the whole cluster's list. */
function fullPages(kube: FakeKubernetes): number {
  return kube.callsTo('nodes.scan').filter((call) => call.args.length === 1).length;
}

void describe('poolMemberNodes', () => {
  void it('lists only the pool by the label its nodes carry, read off one member', async () => {
    const a = poolNodes(DEFAULT_POOL, 'a', 6);
    const kube = kubeWith(a, poolNodes(OTHER_POOL, 'b', 20));
    const members = await poolMemberNodes(kube, instancesOf(a));
    assert.deepEqual(members.map((node) => node.name).sort(), a.map((node) => node.name).sort());
    assert.equal(fullPages(kube), 0, 'no page of the whole list');
    assert.equal(kube.callsTo('nodes.scan').length, 3, "the pool's 6 nodes, 2 a page");
    assert.deepEqual(kube.callsTo('nodes.scan')[0]?.args, [0, { agentpool: 'a' }]);
    assert.equal(kube.callsTo('nodes.get').length, 1, 'one member read for its label');
  });

  void it('finds a member without the label by its name, and returns only those wanted', async () => {
    const a = poolNodes(DEFAULT_POOL, 'a', 6, [4]);
    const kube = kubeWith(a, poolNodes(OTHER_POOL, 'b', 20));
    const all = await poolMemberNodes(kube, instancesOf(a));
    assert.equal(all.length, 6, 'the unlabelled member too');
    assert.equal(fullPages(kube), 0);
    const wanted = await poolMemberNodes(kube, instancesOf(a), instancesOf(a.slice(4, 5)));
    assert.deepEqual(
      wanted.map((node) => node.name),
      [a[4]?.name],
    );
  });

  void it('scans the whole cluster when the members carry no pool label', async () => {
    const a = poolNodes(DEFAULT_POOL, 'a', 4, [0, 1, 2, 3]);
    const kube = kubeWith(a, poolNodes(OTHER_POOL, 'b', 4));
    const members = await poolMemberNodes(kube, instancesOf(a));
    assert.equal(members.length, 4);
    assert.equal(fullPages(kube), 4, 'every page of the 8 nodes');
  });

  void it('scans the whole cluster when too many members are missing from the selected list', async () => {
    const count = MAX_NAME_LOOKUPS + 3;
    const unlabelled = Array.from({ length: MAX_NAME_LOOKUPS + 1 }, (_, index) => index + 1);
    const a = poolNodes(DEFAULT_POOL, 'a', count, unlabelled);
    const kube = kubeWith(a);
    const members = await poolMemberNodes(kube, instancesOf(a));
    assert.equal(members.length, count);
    assert.ok(fullPages(kube) > 0, 'the fallback listed every node');
  });

  void it('reads nothing for a pool without instances', async () => {
    const kube = kubeWith(poolNodes(OTHER_POOL, 'b', 4));
    assert.deepEqual(await poolMemberNodes(kube, []), []);
    assert.equal(kube.calls.length, 0);
  });
});

void describe('poolMembersAndKept', () => {
  const marked = (node: ClusterNode): boolean => node.annotations['held'] === 'yes';
  const mark = (node: ClusterNode): ClusterNode => ({
    ...node,
    annotations: { ...node.annotations, held: 'yes' },
  });

  void it("reads the pool's pages once for its members and the other nodes asked for", async () => {
    const a = poolNodes(DEFAULT_POOL, 'a', 6).map((node, index) => (index === 2 ? mark(node) : node));
    const b = poolNodes(OTHER_POOL, 'b', 6).map((node, index) => (index === 0 ? mark(node) : node));
    const kube = kubeWith(a, b);
    const listed = await poolMembersAndKept(kube, instancesOf(a), { agentpool: 'a' }, marked);
    assert.deepEqual(listed.members.map((node) => node.name).sort(), a.map((node) => node.name).sort());
    assert.deepEqual(
      listed.kept.map((node) => node.name),
      [a[2]?.name],
      "the marked node under the pool's label (the other pool's is not listed)",
    );
    assert.equal(kube.callsTo('nodes.scan').length, 3, "one listing: the pool's 6 nodes, 2 a page");
    assert.equal(fullPages(kube), 0);
  });

  void it('looks for both in the whole cluster when no label selects the pool', async () => {
    const a = poolNodes(DEFAULT_POOL, 'a', 3, [0, 1, 2]);
    const b = poolNodes(OTHER_POOL, 'b', 3).map((node, index) => (index === 1 ? mark(node) : node));
    const kube = kubeWith(a, b);
    const listed = await poolMembersAndKept(kube, instancesOf(a), undefined, marked);
    assert.equal(listed.members.length, 3);
    assert.deepEqual(
      listed.kept.map((node) => node.name),
      [b[1]?.name],
    );
    assert.equal(fullPages(kube), 3, 'one listing of the 6 nodes');
  });

  void it('tells members by their resource id as a parse of the providerID would, whatever its spelling', async () => {
    const id = (instance: number, group = 'rg-k8s') =>
      `/subscriptions/sub-1/resourceGroups/${group}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a/virtualMachines/${instance}`;
    const wanted = [
      ...[0, 1, 2, 3, 4, 5, 6, 7, 8].map((instance) => ({
        resourceId: id(instance),
        computerName: `m${instance}`,
      })),
      // Ids that do not parse are nobody's: a node whose providerID spells one the same way is no member.
      { resourceId: `${id(9)}/`, computerName: 'm9' },
      { resourceId: id(10).replace('/virtualMachines/10', '/virtualMachines/x'), computerName: 'm10' },
    ];
    const spellings: readonly (readonly [providerId: string | undefined, member: boolean])[] = [
      [`azure://${id(0)}`, true],
      [`AZURE://${id(1)}`, true],
      [`  azure://${id(2).toUpperCase()}\n`, true],
      [
        `azure://${id(3).replace('resourceGroups', 'resourcegroups').replace('Microsoft.Compute', 'microsoft.compute')}`,
        true,
      ],
      [`azure://${id(4, 'RG-K8S')}`, true],
      [`azure://${id(5)}/`, false],
      [`azure://${id(6).replace('/virtualMachines/', '//virtualMachines/')}`, false],
      [`aws://${id(7)}`, false],
      [`azure:/${id(8)}`, false],
      [`azure://${id(9)}/`, false],
      [`azure://${id(10).replace('/virtualMachines/10', '/virtualMachines/x')}`, false],
      [`azure://${id(11)}`, false],
      [undefined, false],
      ['', false],
    ];
    const cluster: ClusterNode[] = spellings.map(([providerId], index) => {
      const node = aNode({ name: `n${index}` });
      const { providerId: _, ...rest } = node;
      return providerId === undefined ? rest : { ...rest, providerId };
    });
    const listed = await poolMembersAndKept(kubeWith(cluster), wanted, undefined, () => false);
    assert.deepEqual(
      listed.members.map((node) => node.name),
      spellings.flatMap(([, member], index) => (member ? [`n${index}`] : [])),
    );
    // The same answer as comparing the ids resourceIdOfNode builds, case-insensitively.
    const ids = new Set(wanted.map((instance) => instance.resourceId.toLowerCase()));
    assert.deepEqual(
      listed.members.map((node) => node.name),
      cluster.filter((node) => ids.has(resourceIdOfNode(node)?.toLowerCase() ?? '')).map((node) => node.name),
    );
  });

  void it('a pool without instances still finds the marked nodes under its label', async () => {
    const a = poolNodes(DEFAULT_POOL, 'a', 2).map(mark);
    const kube = kubeWith(a);
    const listed = await poolMembersAndKept(kube, [], { agentpool: 'a' }, marked);
    assert.deepEqual(listed.members, []);
    assert.equal(listed.kept.length, 2);
  });
});

void describe('a refresh on the port fakes', () => {
  void it('reads the nodes page by page, never as one whole list', async () => {
    const world = createFakeWorld();
    const status = await world.refreshPool('pool1');
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.equal((status.output as PoolRefreshResult).outcome, 'refreshed');
    assert.ok(world.kube.callsTo('nodes.scan').length > 0);
    assert.deepEqual(
      world.kube.callsTo('nodes.list').map((call) => call.method),
      [],
      'no step holds the whole node list',
    );
  });
});

void describe('suggestedPoolLabel', () => {
  const cases: readonly [string, Record<string, string>, Record<string, string> | undefined][] = [
    ['aks-engine', { poolName: 'pool1', orchestrator: 'Kubernetes:1.30' }, { agentpool: 'pool1' }],
    ['AKS', { 'aks-managed-poolName': 'nodepool1' }, { 'kubernetes.azure.com/agentpool': 'nodepool1' }],
    ['tag names are case-insensitive', { POOLNAME: 'p' }, { agentpool: 'p' }],
    ['an empty name', { poolName: '' }, undefined],
    ['no pool tag', { team: 'x' }, undefined],
  ];
  for (const [label, tags, expected] of cases) {
    void it(label, () => assert.deepEqual(suggestedPoolLabel(tags), expected));
  }
});

void describe("a refresh's holdings read", () => {
  /** Pages of the whole list one refresh of pool1 reads, its scale set tagged `tags`, among 10 other nodes. */
  async function wholeListPages(tags: Record<string, string>): Promise<number> {
    const world = createFakeWorld({
      nodeLabels: { agentpool: 'pool1' },
      scaleSets: { pool1: { tags } },
      cluster: { nodePageSize: 2 },
    });
    for (const node of poolNodes(OTHER_POOL, 'b', 10)) world.kube.nodes.add(node);
    const status = await world.refreshPool('pool1');
    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    return fullPages(world.kube);
  }

  void it("looks for marked nodes among the pool's nodes when the scale set's tags name the pool", async () => {
    const untagged = await wholeListPages({});
    const tagged = await wholeListPages({ poolName: 'pool1' });
    // 13 nodes, 2 a page: one listing of every node is 7 pages, the one the holdings read no longer makes.
    assert.equal(untagged - tagged, 7, `pages of the whole list: untagged ${untagged}, tagged ${tagged}`);
  });

  void it('scans every node when the suggested label selects no member of the pool', async () => {
    const untagged = await wholeListPages({});
    assert.equal(await wholeListPages({ poolName: 'not-the-label' }), untagged);
  });
});
