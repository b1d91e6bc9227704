// The canary phase's reads (shared/application/canary.ts): how a canary's node is found without listing
// the whole cluster, in the pool or in a canary scale set of its own whose members have no node yet;
// the canary instances' record written from what the pin left, without reading the model.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  observeCanaries,
  pinCanaryVersion,
  recordCanaryInstances,
  type WrittenTags,
} from '../../../shared/application/canary.js';
import { resourceIdOfNode } from '../../../shared/application/node-scan.js';
import { parseCanaryRecord } from '../../../shared/domain/canary-record.js';
import type { ClusterNode } from '../../../shared/domain/cluster-node.js';
import { FakeCompute } from '../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';
import { aNode, DEFAULT_POOL, NOW } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

/** The canary scale set of a run, beside the pool (its name and prefix as canary-scale-set.ts makes them). */
const CANARY_SET = { ...DEFAULT_POOL, name: 'k8s-pool-a-cnry-0a1b2c3d' };
const CANARY_NAME = 'k8s-pool-a-c0a1b2c3d-000000';

/** A pool of three labelled nodes (the donor first), 3 000 other nodes, and a canary scale set of one. */
function world(): { compute: FakeCompute; kube: FakeKubernetes; donor: ClusterNode } {
  const compute = new FakeCompute({ now: () => NOW.getTime() });
  const kube = new FakeKubernetes({ nodePageSize: 500 });
  const pool = Array.from({ length: 3 }, (_, instanceId) => {
    const node = aNode({ instanceId });
    return { ...node, labels: { ...node.labels, agentpool: 'pool-a' } };
  });
  for (const node of pool) kube.nodes.add(node);
  const elsewhere = { ...DEFAULT_POOL, name: 'k8s-other' };
  for (let instanceId = 0; instanceId < 3_000; instanceId++) {
    const node = aNode({ pool: elsewhere, instanceId });
    kube.nodes.add({ ...node, labels: { ...node.labels, agentpool: 'other' } });
  }
  compute.addScaleSet(aScaleSet({ name: CANARY_SET.name }));
  compute.addInstance(CANARY_SET, '0', { computerName: CANARY_NAME });
  return { compute, kube, donor: pool[0] as ClusterNode };
}

/** `nodes.scan` pages without a label selector (a listing of every node), and with one. */
function pages(kube: FakeKubernetes): { full: number; selected: number } {
  const scans = kube.callsTo('nodes.scan');
  const full = scans.filter((call) => call.args.length === 1).length;
  return { full, selected: scans.length - full };
}

const INPUT = { instanceIds: ['0'], namespace: 'vmss-prototype', checkPods: {} } as const;

void describe('observeCanaries', () => {
  void it("looks for a canary scale set's unregistered canary among the donor's pool, never every node", async () => {
    const { compute, kube, donor } = world();
    const [observation] = await observeCanaries({ compute, kube }, CANARY_SET, {
      ...INPUT,
      poolNode: donor.name,
    });
    assert.equal(observation?.node, undefined, 'not registered yet');
    assert.deepEqual(observation?.instance.poolLabels, { agentpool: 'pool-a' }, "the donor's label");
    assert.deepEqual(pages(kube), { full: 0, selected: 1 }, "one page of the pool's nodes");
  });

  void it('without a node of the pool, lists every node while the canary has none', async () => {
    const { compute, kube } = world();
    await observeCanaries({ compute, kube }, CANARY_SET, INPUT);
    assert.equal(pages(kube).full, 7, 'every node, 500 a page');
  });

  void it("finds a clone that took over the donor's node by its label", async () => {
    const { compute, kube, donor } = world();
    // The clone registers under the donor's name: the node now names the canary's machine.
    const resourceId = (await compute.instances.get(CANARY_SET, '0')).resourceId;
    const clone = { ...donor, providerId: `azure://${resourceId}` };
    kube.nodes.add(clone);
    assert.equal(resourceIdOfNode(clone)?.toLowerCase(), resourceId.toLowerCase());
    const [observation] = await observeCanaries({ compute, kube }, CANARY_SET, {
      ...INPUT,
      poolNode: donor.name,
    });
    assert.equal(observation?.node?.name, donor.name);
    assert.equal(observation?.node?.ownsName, false, 'registered under another name');
    assert.equal(pages(kube).full, 0);
  });
});

void describe('recording the canary instances after the pin', () => {
  const POOL = { ...DEFAULT_POOL, name: 'k8s-pool-a' };
  const VERSION_ID = `/subscriptions/${DEFAULT_POOL.subscriptionId}/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/pool-a/versions/2026.1203.0800`;
  const RECORD = {
    run: 'run-1',
    version: '2026.1203.0800',
    startedAt: NOW.toISOString(),
    priorImage: { id: 'prior' },
    priorCapacity: 1,
    count: 1,
  };

  async function pinned(): Promise<{ compute: FakeCompute; written: WrittenTags }> {
    const compute = new FakeCompute({ now: () => NOW.getTime() });
    compute.addScaleSet(aScaleSet({ name: POOL.name, tags: { owner: 'team' } }));
    compute.addInstance(POOL, '0');
    const baseline = await compute.scaleSets.get(POOL);
    const written = await pinCanaryVersion(compute, POOL, {
      versionId: VERSION_ID,
      record: RECORD,
      baseline: { tags: baseline.tags, ...(baseline.etag === undefined ? {} : { etag: baseline.etag }) },
    });
    compute.addInstance(POOL, '1', { imageId: VERSION_ID });
    return { compute, written };
  }

  void it('writes the record from what the pin left: the list and one conditional write, no model read', async () => {
    const { compute, written } = await pinned();
    assert.ok(written.etag !== undefined, 'the pin returns the etag of its write');
    const before = compute.calls.length;
    const result = await recordCanaryInstances(compute, POOL, {
      baseline: ['0'],
      versionId: VERSION_ID,
      count: 1,
      record: RECORD,
      pinned: written,
    });
    assert.deepEqual(result.instances, ['1']);
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['instances.list', 'scaleSets.requestChange'],
    );
    const record = parseCanaryRecord((await compute.scaleSets.get(POOL)).tags);
    assert.equal(record.kind, 'record');
    assert.deepEqual(record.kind === 'record' ? record.record.instances : undefined, ['1']);
    assert.equal((await compute.scaleSets.get(POOL)).tags['owner'], 'team');
  });

  void it('reads the model when the scale set was written since the pin (412)', async () => {
    const { compute, written } = await pinned();
    await compute.scaleSets.requestChange(POOL, { tags: { ...written.tags, added: 'since' } });
    const before = compute.calls.length;
    await recordCanaryInstances(compute, POOL, {
      baseline: ['0'],
      versionId: VERSION_ID,
      count: 1,
      record: RECORD,
      pinned: written,
    });
    assert.deepEqual(
      compute.calls.slice(before).map((call) => call.method),
      ['instances.list', 'scaleSets.requestChange', 'scaleSets.get', 'scaleSets.requestChange'],
    );
    assert.equal((await compute.scaleSets.get(POOL)).tags['added'], 'since');
  });
});
