// The nodes an outside scale-out built from a canary's version while the model was pinned: found from ARM
// alone (the version as image, neither a canary nor in the baseline), named by their node (their computer
// name until they joined), and told with one Warning Event per joined node and version, however often asked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  BUILT_FROM_REJECTED_REASON,
  findOthersFromVersion,
  hasJoinedAs,
  tellOthersFromVersion,
} from '../../../shared/application/canary-others.js';
import type { ScaleSetRef } from '../../../shared/domain/resource-id.js';
import { FakeCompute } from '../../../shared/ports/fake/compute/index.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';
import { aNode, DEFAULT_POOL, NOW } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

const SCALE_SET: ScaleSetRef = {
  subscriptionId: DEFAULT_POOL.subscriptionId,
  resourceGroup: DEFAULT_POOL.resourceGroup,
  name: DEFAULT_POOL.name,
};
const GALLERY =
  '/subscriptions/s/resourceGroups/rg-images/providers/Microsoft.Compute/galleries/g/images/pool-a/versions';
const VERSION_ID = `${GALLERY}/2026.1122.1`;
const OLDER_ID = `${GALLERY}/2026.1101.1`;

function world() {
  const kube = new FakeKubernetes({ now: () => NOW.getTime() });
  const compute = new FakeCompute({ now: () => NOW.getTime() });
  compute.addScaleSet(aScaleSet());
  const add = (id: number, imageId: string | undefined, joined: boolean) => {
    const name = `${DEFAULT_POOL.name}-vmss${id.toString(36).padStart(6, '0')}`;
    compute.addInstance(SCALE_SET, String(id), {
      computerName: name.toUpperCase(),
      ...(imageId === undefined ? {} : { imageId }),
    });
    if (joined) kube.nodes.add(aNode({ instanceId: id, name }));
    return name;
  };
  const nodes = {
    before: add(0, OLDER_ID, true),
    canary: add(1, VERSION_ID, true),
    outside: add(2, VERSION_ID, true),
    booting: add(3, VERSION_ID, false),
    marketplace: add(4, undefined, true),
  };
  return { kube, compute, nodes, handle: { kube, compute } };
}

void describe('findOthersFromVersion', () => {
  void it('names the instances built from the version that are neither canaries nor in the baseline', async () => {
    const { handle, nodes } = world();
    const others = await findOthersFromVersion(handle, SCALE_SET, {
      versionId: VERSION_ID.toUpperCase(),
      canaries: ['1'],
      baseline: ['0'],
    });
    assert.deepEqual(others, [
      { instanceId: '2', node: nodes.outside, joined: true },
      { instanceId: '3', node: nodes.booting, joined: false },
    ]);
  });

  void it('leaves out one ARM is deleting: it is going already, not to be replaced', async () => {
    const { handle, compute, nodes } = world();
    compute.addInstance(SCALE_SET, '2', {
      computerName: nodes.outside.toUpperCase(),
      imageId: VERSION_ID,
      provisioningState: 'Deleting',
    });
    const others = await findOthersFromVersion(handle, SCALE_SET, {
      versionId: VERSION_ID,
      canaries: ['1'],
      baseline: ['0'],
    });
    assert.deepEqual(
      others.map((other) => other.instanceId),
      ['3'],
    );
  });

  void it('finds none when no instance was built from the version', async () => {
    const { handle } = world();
    const others = await findOthersFromVersion(handle, SCALE_SET, {
      versionId: `${GALLERY}/2026.1123.1`,
      canaries: [],
      baseline: [],
    });
    assert.deepEqual(others, []);
  });
});

void describe('hasJoinedAs', () => {
  void it('says whether a node of that name registered for the instance', async () => {
    const { handle, nodes } = world();
    assert.equal(await hasJoinedAs(handle, SCALE_SET, '2', nodes.outside), true);
    assert.equal(await hasJoinedAs(handle, SCALE_SET, '3', nodes.booting), false);
    // A node of that name for another instance is not its node; a gone instance has none.
    assert.equal(await hasJoinedAs(handle, SCALE_SET, '3', nodes.outside), false);
    assert.equal(await hasJoinedAs(handle, SCALE_SET, '9', nodes.outside), false);
  });
});

void describe('tellOthersFromVersion', () => {
  void it('records one Warning Event per joined node and version, once however often asked', async () => {
    const { handle, kube, nodes } = world();
    const others = await findOthersFromVersion(handle, SCALE_SET, {
      versionId: VERSION_ID,
      canaries: ['1'],
      baseline: ['0'],
    });
    const input = {
      others,
      version: '2026.1122.1',
      verdict: 'rejected',
      then: 'it is being replaced now',
      at: NOW.toISOString(),
    };
    await tellOthersFromVersion(kube, input);
    await tellOthersFromVersion(kube, input);
    const events = kube.nodes.events();
    assert.deepEqual(
      events.map((event) => [event.node, event.type, event.reason]),
      [[nodes.outside, 'Warning', BUILT_FROM_REJECTED_REASON]],
    );
    assert.match(
      events[0]?.message ?? '',
      /image version 2026\.1122\.1 .*rejected; it is being replaced now/,
    );
  });
});
