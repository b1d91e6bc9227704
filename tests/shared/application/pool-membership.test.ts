/**
 * Which scale set a Flexible VM belongs to has one answer: what ARM records on the VM
 * (`virtualMachineScaleSet.id`), never its name. These members are named so that a guess from the name
 * would be wrong: one says nothing of its scale set, one is named after the other scale set.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  flexibleMemberIds,
  scaleSetOfVirtualMachine,
  scaleSetsOfVirtualMachines,
  scaleSetsWithNodes,
} from '../../../shared/application/pool-membership.js';
import {
  formatProviderId,
  scaleSetKey,
  type ScaleSetRef,
  virtualMachineResourceId,
} from '../../../shared/domain/resource-id.js';
import { FakeCompute } from '../../../shared/ports/fake/compute/index.js';
import { aNode, DEFAULT_POOL } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

const GROUP = { subscriptionId: DEFAULT_POOL.subscriptionId, resourceGroup: DEFAULT_POOL.resourceGroup };
const FLEX: ScaleSetRef = { ...GROUP, name: 'vmss-flex' };
const OTHER: ScaleSetRef = { ...GROUP, name: 'vmss-other' };

function world(): FakeCompute {
  const compute = new FakeCompute({ now: () => 0 });
  compute.addScaleSet(aScaleSet({ ...FLEX, orchestrationMode: 'Flexible' }));
  compute.addScaleSet(aScaleSet({ ...OTHER, orchestrationMode: 'Flexible' }));
  // A member whose name does not start with its scale set's.
  compute.addInstance(FLEX, 'node-7f3a9c', {
    resourceId: virtualMachineResourceId({ ...GROUP, name: 'node-7f3a9c' }),
  });
  // Named like a member of vmss-flex (`<scale set>_<8 hex>`), but ARM records it in vmss-other.
  compute.addInstance(OTHER, 'vmss-flex_1a2b3c4d', {
    resourceId: virtualMachineResourceId({ ...GROUP, name: 'vmss-flex_1a2b3c4d' }),
  });
  return compute;
}

function names(refs: Iterable<ScaleSetRef | undefined>): string[] {
  return [...refs].map((ref) => (ref === undefined ? '-' : ref.name)).sort();
}

void describe('Flexible membership: ARM recorded, never guessed from a name', () => {
  void it('one GET of the VM names its scale set', async () => {
    const compute = world();
    const of = (name: string) => scaleSetOfVirtualMachine(compute, { ...GROUP, name });

    assert.deepEqual(names([await of('node-7f3a9c'), await of('vmss-flex_1a2b3c4d')]), [
      'vmss-flex',
      'vmss-other',
    ]);
    assert.equal((await of('vmss-flex_1a2b3c4d'))?.name, 'vmss-other');
    assert.equal(await of('standalone-vm'), undefined, 'a VM ARM does not know is in no scale set');
    assert.deepEqual(
      compute.calls.map((call) => call.method),
      ['virtualMachines.get', 'virtualMachines.get', 'virtualMachines.get', 'virtualMachines.get'],
    );
  });

  void it('one list of the resource group names the scale set of each of its VMs', async () => {
    const owners = await scaleSetsOfVirtualMachines(world(), GROUP.subscriptionId, GROUP.resourceGroup);

    assert.equal(owners.get('node-7f3a9c')?.name, 'vmss-flex');
    assert.equal(owners.get('vmss-flex_1a2b3c4d')?.name, 'vmss-other');
  });

  void it('finds the scale sets with nodes from the VMs ARM lists', async () => {
    const compute = world();
    const nodes = ['node-7f3a9c', 'vmss-flex_1a2b3c4d'].map((name) =>
      aNode({
        name,
        providerId: formatProviderId({ kind: 'virtual-machine', virtualMachine: { ...GROUP, name } }),
      }),
    );

    const found = await scaleSetsWithNodes(compute, nodes);

    assert.deepEqual(found.map(scaleSetKey).sort(), [scaleSetKey(FLEX), scaleSetKey(OTHER)].sort());
    assert.deepEqual(
      compute.calls.map((call) => call.method),
      ['virtualMachines.list'],
    );
  });

  void it('a Flexible pool’s members are the VMs ARM filters by its scale set', async () => {
    const compute = world();

    const members = await flexibleMemberIds(compute, aScaleSet({ ...FLEX, orchestrationMode: 'Flexible' }));

    assert.deepEqual(members, [virtualMachineResourceId({ ...GROUP, name: 'node-7f3a9c' })]);
  });
});
