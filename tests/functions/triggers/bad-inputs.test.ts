/**
 * Generated hostile and broken inputs across every entry point: each must end in a clear 4xx or a
 * logged rejection, start no orchestration, enqueue nothing, and never throw out of the handler.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { MAX_BODY_BYTES } from '../../../functions/triggers/http-io.js';
import { handleKuredNotification } from '../../../functions/triggers/kured-notify.http.js';
import { handleRebootEvent } from '../../../functions/triggers/reboot-notice.eventgrid.js';
import { handleRebootQueueMessage } from '../../../functions/triggers/reboot-notice.queue.js';
import {
  handlePlanRequest,
  handleRefreshRequest,
  handleStatusRequest,
} from '../../../functions/triggers/refresh-api.http.js';
import { parseVmResourceId } from '../../../shared/application/reboot-notices.js';
import { FakeDurableClient } from './durable-client-double.js';
import {
  actionEvent,
  annotatedEvent,
  asCloudEvent,
  availabilityEvent,
  fakeDependencies,
  flexVm,
  recordingContext,
  request,
  uniformVm,
} from './fixtures.js';

/** Names an attacker or a typo produces. */
const HOSTILE_NAMES: readonly string[] = [
  '../',
  '..',
  '..%2F',
  '%2F',
  '%2e%2e%2f',
  'prod/../dev',
  'pool1/..',
  "pool'1",
  'pool"1',
  'pool`1',
  'pool\n1',
  'pool\u0000',
  'pool\u007f',
  'pool\r\n',
  'a'.repeat(300),
  'POOL1',
  'pool;rm -rf',
  '<script>',
  'pool%00',
  ' pool1',
  'pool1 ',
  '',
  'prod:pool1',
  'pool#1',
  'pool?x=1',
  'pool\\1',
  'pool1\u202e',
  '$(id)',
  '{{7*7}}',
  'pool1\t',
];

let total = 0;
const counts: Record<string, number> = {};
function count(category: string): void {
  total += 1;
  counts[category] = (counts[category] ?? 0) + 1;
}

function assertNothingStarted(client: FakeDurableClient, label: string): void {
  assert.equal(client.started.length, 0, `${label}: started ${JSON.stringify(client.started)}`);
  assert.equal(client.raised.length, 0, `${label}: raised an event`);
}

async function refreshWith(
  input: { cluster?: string; body?: string; headers?: Record<string, string> },
  label: string,
): Promise<void> {
  const client = new FakeDurableClient();
  const response = await handleRefreshRequest(
    request({
      params: { cluster: input.cluster ?? 'prod' },
      headers: input.headers ?? { 'content-type': 'application/json' },
      ...(input.body === undefined ? {} : { body: input.body }),
    }),
    client,
    recordingContext(),
    fakeDependencies(),
  );
  assert.ok(response.status >= 400 && response.status < 500, `${label}: status ${response.status}`);
  const body = (await response.json()) as { error?: { message?: string } };
  assert.ok((body.error?.message ?? '').length > 0, `${label}: no error message`);
  assertNothingStarted(client, label);
  count('http refresh');
}

void describe('generated bad inputs', () => {
  after(() => {
    console.log(`bad inputs rejected: ${total} ${JSON.stringify(counts)}`);
  });

  void it('HTTP refresh: hostile cluster names in the route', async () => {
    for (const name of HOSTILE_NAMES)
      await refreshWith({ cluster: name, body: '{}' }, `cluster ${JSON.stringify(name)}`);
  });

  void it('HTTP refresh: hostile pool and node names in the body', async () => {
    for (const name of HOSTILE_NAMES) {
      await refreshWith({ body: JSON.stringify({ pool: name }) }, `pool ${JSON.stringify(name)}`);
      await refreshWith(
        { body: JSON.stringify({ pool: 'pool1', node: name }) },
        `node ${JSON.stringify(name)}`,
      );
    }
  });

  void it('HTTP refresh: malformed JSON', async () => {
    const bodies = [
      '{',
      '}',
      '{"pool":}',
      '[',
      '{"pool":"pool1",}',
      "{'pool':'pool1'}",
      '\u0000',
      '{"pool":"pool1"',
      'undefined',
      'NaN',
      '{"a":1}{"b":2}',
      '{"pool":"\\x41"}',
      '--',
      '{"pool":"pool1"}}',
    ];
    for (const body of bodies) await refreshWith({ body }, `body ${JSON.stringify(body)}`);
  });

  void it('HTTP refresh: JSON that is not an object, wrong types, unknown fields', async () => {
    const bodies: string[] = ['null', '"pool1"', '123', '[]', 'true', '[{"pool":"pool1"}]'];
    for (const field of ['pool', 'node', 'dryRun']) {
      for (const value of [1, -1, 1.5, true, null, [], {}, ['pool1'], { pool: 'pool1' }, 'yes']) {
        if (field === 'dryRun' && typeof value === 'boolean') continue;
        if (field === 'node' && value === 'yes') continue;
        bodies.push(JSON.stringify(field === 'node' ? { pool: 'pool1', node: value } : { [field]: value }));
      }
    }
    for (const key of [
      'force',
      'Pool',
      'POOL',
      'dry_run',
      'dryrun',
      'pool ',
      'nodes',
      '__proto__',
      'constructor',
      'cluster',
      'mode',
      '',
    ]) {
      bodies.push(`{"pool":"pool1",${JSON.stringify(key)}:true}`);
    }
    for (const body of bodies) await refreshWith({ body }, `body ${body}`);
  });

  void it('HTTP refresh: huge bodies, with and without content-length', async () => {
    for (const size of [MAX_BODY_BYTES + 1, MAX_BODY_BYTES * 2, 100_000, 1_000_000]) {
      const body = `{"pool":"${'p'.repeat(size)}"}`;
      await refreshWith({ body }, `size ${size}`);
      await refreshWith(
        { body, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } },
        `size ${size} declared`,
      );
      await refreshWith(
        { body, headers: { 'content-type': 'application/json', 'content-length': '2' } },
        `size ${size} understated`,
      );
    }
    await refreshWith(
      {
        body: '{}',
        headers: { 'content-type': 'application/json', 'content-length': '99999999999999999999' },
      },
      'absurd length',
    );
    await refreshWith(
      { body: '{}', headers: { 'content-type': 'application/json', 'content-length': '-1' } },
      'negative length',
    );
  });

  void it('HTTP refresh: content types that are not JSON', async () => {
    for (const type of [
      'text/plain',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      'text/json',
      'application/jsonp',
      'json',
      'text/html',
      'application/octet-stream',
      'application/json-seq',
    ]) {
      await refreshWith({ body: '{}', headers: { 'content-type': type } }, `type ${type}`);
    }
  });

  void it('HTTP status and plan: hostile cluster and pool names', async () => {
    for (const name of HOSTILE_NAMES) {
      const client = new FakeDurableClient();
      const status = await handleStatusRequest(
        request({ method: 'GET', params: { cluster: name } }),
        client,
        recordingContext(),
        fakeDependencies(),
      );
      assert.equal(status.status, 404);
      count('http status');
      const plan = await handlePlanRequest(
        request({
          method: 'GET',
          url: `https://x/api/clusters/prod/plan?pool=${encodeURIComponent(name)}`,
          params: { cluster: 'prod' },
        }),
        recordingContext(),
        fakeDependencies(),
      );
      assert.ok(
        name === '' ? plan.status === 200 || plan.status === 404 : plan.status === 404,
        `plan ${JSON.stringify(name)}: ${plan.status}`,
      );
      assertNothingStarted(client, name);
      count('http plan');
    }
  });

  void it('kured webhook: hostile clusters, node names and bodies', async () => {
    const cases: { url: string; body: string; contentType?: string }[] = [];
    for (const name of HOSTILE_NAMES) {
      cases.push({
        url: `https://x/api/notices/kured?cluster=${encodeURIComponent(name)}`,
        body: '{"message":"Node n-1 rebooted & uncordoned successfully!"}',
      });
      cases.push({
        url: 'https://x/api/notices/kured?cluster=prod',
        body: JSON.stringify({ message: `Node ${name} rebooted & uncordoned successfully!` }),
      });
    }
    for (const body of [
      '{',
      '[]',
      'null',
      '{"message":1}',
      '{"message":""}',
      `{"message":"${'x'.repeat(2000)}"}`,
      `{"message":"${'x'.repeat(MAX_BODY_BYTES)}"}`,
    ]) {
      cases.push({ url: 'https://x/api/notices/kured?cluster=prod', body });
    }
    cases.push({
      url: 'https://x/api/notices/kured?cluster=prod',
      body: '{"message":"x"}',
      contentType: 'text/plain',
    });
    for (const c of cases) {
      const deps = fakeDependencies();
      const context = recordingContext();
      const response = await handleKuredNotification(
        request({
          url: c.url,
          headers: { 'content-type': c.contentType ?? 'application/json' },
          body: c.body,
        }),
        context,
        deps,
      );
      const logged = context.logs.length > 0;
      assert.ok(
        (response.status >= 400 && response.status < 500) || (response.status === 200 && logged),
        `${c.url} ${c.body.slice(0, 80)}: ${response.status}`,
      );
      assert.equal(deps.sent.length, 0, `${c.url} ${c.body.slice(0, 80)}: enqueued`);
      count('kured webhook');
    }
  });

  /** Events that must never signal a pool. */
  function badEvents(): { label: string; event: unknown; enqueueable: boolean }[] {
    const events: { label: string; event: unknown; enqueueable: boolean }[] = [];
    for (const type of [
      'Microsoft.Storage.BlobCreated',
      'Microsoft.Resources.ResourceWriteSuccess',
      'Microsoft.Resources.ResourceDeleteSuccess',
      'Microsoft.Resources.ResourceActionFailure',
      'Microsoft.ContainerService.NewKubernetesVersionAvailable',
      'Microsoft.ContainerService.NodePoolRollingStarted',
      'Microsoft.KeyVault.SecretNewVersionCreated',
      'Microsoft.EventGrid.SubscriptionValidationEvent',
      'microsoft.resourcenotifications.healthresources.resourceannotated',
      'Custom.Reboot',
      '',
      'x'.repeat(300),
      'Microsoft.ResourceNotifications.HealthResources.AvailabilityStatusChanged ',
    ]) {
      events.push({
        label: `type ${type.slice(0, 40)}`,
        event: { ...annotatedEvent(uniformVm()), eventType: type },
        enqueueable: false,
      });
    }
    for (let i = 0; i < 12; i++) {
      const sub = `${(0x10000000 + i * 7919).toString(16)}-aaaa-bbbb-cccc-${String(i).padStart(12, '0')}`;
      events.push({
        label: `foreign subscription ${sub}`,
        event: annotatedEvent(uniformVm('k8s-pool1-12345678-vmss', '3', 'rg-K8s-Prod', sub)),
        enqueueable: true,
      });
    }
    for (const group of ['rg-other', 'rg-k8s-prod2', 'MC_rg_aks_westeurope', 'rg-dev-2']) {
      events.push({
        label: `group ${group}`,
        event: annotatedEvent(uniformVm('k8s-pool1-12345678-vmss', '3', group)),
        enqueueable: true,
      });
    }
    for (const name of HOSTILE_NAMES) {
      // A well-formed name (e.g. uppercase) reaches the queue and is refused when applied.
      events.push({
        label: `scale set ${JSON.stringify(name)}`,
        event: annotatedEvent(uniformVm(name)),
        enqueueable: parseVmResourceId(uniformVm(name)) !== undefined,
      });
      events.push({
        label: `flex vm ${JSON.stringify(name)}`,
        event: actionEvent(flexVm(name), 'Microsoft.Compute/virtualMachines/restart/action'),
        enqueueable: parseVmResourceId(flexVm(name)) !== undefined,
      });
    }
    for (const annotation of [
      'VirtualMachineCrashed',
      'VirtualMachineHostRebootedForRepair',
      'VirtualMachineDeallocationInitiated',
      '',
      'virtualmachinerestarted',
    ]) {
      events.push({
        label: `annotation ${annotation}`,
        event: annotatedEvent(uniformVm(), annotation),
        enqueueable: false,
      });
    }
    events.push({
      label: 'going down',
      event: availabilityEvent(uniformVm(), 'Available', 'Unavailable'),
      enqueueable: false,
    });
    events.push({
      label: 'disabled pool',
      event: annotatedEvent(uniformVm('k8s-off-vmss')),
      enqueueable: true,
    });
    events.push({
      label: 'unknown scale set',
      event: annotatedEvent(uniformVm('k8s-zzz-vmss')),
      enqueueable: true,
    });
    const base = annotatedEvent(uniformVm());
    for (const field of ['id', 'eventType', 'subject', 'eventTime', 'dataVersion']) {
      const broken: Record<string, unknown> = { ...base };
      delete broken[field];
      events.push({ label: `missing ${field}`, event: broken, enqueueable: false });
      events.push({ label: `numeric ${field}`, event: { ...base, [field]: 42 }, enqueueable: false });
    }
    events.push({
      label: 'eventTime garbage',
      event: { ...base, eventTime: 'yesterday' },
      enqueueable: false,
    });
    events.push({ label: 'id with newline', event: { ...base, id: 'a\nb' }, enqueueable: false });
    events.push({ label: 'id too long', event: { ...base, id: 'i'.repeat(500) }, enqueueable: false });
    events.push({ label: 'data null', event: { ...base, data: null }, enqueueable: false });
    events.push({ label: 'data string', event: { ...base, data: 'reboot' }, enqueueable: false });
    events.push({
      label: 'target id number',
      event: {
        ...base,
        data: {
          resourceInfo: { properties: { targetResourceId: 5, annotationName: 'VirtualMachineRestarted' } },
        },
      },
      enqueueable: false,
    });
    events.push({
      label: 'cloudevent wrong version',
      event: { ...asCloudEvent(base), specversion: '0.3' },
      enqueueable: false,
    });
    events.push({
      label: 'cloudevent no source',
      event: { ...asCloudEvent(base), source: undefined },
      enqueueable: false,
    });
    for (const value of [null, 0, 'x', [], true, ''])
      events.push({ label: `not an object ${JSON.stringify(value)}`, event: value, enqueueable: false });
    return events;
  }

  void it('Event Grid trigger: bad events are logged and dropped (or enqueued only when well-formed), never thrown', async () => {
    for (const { label, event, enqueueable } of badEvents()) {
      const deps = fakeDependencies();
      const context = recordingContext();
      const outcome = await handleRebootEvent(event, context, deps);
      if (!enqueueable) {
        assert.equal(outcome.kind, 'dropped', `${label}: ${JSON.stringify(outcome)}`);
        assert.equal(deps.sent.length, 0, label);
        assert.ok(
          context.logs.some((log) => log.level === 'warning'),
          `${label}: not logged`,
        );
      }
      count('event grid');
    }
  });

  void it('queue trigger: bad events as objects, JSON text and base64 are dropped, start nothing', async () => {
    for (const { label, event } of badEvents()) {
      const text = JSON.stringify(event) ?? 'undefined';
      for (const [how, entry] of [
        ['object', event],
        ['json', text],
        ['base64', Buffer.from(text).toString('base64')],
      ] as const) {
        const client = new FakeDurableClient();
        const context = recordingContext();
        const result = await handleRebootQueueMessage(entry, client, context, fakeDependencies());
        assert.equal(result.signalled.length, 0, `${label} (${how})`);
        assert.ok(result.dropped.length > 0, `${label} (${how}): nothing dropped`);
        assert.ok(
          context.logs.some((log) => log.level === 'warning'),
          `${label} (${how}): not logged`,
        );
        assertNothingStarted(client, `${label} (${how})`);
        count('queue');
      }
    }
  });

  void it('queue trigger: garbage messages', async () => {
    const garbage: unknown[] = [
      '',
      ' ',
      'hello',
      '{',
      '[',
      '[]',
      '{}',
      'null',
      '"x"',
      '=====',
      'AAAA',
      Buffer.from('hi').toString('base64'),
      'e30=',
      '\u0000',
      'x'.repeat(70_000),
      JSON.stringify(Array.from({ length: 150 }, () => ({}))),
      42,
      null,
      undefined,
      Buffer.from('zz'),
    ];
    for (const entry of garbage) {
      const client = new FakeDurableClient();
      const context = recordingContext();
      const result = await handleRebootQueueMessage(entry, client, context, fakeDependencies());
      assert.equal(result.signalled.length, 0);
      assert.ok(result.dropped.length > 0);
      assertNothingStarted(client, String(entry).slice(0, 40));
      count('queue');
    }
  });

  void it('counts at least 300 generated bad inputs', () => {
    assert.ok(total >= 300, `only ${total}`);
  });
});
