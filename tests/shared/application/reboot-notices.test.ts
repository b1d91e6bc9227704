import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  decodeQueueMessage,
  envelopeOf,
  type FlexibleMembership,
  normalizeEnvelope,
  normalizeKuredWebhook,
  parseVmResourceId,
  REBOOT_NOTICE_SCHEMA,
  type RebootNotice,
  resolvePoolTarget,
  resourceIdOfProviderId,
} from '../../../shared/application/reboot-notices.js';
import { TerminalError, TransientError } from '../../../shared/domain/errors.js';
import {
  actionEvent,
  annotatedEvent,
  asCloudEvent,
  availabilityEvent,
  CLUSTERS,
  flexMembership,
  flexVm,
  NOW,
  OTHER_SUB,
  SUB,
  uniformVm,
} from '../../functions/triggers/fixtures.js';

function normalize(event: Record<string, unknown>) {
  const envelope = envelopeOf(event);
  if ('ok' in envelope) return envelope;
  return normalizeEnvelope(envelope, NOW);
}

void describe('parseVmResourceId', () => {
  const cases: { name: string; id: string; kind: string | undefined }[] = [
    { name: 'uniform instance', id: uniformVm(), kind: 'scale-set-instance' },
    { name: 'flexible member', id: flexVm(), kind: 'virtual-machine' },
    { name: 'lowercase keywords', id: uniformVm().toLowerCase(), kind: 'scale-set-instance' },
    { name: 'scale set itself', id: uniformVm().replace('/virtualMachines/3', ''), kind: undefined },
    { name: 'non-numeric instance', id: uniformVm('k8s-pool1-12345678-vmss', 'x'), kind: undefined },
    { name: 'path traversal', id: uniformVm('..', '3'), kind: undefined },
    { name: 'encoded slash', id: uniformVm('a%2Fb'), kind: undefined },
    { name: 'quote in name', id: flexVm(`vm"x_1a2b3c4d`), kind: undefined },
    { name: 'control character', id: flexVm('vm\nx'), kind: undefined },
    { name: 'extra segment', id: `${uniformVm()}/extensions/x`, kind: undefined },
    { name: 'not a guid', id: uniformVm('s', '1', 'rg', 'not-a-guid'), kind: undefined },
    {
      name: 'network interface',
      id: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n`,
      kind: undefined,
    },
    { name: 'too long', id: uniformVm('a'.repeat(600)), kind: undefined },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.equal(parseVmResourceId(c.id)?.kind, c.kind);
    });
  }

  void it('reads a providerID', () => {
    assert.equal(resourceIdOfProviderId(`azure://${uniformVm()}`), uniformVm());
    assert.equal(resourceIdOfProviderId('aws:///us-east-1a/i-1'), undefined);
    assert.equal(resourceIdOfProviderId(undefined), undefined);
  });
});

void describe('normalizeEnvelope', () => {
  const cases: { name: string; event: Record<string, unknown>; expect: string }[] = [
    {
      name: 'ResourceAnnotated VirtualMachineRestarted',
      event: annotatedEvent(uniformVm()),
      expect: 'health-resources',
    },
    {
      name: 'same as CloudEvent',
      event: asCloudEvent(annotatedEvent(uniformVm())),
      expect: 'health-resources',
    },
    {
      name: 'control-plane reboot annotation',
      event: annotatedEvent(uniformVm(), 'VirtualMachineRebootInitiatedByControlPlane'),
      expect: 'health-resources',
    },
    {
      name: 'host repair is not a guest reboot',
      event: annotatedEvent(uniformVm(), 'VirtualMachineHostRebootedForRepair'),
      expect: 'not-a-reboot',
    },
    {
      name: 'crash is not a reboot we want',
      event: annotatedEvent(uniformVm(), 'VirtualMachineCrashed'),
      expect: 'not-a-reboot',
    },
    {
      name: 'back to Available',
      event: availabilityEvent(uniformVm(), 'Unavailable', 'Available'),
      expect: 'health-resources',
    },
    {
      name: 'going down',
      event: availabilityEvent(uniformVm(), 'Available', 'Unavailable'),
      expect: 'not-a-reboot',
    },
    {
      name: 'Available to Available',
      event: availabilityEvent(uniformVm(), 'Available', 'Available'),
      expect: 'not-a-reboot',
    },
    {
      name: 'uniform restart action',
      event: actionEvent(
        uniformVm(),
        'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/restart/action',
      ),
      expect: 'resource-action',
    },
    {
      name: 'flex reimage action',
      event: actionEvent(flexVm(), 'Microsoft.Compute/virtualMachines/reimage/action'),
      expect: 'resource-action',
    },
    {
      name: 'deallocate action',
      event: actionEvent(uniformVm(), 'Microsoft.Compute/virtualMachines/deallocate/action'),
      expect: 'not-a-reboot',
    },
    {
      name: 'annotation on a NIC',
      event: annotatedEvent(
        `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n`,
      ),
      expect: 'not-a-vm',
    },
    {
      name: 'unknown type',
      event: { ...annotatedEvent(uniformVm()), eventType: 'Microsoft.Storage.BlobCreated' },
      expect: 'unknown-event-type',
    },
    {
      name: 'validation handshake',
      event: { ...annotatedEvent(uniformVm()), eventType: 'Microsoft.EventGrid.SubscriptionValidationEvent' },
      expect: 'validation-handshake',
    },
    {
      name: 'data missing',
      event: { ...annotatedEvent(uniformVm()), data: { nope: 1 } },
      expect: 'malformed',
    },
    {
      name: 'envelope missing id',
      event: { ...annotatedEvent(uniformVm()), id: undefined },
      expect: 'malformed',
    },
    {
      name: 'custom CloudEvent by node',
      event: {
        specversion: '1.0',
        id: 'c1',
        type: 'io.vmss-prototype.node.rebooted',
        source: '/agents',
        data: { cluster: 'prod', nodeName: 'node-1' },
      },
      expect: 'cloud-event',
    },
    {
      name: 'custom CloudEvent without target',
      event: {
        specversion: '1.0',
        id: 'c2',
        type: 'io.vmss-prototype.node.rebooted',
        source: '/agents',
        data: { nodeName: 'node-1' },
      },
      expect: 'malformed',
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const result = normalize(c.event);
      assert.equal(result.ok ? result.notice.source : result.reason, c.expect);
    });
  }

  void it('keeps the reboot time and the event id', () => {
    const result = normalize(annotatedEvent(uniformVm(), 'VirtualMachineRestarted', 'abc'));
    assert.ok(result.ok);
    assert.deepEqual(result.notice, {
      schema: REBOOT_NOTICE_SCHEMA,
      source: 'health-resources',
      resourceId: uniformVm(),
      observedAt: '2026-11-22T11:57:30Z',
      eventId: 'abc',
      detail: 'VirtualMachineRestarted',
    } satisfies RebootNotice);
  });
});

void describe('normalizeKuredWebhook', () => {
  const cases: { message: string; expect: string }[] = [
    {
      message: 'Node k8s-pool1-12345678-vmss000003 rebooted & uncordoned successfully!',
      expect: 'k8s-pool1-12345678-vmss000003',
    },
    { message: 'Node worker-1.example rebooted & uncordoned successfully', expect: 'worker-1.example' },
    { message: 'Draining node worker-1', expect: 'not-a-reboot' },
    { message: 'Rebooting node worker-1', expect: 'not-a-reboot' },
    { message: 'Node ../etc rebooted & uncordoned successfully!', expect: 'malformed' },
    { message: 'Node Worker_1 rebooted & uncordoned successfully!', expect: 'malformed' },
  ];
  for (const c of cases) {
    void it(c.message, () => {
      const result = normalizeKuredWebhook({ message: c.message }, 'prod', 'kured:1', NOW);
      assert.equal(result.ok ? result.notice.nodeName : result.reason, c.expect);
    });
  }
});

void describe('decodeQueueMessage', () => {
  const event = annotatedEvent(uniformVm());
  const notice: RebootNotice = {
    schema: REBOOT_NOTICE_SCHEMA,
    source: 'kured',
    cluster: 'prod',
    nodeName: 'node-1',
    observedAt: NOW.toISOString(),
    eventId: 'k1',
  };
  const cases: { name: string; entry: unknown; expect: string[] }[] = [
    { name: 'plain JSON object text', entry: JSON.stringify(event), expect: ['event'] },
    { name: 'base64 JSON', entry: Buffer.from(JSON.stringify(event)).toString('base64'), expect: ['event'] },
    { name: 'array of events', entry: JSON.stringify([event, event]), expect: ['event', 'event'] },
    {
      name: 'base64 array',
      entry: Buffer.from(JSON.stringify([event])).toString('base64'),
      expect: ['event'],
    },
    { name: 'object parsed by the host', entry: event, expect: ['event'] },
    { name: 'our notice', entry: JSON.stringify(notice), expect: ['notice'] },
    {
      name: 'our notice, broken',
      entry: JSON.stringify({ ...notice, cluster: '../x' }),
      expect: ['malformed'],
    },
    { name: 'bytes', entry: Buffer.from(JSON.stringify(event)), expect: ['event'] },
    { name: 'garbage text', entry: 'hello world', expect: ['malformed'] },
    { name: 'base64 of text', entry: Buffer.from('hello').toString('base64'), expect: ['malformed'] },
    { name: 'broken JSON', entry: '{"id":', expect: ['malformed'] },
    { name: 'empty array', entry: '[]', expect: ['malformed'] },
    {
      name: 'too many items',
      entry: JSON.stringify(Array.from({ length: 101 }, () => event)),
      expect: ['malformed'],
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.deepEqual(
        decodeQueueMessage(c.entry).map((item) => ('ok' in item ? item.reason : item.kind)),
        c.expect,
      );
    });
  }
});

void describe('resolvePoolTarget', () => {
  const cases: { name: string; id: string; cluster?: string; expect: string }[] = [
    { name: 'uniform instance of a configured pool', id: uniformVm(), expect: 'prod/pool1' },
    {
      name: 'ARM casing differs',
      id: uniformVm('K8S-POOL1-12345678-VMSS', '3', 'RG-K8S-PROD'),
      expect: 'prod/pool1',
    },
    { name: 'flexible member (ARM records its scale set)', id: flexVm(), expect: 'prod/flex' },
    {
      name: 'flexible member whose name does not start with its scale set',
      id: flexVm('node-7f3a9c'),
      expect: 'prod/flex',
    },
    {
      name: 'standalone VM named like a member of a configured pool',
      id: flexVm('k8s-flex-vmss_deadbeef'),
      expect: 'unknown-scale-set',
    },
    {
      name: 'flexible member named after another pool: ARM says which',
      id: flexVm('k8s-pool1-12345678-vmss_0a0b0c0d'),
      expect: 'pool-disabled',
    },
    { name: 'VM ARM does not know', id: flexVm('standalone-vm'), expect: 'unknown-scale-set' },
    { name: 'disabled pool', id: uniformVm('k8s-off-vmss'), expect: 'pool-disabled' },
    { name: 'other scale set in the group', id: uniformVm('k8s-other-vmss'), expect: 'unknown-scale-set' },
    {
      name: 'pools all: scale set name, lowercased',
      id: uniformVm('K8s-Dev-VMSS', '0', 'rg-dev'),
      expect: 'dev/k8s-dev-vmss',
    },
    {
      name: 'other subscription',
      id: uniformVm('k8s-pool1-12345678-vmss', '3', 'rg-K8s-Prod', OTHER_SUB),
      expect: 'foreign-subscription',
    },
    {
      name: 'unconfigured resource group',
      id: uniformVm('k8s-pool1-12345678-vmss', '3', 'rg-elsewhere'),
      expect: 'unconfigured-resource-group',
    },
    {
      name: 'cluster named by the source',
      id: uniformVm(),
      cluster: 'dev',
      expect: 'unconfigured-resource-group',
    },
    { name: 'unknown cluster named', id: uniformVm(), cluster: 'nope', expect: 'unknown-cluster' },
    { name: 'not a VM', id: '/subscriptions/x', expect: 'not-a-vm' },
  ];
  for (const c of cases) {
    void it(c.name, async () => {
      const result = await resolvePoolTarget(c.id, CLUSTERS, c.cluster, flexMembership);
      assert.equal(result.ok ? `${result.cluster}/${result.pool}` : result.reason, c.expect);
    });
  }

  void it('asks ARM only for a VM in a resource group that holds a configured pool', async () => {
    const asked: string[] = [];
    const membership: FlexibleMembership = (cluster, vm) => {
      asked.push(`${cluster}:${vm.name}`);
      return flexMembership(cluster, vm);
    };
    await resolvePoolTarget(
      flexVm('k8s-flex-vmss_1a2b3c4d', 'rg-elsewhere'),
      CLUSTERS,
      undefined,
      membership,
    );
    await resolvePoolTarget(uniformVm(), CLUSTERS, undefined, membership);
    assert.deepEqual(asked, []);
    await resolvePoolTarget(flexVm('node-7f3a9c'), CLUSTERS, undefined, membership);
    assert.deepEqual(asked, ['prod:node-7f3a9c']);
  });

  void it('a refused lookup drops the notice; a transient one is thrown for a retry', async () => {
    const refused = await resolvePoolTarget(flexVm(), CLUSTERS, undefined, () =>
      Promise.reject(new TerminalError('AuthorizationFailed', 'reading virtual machine: denied')),
    );
    assert.equal(refused.ok ? 'ok' : refused.reason, 'unknown-scale-set');
    await assert.rejects(
      resolvePoolTarget(flexVm(), CLUSTERS, undefined, () =>
        Promise.reject(new TransientError('ServerBusy', 'reading virtual machine: busy')),
      ),
      TransientError,
    );
  });
});
