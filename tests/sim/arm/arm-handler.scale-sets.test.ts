/**
 * Drives the simulated ARM with the real @azure/arm-compute client: scale sets (GET, PATCH merge,
 * PUT, write-only customData), Uniform VMs and their power LROs, run command, extensions, and
 * Flexible scale-set members.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { ComputeEvent } from '../../../sim/arm/compute-state.js';
import {
  type ArmTestWorld,
  FAST_POLL,
  rawRequest,
  restError,
  startArmTestWorld,
  SUBSCRIPTION,
} from './arm-test-world.js';

const RG = 'rg-nodes';
const GALLERY_IMAGE = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/cluster_gallery/images/pool-a`;
const NOOP_CLOUD_CONFIG = 'I2Nsb3VkLWNvbmZpZwo=';
const ORIGINAL_CUSTOM_DATA = Buffer.from('#cloud-config\nbootstrap: true\n').toString('base64');

describe('simulated ARM: scale sets through @azure/arm-compute', () => {
  let world: ArmTestWorld;
  const events: ComputeEvent[] = [];

  before(async () => {
    world = await startArmTestWorld({
      seed: (state) => {
        state.addScaleSet({
          resourceGroup: RG,
          name: 'vmss-a',
          instances: 3,
          computerNamePrefix: 'pool-a-',
          customData: ORIGINAL_CUSTOM_DATA,
          tags: { pool: 'a' },
          extensions: [
            { name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
            {
              name: 'vmss-computeAksLinuxBilling',
              publisher: 'Microsoft.AKS',
              type: 'Compute.AKS.Linux.Billing',
            },
          ],
        });
        state.addScaleSet({
          resourceGroup: RG,
          name: 'vmss-flex',
          orchestrationMode: 'Flexible',
          instances: 2,
        });
        state.addScaleSet({ resourceGroup: RG, name: 'vmss-b', instances: 1 });
        state.addGallery({
          resourceGroup: RG,
          name: 'cluster_gallery',
          images: [{ name: 'pool-a', versions: [{ name: '2026.1122.1000' }] }],
        });
        state.setRunCommandHandler((instance, record) => ({
          stdout: `ran ${record.script.length} lines on ${instance.computerName}`,
          stderr: '',
        }));
        state.subscribe((event) => events.push(event));
      },
    });
  });

  after(async () => {
    await world.close();
  });

  it('gets a scale set without its write-only customData', async () => {
    const scaleSet = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');

    assert.equal(scaleSet.name, 'vmss-a');
    assert.equal(scaleSet.orchestrationMode, 'Uniform');
    assert.equal(scaleSet.upgradePolicy?.mode, 'Manual');
    assert.equal(scaleSet.sku?.capacity, 3);
    assert.equal(scaleSet.virtualMachineProfile?.osProfile?.computerNamePrefix, 'pool-a-');
    assert.equal(scaleSet.virtualMachineProfile?.osProfile?.customData, undefined);
    assert.equal(scaleSet.virtualMachineProfile?.storageProfile?.imageReference?.publisher, 'Canonical');
    assert.equal(scaleSet.virtualMachineProfile?.extensionProfile?.extensions?.length, 2);
  });

  it('lists scale sets of a resource group', async () => {
    const names: string[] = [];
    for await (const scaleSet of world.client.virtualMachineScaleSets.list(RG))
      names.push(scaleSet.name ?? '');

    assert.deepEqual(names.sort(), ['vmss-a', 'vmss-b', 'vmss-flex']);
  });

  it('PATCHes with merge semantics: objects merge, null removes, tags replace, customData is kept write-only', async () => {
    const poller = await world.client.virtualMachineScaleSets.beginUpdate(
      RG,
      'vmss-a',
      {
        tags: { pool: 'a', image: 'prototype' },
        virtualMachineProfile: {
          storageProfile: {
            // null removes the marketplace fields, as the model update sends them (docs/design.md#model-update).
            imageReference: {
              id: GALLERY_IMAGE,
              publisher: null,
              offer: null,
              sku: null,
              version: null,
            } as never,
          },
          osProfile: { customData: NOOP_CLOUD_CONFIG },
        },
      },
      FAST_POLL,
    );
    assert.equal(
      world.state.getScaleSet(
        `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a`,
      )?.provisioningState,
      'Updating',
    );

    const updated = await world.settle(poller.pollUntilDone(), 1);

    assert.equal(updated.provisioningState, 'Succeeded');
    const reference = updated.virtualMachineProfile?.storageProfile?.imageReference;
    assert.equal(reference?.id, GALLERY_IMAGE);
    assert.equal(reference?.publisher, undefined);
    assert.equal(reference?.offer, undefined);
    assert.deepEqual(updated.tags, { pool: 'a', image: 'prototype' });
    // Untouched siblings survive the merge.
    assert.equal(updated.virtualMachineProfile?.osProfile?.computerNamePrefix, 'pool-a-');
    assert.equal(updated.virtualMachineProfile?.storageProfile?.osDisk?.diskSizeGB, 128);
    assert.equal(updated.virtualMachineProfile?.osProfile?.customData, undefined);
    const info = world.state.getScaleSet(updated.id ?? '');
    assert.equal(info?.customData, NOOP_CLOUD_CONFIG);
    assert.equal(info?.bootsFromGalleryImage, true);
    const instances = world.state.listInstances(updated.id ?? '');
    assert.ok(instances.every((instance) => !instance.latestModelApplied));
  });

  it('refuses an imageReference with both id and marketplace fields (a merge without nulls)', async () => {
    await assert.rejects(
      world.client.virtualMachineScaleSets.beginUpdateAndWait(
        RG,
        'vmss-b',
        { virtualMachineProfile: { storageProfile: { imageReference: { id: GALLERY_IMAGE } } } },
        FAST_POLL,
      ),
      (error) => {
        const rest = restError(error);
        assert.equal(rest.statusCode, 400);
        assert.equal(rest.code, 'InvalidParameter');
        return true;
      },
    );
  });

  it("refuses 'version' next to a gallery image id like ARM does", async () => {
    await assert.rejects(
      world.client.virtualMachineScaleSets.beginUpdateAndWait(
        RG,
        'vmss-b',
        {
          virtualMachineProfile: {
            storageProfile: {
              imageReference: {
                id: GALLERY_IMAGE,
                publisher: null,
                offer: null,
                sku: null,
                version: '1.0.0',
              } as never,
            },
          },
        },
        FAST_POLL,
      ),
      (error) => {
        assert.equal(restError(error).statusCode, 400);
        assert.match((error as Error).message, /do not use field 'version' for gallery image deployment/);
        return true;
      },
    );
  });

  it('refuses a gallery image that does not exist', async () => {
    await assert.rejects(
      world.client.virtualMachineScaleSets.beginUpdateAndWait(
        RG,
        'vmss-b',
        {
          virtualMachineProfile: {
            storageProfile: {
              imageReference: {
                id: `${GALLERY_IMAGE}-missing`,
                publisher: null,
                offer: null,
                sku: null,
                version: null,
              } as never,
            },
          },
        },
        FAST_POLL,
      ),
      (error) => {
        assert.equal(restError(error).statusCode, 404);
        assert.equal(restError(error).code, 'GalleryImageNotFound');
        return true;
      },
    );
  });

  it('refuses customData that is not base64', async () => {
    await assert.rejects(
      world.client.virtualMachineScaleSets.beginUpdateAndWait(
        RG,
        'vmss-b',
        { virtualMachineProfile: { osProfile: { customData: '#cloud-config' } } },
        FAST_POLL,
      ),
      (error) => {
        assert.equal(restError(error).statusCode, 400);
        assert.match((error as Error).message, /must be in Base64 encoding/);
        return true;
      },
    );
  });

  it('refuses changing the orchestration mode with PropertyChangeNotAllowed', async () => {
    // The SDK's update model has no orchestrationMode, so send the PATCH raw.
    const path = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-b?api-version=2026-04-01`;

    const response = await rawRequest(world, 'PATCH', path, {
      body: JSON.stringify({ properties: { orchestrationMode: 'Flexible' } }),
    });

    assert.equal(response.status, 409);
    assert.equal((response.body as { error: { code: string } }).error.code, 'PropertyChangeNotAllowed');
  });

  it('PUT of a GET result replaces the model but keeps the stored customData', async () => {
    const current = await world.client.virtualMachineScaleSets.get(RG, 'vmss-a');

    const replaced = await world.settle(
      world.client.virtualMachineScaleSets.beginCreateOrUpdateAndWait(
        RG,
        'vmss-a',
        { ...current, tags: { pool: 'a' } },
        FAST_POLL,
      ),
      1,
    );

    assert.deepEqual(replaced.tags, { pool: 'a' });
    assert.equal(replaced.virtualMachineProfile?.osProfile?.customData, undefined);
    assert.equal(world.state.getScaleSet(replaced.id ?? '')?.customData, NOOP_CLOUD_CONFIG);
  });

  it('lists Uniform VMs with and without the instance view', async () => {
    const plain = [];
    for await (const vm of world.client.virtualMachineScaleSetVMs.list(RG, 'vmss-a')) plain.push(vm);
    const expanded = [];
    for await (const vm of world.client.virtualMachineScaleSetVMs.list(RG, 'vmss-a', {
      expand: 'instanceView',
    }))
      expanded.push(vm);

    assert.deepEqual(
      plain.map((vm) => vm.instanceId),
      ['0', '1', '2'],
    );
    assert.equal(plain[0]?.instanceView, undefined);
    assert.deepEqual(
      expanded.map(
        (vm) => vm.instanceView?.statuses?.find((status) => status.code?.startsWith('PowerState/'))?.code,
      ),
      ['PowerState/running', 'PowerState/running', 'PowerState/running'],
    );
    assert.equal(expanded[1]?.osProfile?.computerName, 'pool-a-000001');
    assert.match(
      expanded[1]?.storageProfile?.osDisk?.managedDisk?.id ?? '',
      /\/providers\/Microsoft\.Compute\/disks\/vmss-a_1_OsDisk_1_/,
    );
  });

  it('pages long lists with nextLink, which the SDK follows', async () => {
    const paged = await startArmTestWorld({
      pageSize: 2,
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'big', instances: 5 }),
    });
    try {
      const ids = [];
      for await (const vm of paged.client.virtualMachineScaleSetVMs.list(RG, 'big')) ids.push(vm.instanceId);
      assert.deepEqual(ids, ['0', '1', '2', '3', '4']);
    } finally {
      await paged.close();
    }
  });

  it('gets one VM and its instance view, ids compared case-insensitively', async () => {
    const vm = await world.client.virtualMachineScaleSetVMs.get('RG-NODES', 'VMSS-A', '2', {
      expand: 'instanceView',
    });
    const view = await world.client.virtualMachineScaleSetVMs.getInstanceView(RG, 'vmss-a', '2');

    assert.equal(vm.name, 'vmss-a_2');
    assert.ok(vm.vmId);
    assert.equal(view.hyperVGeneration, 'V2');
    assert.deepEqual(
      view.statuses?.map((status) => status.code),
      ['ProvisioningState/succeeded', 'PowerState/running'],
    );
  });

  it('powers an instance off (skipShutdown) as an LRO taking the latency profile, emitting power events', async () => {
    events.length = 0;
    const started = world.clock.nowMs();
    const poller = await world.client.virtualMachineScaleSetVMs.beginPowerOff(RG, 'vmss-a', '0', {
      ...FAST_POLL,
      skipShutdown: true,
    });
    const during = await world.client.virtualMachineScaleSetVMs.getInstanceView(RG, 'vmss-a', '0');
    assert.ok(during.statuses?.some((status) => status.code === 'PowerState/stopping'));

    await world.settle(poller.pollUntilDone(), 5);

    const view = await world.client.virtualMachineScaleSetVMs.getInstanceView(RG, 'vmss-a', '0');
    assert.ok(view.statuses?.some((status) => status.code === 'PowerState/stopped'));
    assert.ok(world.clock.nowMs() - started >= world.latency.instanceStopSeconds * 1000);
    assert.deepEqual(
      events
        .filter((event) => event.type === 'instance-power-changed')
        .map((event) => event.instance.powerState),
      ['stopping', 'stopped'],
    );
    assert.ok(world.log.statuses('Microsoft.Compute/locations/operations/read').length > 0);
  });

  it('refuses restarting a stopped instance with OperationNotAllowed', async () => {
    await assert.rejects(
      world.client.virtualMachineScaleSetVMs.beginRestartAndWait(RG, 'vmss-a', '0', FAST_POLL),
      (error) => {
        assert.equal(restError(error).statusCode, 409);
        assert.equal(restError(error).code, 'OperationNotAllowed');
        return true;
      },
    );
  });

  it('starts, restarts and deallocates instances through LROs', async () => {
    await world.settle(
      world.client.virtualMachineScaleSetVMs.beginStartAndWait(RG, 'vmss-a', '0', FAST_POLL),
    );
    assert.equal(
      world.state.listInstances(
        `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a`,
      )[0]?.powerState,
      'running',
    );

    events.length = 0;
    await world.settle(
      world.client.virtualMachineScaleSetVMs.beginRestartAndWait(RG, 'vmss-a', '0', FAST_POLL),
    );
    assert.deepEqual(
      events
        .filter((event) => event.type === 'instance-power-changed')
        .map((event) => event.instance.powerState),
      ['starting', 'running'],
    );

    await world.settle(
      world.client.virtualMachineScaleSetVMs.beginDeallocateAndWait(RG, 'vmss-a', '1', FAST_POLL),
      10,
    );
    const vm = await world.client.virtualMachineScaleSetVMs.get(RG, 'vmss-a', '1', {
      expand: 'instanceView',
    });
    assert.ok(vm.instanceView?.statuses?.some((status) => status.code === 'PowerState/deallocated'));
    const disk = await world.client.disks.get(RG, vm.storageProfile?.osDisk?.name ?? '');
    assert.equal(disk.diskState, 'Reserved');
    await world.settle(
      world.client.virtualMachineScaleSetVMs.beginStartAndWait(RG, 'vmss-a', '1', FAST_POLL),
    );
  });

  it('runs a RunShellScript command, records the script and returns its output', async () => {
    const result = await world.settle(
      world.client.virtualMachineScaleSetVMs.beginRunCommandAndWait(
        RG,
        'vmss-a',
        '2',
        {
          commandId: 'RunShellScript',
          script: ['rm -rf /var/lib/cloud/instance', 'cp /dev/null /etc/machine-id'],
        },
        FAST_POLL,
      ),
    );

    assert.match(result.value?.[0]?.message ?? '', /\[stdout\]\nran 2 lines on pool-a-000002/);
    const history = world.state.runCommandHistory();
    assert.deepEqual(history.at(-1)?.script, [
      'rm -rf /var/lib/cloud/instance',
      'cp /dev/null /etc/machine-id',
    ]);
  });

  it('lists and gets scale-set extensions', async () => {
    const names = [];
    for await (const extension of world.client.virtualMachineScaleSetExtensions.list(RG, 'vmss-a'))
      names.push(extension.name);
    const cse = await world.client.virtualMachineScaleSetExtensions.get(RG, 'vmss-a', 'vmssCSE');

    assert.deepEqual(names, ['vmssCSE', 'vmss-computeAksLinuxBilling']);
    assert.equal(cse.typePropertiesType, 'CustomScript');
    assert.equal(cse.publisher, 'Microsoft.Azure.Extensions');
  });

  it('deletes an extension in a deterministic 13–67 s per name', async () => {
    const scaleSetId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-a`;
    const expected = world.state.extensionDeleteSeconds('vmssCSE');
    assert.ok(expected >= 13 && expected <= 67);
    const poller = await world.client.virtualMachineScaleSetExtensions.beginDelete(
      RG,
      'vmss-a',
      'vmssCSE',
      FAST_POLL,
    );
    assert.equal(world.state.getScaleSet(scaleSetId)?.extensions[0]?.provisioningState, 'Deleting');

    world.clock.advance(expected - 1);
    assert.equal(world.state.getScaleSet(scaleSetId)?.extensions.length, 2);
    world.clock.advance(1);
    await poller.pollUntilDone();

    assert.deepEqual(
      world.state.getScaleSet(scaleSetId)?.extensions.map((extension) => extension.name),
      ['vmss-computeAksLinuxBilling'],
    );
    assert.equal(world.state.getScaleSet(scaleSetId)?.bootstrapExtensionsRemain, false);
    await assert.rejects(
      world.client.virtualMachineScaleSetExtensions.get(RG, 'vmss-a', 'vmssCSE'),
      (error) => {
        assert.equal(restError(error).statusCode, 404);
        return true;
      },
    );
  });

  it('lists Flexible members with virtualMachines.list and the scale-set filter', async () => {
    const scaleSetId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-flex`;
    const members = [];
    for await (const vm of world.client.virtualMachines.list(RG, {
      filter: `'virtualMachineScaleSet/id' eq '${scaleSetId}'`,
      expand: 'instanceView',
    })) {
      members.push(vm);
    }

    assert.equal(members.length, 2);
    assert.ok(members.every((vm) => vm.virtualMachineScaleSet?.id === scaleSetId));
    assert.ok(
      members.every((vm) =>
        vm.instanceView?.statuses?.some((status) => status.code === 'PowerState/running'),
      ),
    );
  });

  it('serves Flexible VMs: get, instance view, power off and start', async () => {
    const [member] = world.state.listInstances(
      `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-flex`,
    );
    const name = member?.name ?? '';

    const vm = await world.client.virtualMachines.get(RG, name);
    assert.equal(vm.type, 'Microsoft.Compute/virtualMachines');
    assert.ok(vm.storageProfile?.osDisk?.managedDisk?.id);

    await world.settle(world.client.virtualMachines.beginPowerOffAndWait(RG, name, FAST_POLL));
    const view = await world.client.virtualMachines.instanceView(RG, name);
    assert.ok(view.statuses?.some((status) => status.code === 'PowerState/stopped'));

    await world.settle(world.client.virtualMachines.beginStartAndWait(RG, name, FAST_POLL));
    assert.equal(world.state.getInstance(member?.id ?? '')?.powerState, 'running');
  });

  it('refuses Uniform VM APIs on a Flexible scale set', async () => {
    const list = async (): Promise<void> => {
      for await (const _vm of world.client.virtualMachineScaleSetVMs.list(RG, 'vmss-flex')) {
        // draining the iterator sends the request
      }
    };
    await assert.rejects(list(), (error) => {
      assert.equal(restError(error).statusCode, 400);
      assert.equal(restError(error).code, 'OperationNotAllowed');
      return true;
    });
  });

  it('answers an LRO with Azure-AsyncOperation, Location (202 until done) and a real Retry-After', async () => {
    const timed = await startArmTestWorld({
      retryAfterSeconds: undefined,
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'timed', instances: 1 }),
    });
    try {
      const base = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/timed/virtualMachines/0`;
      const accepted = await rawRequest(timed, 'POST', `${base}/powerOff?api-version=2026-04-01`);
      assert.equal(accepted.status, 202);
      assert.equal(accepted.headers['retry-after'], '30');
      const status = new URL(accepted.headers['azure-asyncoperation'] ?? '');
      const monitor = new URL(accepted.headers.location ?? '');
      assert.match(status.pathname, /\/providers\/Microsoft\.Compute\/locations\/westeurope\/operations\//);

      const running = await rawRequest(timed, 'GET', status.pathname + status.search);
      assert.deepEqual((running.body as { status: string }).status, 'InProgress');
      assert.equal((await rawRequest(timed, 'GET', monitor.pathname + monitor.search)).status, 202);

      timed.clock.advance(timed.latency.instanceStopSeconds);
      const done = await rawRequest(timed, 'GET', status.pathname + status.search);
      assert.equal((done.body as { status: string }).status, 'Succeeded');
      assert.equal((await rawRequest(timed, 'GET', monitor.pathname + monitor.search)).status, 200);
    } finally {
      await timed.close();
    }
  });

  it('lets the SDK poller honour Retry-After (1 s of wall time here) and still finish', async () => {
    const paced = await startArmTestWorld({
      retryAfterSeconds: (remaining) => (remaining > 0 ? 1 : 0),
      seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'paced', instances: 1 }),
    });
    try {
      const started = paced.clock.nowMs();
      await paced.settle(paced.client.virtualMachineScaleSetVMs.beginRestartAndWait(RG, 'paced', '0'), 30);
      assert.ok(paced.clock.nowMs() - started >= paced.latency.instanceStartSeconds * 1000);
      assert.equal(paced.log.statuses('Microsoft.Compute/locations/operations/read').at(-1), 200);
    } finally {
      await paced.close();
    }
  });
  it(
    'moves a manual clock by the wait real ARM would ask for when a poll stands for the client waiting',
    { timeout: 60_000 },
    async () => {
      const paced = await startArmTestWorld({
        clientPacedPolls: true,
        seed: (state) => state.addScaleSet({ resourceGroup: RG, name: 'paced', instances: 1 }),
      });
      try {
        const started = paced.clock.nowMs();
        // Nobody advances the clock but the polls: the call finishes only because each poll moves time.
        await paced.client.virtualMachineScaleSetVMs.beginRestartAndWait(RG, 'paced', '0', FAST_POLL);
        const waited = (paced.clock.nowMs() - started) / 1000;
        const polls = paced.log.statuses('Microsoft.Compute/locations/operations/read').length;
        assert.ok(waited >= paced.latency.instanceStartSeconds, `waited ${waited} s`);
        // 1–30 s per poll, as the remaining time asks: a 30 s restart needs one or two polls, not dozens.
        assert.ok(polls >= 1 && polls <= 3, `${polls} polls`);
        assert.ok(waited <= paced.latency.instanceStartSeconds + 30, `waited ${waited} s`);
      } finally {
        await paced.close();
      }
    },
  );
});
