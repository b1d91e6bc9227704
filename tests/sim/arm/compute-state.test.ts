/** Tests of the in-memory compute world: seeding, lookups, power transitions, events, scale-out, images. */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import {
  ComputeError,
  type ComputeEvent,
  ComputeState,
  type OperationOutcome,
} from '../../../sim/arm/compute-state.js';
import { KAMINO_OBSERVED } from '../../../sim/contracts.js';
import { ManualClock } from './arm-test-world.js';

const SUB = '00000000-0000-0000-0000-00000000000a';
const VMSS_ID = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool`;

describe('ComputeState', () => {
  let clock: ManualClock;
  let state: ComputeState;
  let events: ComputeEvent[];

  beforeEach(() => {
    clock = new ManualClock();
    state = new ComputeState({
      clock,
      scheduler: clock,
      latency: KAMINO_OBSERVED,
      defaultSubscriptionId: SUB,
    });
    events = [];
    state.subscribe((event) => events.push(event));
    state.addScaleSet({
      resourceGroup: 'rg',
      name: 'pool',
      instances: [{}, { powerState: 'stopped' }, {}],
      computerNamePrefix: 'pool-',
      extensions: [
        { name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
        { name: 'provenance', publisher: 'Contoso', type: 'Provenance', bootstrap: false },
        { name: 'cloud-init-join', publisher: 'Contoso', type: 'Join', bootstrap: true },
      ],
    });
  });

  it('seeds instances with OS disks, computer names and deterministic unique vm ids, without events', () => {
    const instances = state.listInstances(VMSS_ID);

    assert.deepEqual(
      instances.map((instance) => instance.computerName),
      ['pool-000000', 'pool-000001', 'pool-000002'],
    );
    assert.deepEqual(
      instances.map((instance) => instance.powerState),
      ['running', 'stopped', 'running'],
    );
    assert.equal(new Set(instances.map((instance) => instance.vmId)).size, 3);
    assert.ok(
      instances.every(
        (instance) => instance.osDiskId && state.getDisk(instance.osDiskId)?.managedBy === instance.id,
      ),
    );
    assert.equal(events.length, 0);
  });

  it('finds instances case-insensitively by id, provider id, vm id and computer name', () => {
    const [first] = state.listInstances(VMSS_ID);
    assert.ok(first);

    assert.equal(state.getInstance(first.id.toUpperCase())?.id, first.id);
    assert.equal(state.findInstanceByProviderId(`azure://${first.id.toLowerCase()}`)?.id, first.id);
    assert.equal(state.findInstanceByVmId(first.vmId.toUpperCase())?.id, first.id);
    assert.equal(state.findInstanceByComputerName('POOL-000000')?.id, first.id);
    assert.equal(first.providerId, `azure://${first.id}`);
  });

  it('powers off through stopping to stopped after instanceStopSeconds and reports completion', () => {
    const outcomes: OperationOutcome[] = [];
    state.powerOffInstance(`${VMSS_ID}/virtualMachines/0`, {
      cause: 'guest',
      onComplete: (outcome) => outcomes.push(outcome),
    });

    clock.advance(KAMINO_OBSERVED.instanceStopSeconds - 1);
    assert.equal(state.getInstance(`${VMSS_ID}/virtualMachines/0`)?.powerState, 'stopping');
    clock.advance(1);

    assert.equal(state.getInstance(`${VMSS_ID}/virtualMachines/0`)?.powerState, 'stopped');
    assert.deepEqual(outcomes, [{ status: 'Succeeded' }]);
    assert.deepEqual(
      events.map((event) =>
        event.type === 'instance-power-changed'
          ? [event.previous, event.instance.powerState, event.cause]
          : event.type,
      ),
      [
        ['running', 'stopping', 'guest'],
        ['stopping', 'stopped', 'guest'],
      ],
    );
  });

  it('preempts a pending transition: the earlier operation is Canceled with OperationPreempted', () => {
    const outcomes: OperationOutcome[] = [];
    state.powerOffInstance(`${VMSS_ID}/virtualMachines/0`, {
      onComplete: (outcome) => outcomes.push(outcome),
    });
    clock.advance(10);
    state.startInstance(`${VMSS_ID}/virtualMachines/0`, { onComplete: (outcome) => outcomes.push(outcome) });
    clock.advance(KAMINO_OBSERVED.instanceStopSeconds);

    assert.equal(outcomes[0]?.status, 'Canceled');
    assert.equal(outcomes[0]?.status === 'Canceled' ? outcomes[0].error.code : '', 'OperationPreempted');
    assert.deepEqual(outcomes[1], { status: 'Succeeded' });
    assert.equal(state.getInstance(`${VMSS_ID}/virtualMachines/0`)?.powerState, 'running');
  });

  it('asks the failure check when a power change would complete and reverts the instance on failure', () => {
    const outcomes: OperationOutcome[] = [];
    let asked = 0;
    state.powerOffInstance(`${VMSS_ID}/virtualMachines/0`, {
      onComplete: (outcome) => outcomes.push(outcome),
      failure: () => {
        asked += 1;
        return { code: 'InternalExecutionError', message: 'The VM agent did not respond.' };
      },
    });
    assert.equal(asked, 0);

    clock.advance(KAMINO_OBSERVED.instanceStopSeconds);

    assert.equal(asked, 1);
    assert.equal(outcomes[0]?.status, 'Failed');
    assert.equal(state.getInstance(`${VMSS_ID}/virtualMachines/0`)?.powerState, 'running');
  });

  it('refuses restart of a stopped instance and deallocation of an ephemeral one', () => {
    assert.throws(
      () => state.restartInstance(`${VMSS_ID}/virtualMachines/1`),
      (error) => error instanceof ComputeError && error.status === 409,
    );
    const ephemeral = state.addScaleSet({
      resourceGroup: 'rg',
      name: 'eph',
      instances: 1,
      ephemeralOsDisk: true,
    });
    const [instance] = state.listInstances(ephemeral.id);

    assert.equal(ephemeral.ephemeralOsDisk, true);
    assert.equal(instance?.osDiskId, undefined);
    assert.throws(() => state.deallocateInstance(instance?.id ?? ''), /ephemeral OS disks/);
  });

  it('scales out: instance-created says whether it boots from a gallery image and bootstrap extensions remain', () => {
    const [created] = state.scaleOut(VMSS_ID, 1);

    assert.equal(created?.instanceId, '3');
    assert.equal(created?.powerState, 'starting');
    const event = events.find((candidate) => candidate.type === 'instance-created');
    assert.ok(event?.type === 'instance-created');
    assert.equal(event.bootsFromGalleryImage, false);
    assert.equal(event.bootstrapExtensionsRemain, true);
    clock.advance(KAMINO_OBSERVED.instanceStartSeconds);
    assert.equal(state.getInstance(created?.id ?? '')?.powerState, 'running');
    assert.equal(state.getScaleSet(VMSS_ID)?.capacity, 4);
  });

  it("keeps each instance's own model: a later change of the scale set's model does not change it", () => {
    const [created] = state.scaleOut(VMSS_ID, 1);
    const model = state.getScaleSetModel(VMSS_ID);
    assert.ok(model);
    const profile = model['virtualMachineProfile'] as Record<string, Record<string, unknown>>;
    const osProfile = profile['osProfile'] ?? {};
    osProfile['customData'] = Buffer.from('#cloud-config\n').toString('base64');
    profile['extensionProfile'] = { extensions: [] };
    state.replaceScaleSet(VMSS_ID, { properties: model, tags: {} });
    clock.advance(KAMINO_OBSERVED.scaleSetUpdateSeconds);

    const kept = state.getInstanceBootModel(created?.id ?? '');
    assert.deepEqual(
      kept?.extensions.map((extension) => extension['name']),
      ['vmssCSE', 'provenance', 'cloud-init-join'],
    );
    assert.equal(kept.customData, undefined);
    const [later] = state.scaleOut(VMSS_ID, 1);
    const now = state.getInstanceBootModel(later?.id ?? '');
    assert.deepEqual(now?.extensions, []);
    assert.equal(now.customData, Buffer.from('#cloud-config\n').toString('base64'));
  });

  it('counts seeded bootstrap flags, and CustomScript by default', () => {
    assert.deepEqual(
      state.getScaleSet(VMSS_ID)?.extensions.map((extension) => [extension.name, extension.bootstrap]),
      [
        ['vmssCSE', true],
        ['provenance', false],
        ['cloud-init-join', true],
      ],
    );
  });

  it('deletes an instance with its OS disk and emits instance-deleted', () => {
    const [first] = state.listInstances(VMSS_ID);

    state.deleteInstance(first?.id ?? '');

    assert.equal(state.getInstance(first?.id ?? ''), undefined);
    assert.equal(state.getDisk(first?.osDiskId ?? ''), undefined);
    assert.equal(events.at(-1)?.type, 'instance-deleted');
    assert.equal(state.getScaleSet(VMSS_ID)?.capacity, 2);
  });

  it('shows an instance Deleting from the moment its deletion is asked, and refuses other operations', () => {
    const id = `${VMSS_ID}/virtualMachines/0`;
    const outcomes: OperationOutcome[] = [];
    state.requestInstanceDelete(id, (outcome) => outcomes.push(outcome));

    assert.equal(state.getInstance(id)?.provisioningState, 'Deleting');
    assert.equal(state.getScaleSet(VMSS_ID)?.capacity, 3);
    assert.throws(
      () => state.startInstance(id),
      (error: unknown) =>
        error instanceof ComputeError && error.status === 409 && /marked for deletion/.test(error.message),
    );
    assert.throws(
      () =>
        state.runCommand(
          id,
          { commandId: 'RunShellScript', script: ['true'], parameters: [] },
          () => undefined,
        ),
      /marked for deletion/,
    );
    // The guest shutting down changes nothing on a machine that is going.
    state.powerOffInstance(id, { cause: 'guest' });
    // ARM accepts the DELETE again; both end with the one deletion.
    state.requestInstanceDelete(id, (outcome) => outcomes.push(outcome));
    clock.advance(KAMINO_OBSERVED.instanceStopSeconds);

    assert.equal(state.getInstance(id), undefined);
    assert.equal(state.getScaleSet(VMSS_ID)?.capacity, 2);
    assert.deepEqual(outcomes, [{ status: 'Succeeded' }, { status: 'Succeeded' }]);
  });

  it('leaves an instance Failed when its deletion fails, and deletes it when asked again', () => {
    const id = `${VMSS_ID}/virtualMachines/0`;
    const outcomes: OperationOutcome[] = [];
    state.requestInstanceDelete(
      id,
      (outcome) => outcomes.push(outcome),
      () => ({ code: 'InternalExecutionError', message: 'boom' }),
    );
    clock.advance(KAMINO_OBSERVED.instanceStopSeconds);

    assert.equal(state.getInstance(id)?.provisioningState, 'Failed');
    assert.equal(outcomes[0]?.status, 'Failed');
    state.requestInstanceDelete(id);
    clock.advance(KAMINO_OBSERVED.instanceStopSeconds);
    assert.equal(state.getInstance(id), undefined);
  });

  it('refuses run commands on an instance that is not running', () => {
    assert.throws(
      () =>
        state.runCommand(
          `${VMSS_ID}/virtualMachines/1`,
          { commandId: 'RunShellScript', script: ['true'], parameters: [] },
          () => undefined,
        ),
      /requires the VM to be running/,
    );
  });

  for (const name of ['vmssCSE', 'AKSLinuxBilling', 'cse-agent-0', 'x']) {
    it(`picks a deterministic extension delete time within 13–67 s for ${name}`, () => {
      const seconds = state.extensionDeleteSeconds(name);

      assert.ok(seconds >= 13 && seconds <= 67);
      assert.equal(state.extensionDeleteSeconds(name.toUpperCase()), seconds);
    });
  }

  it('ends a failing image version Failed with failed replication, keeping the version', () => {
    const gallery = state.addGallery({ resourceGroup: 'rg', name: 'g', images: [{ name: 'pool' }] });
    const outcomes: OperationOutcome[] = [];
    const version = state.createImageVersion(
      `${gallery.id}/images/pool`,
      '1.0.0',
      {
        location: 'westeurope',
        tags: {},
        properties: { storageProfile: { osDiskImage: { source: { id: '/s' } } } },
      },
      {
        fail: {
          code: 'InvalidParameter',
          message: 'ZRS storage account type is not supported in this region.',
        },
        failAfterSeconds: 5,
        onComplete: (o) => outcomes.push(o),
      },
    );
    clock.advance(5);

    const info = state.getImageVersion(version.id);
    assert.equal(info?.provisioningState, 'Failed');
    assert.equal(info?.replication[0]?.state, 'Failed');
    assert.equal(outcomes[0]?.status, 'Failed');
  });
});
