// Reading only the nodes a step needs, page by page: shared/application/node-scan.ts, and the steps of a
// refresh that use it (planning, holdings, generations) never list the whole cluster at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { keptNodes } from '../../../shared/application/node-scan.js';
import type { PoolRefreshResult } from '../../../shared/application/refresh-contracts.js';
import type { ClusterNode } from '../../../shared/domain/cluster-node.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';
import { aNode } from '../../builders/node.js';
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
