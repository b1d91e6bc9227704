import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PoolSignalInput } from '../../../functions/orchestrations/pool-signal.orchestration.js';
import { handleKuredNotification } from '../../../functions/triggers/kured-notify.http.js';
import { handleRebootEvent } from '../../../functions/triggers/reboot-notice.eventgrid.js';
import { handleRebootQueueMessage } from '../../../functions/triggers/reboot-notice.queue.js';
import { REBOOT_NOTICE_SCHEMA } from '../../../shared/application/reboot-notices.js';
import { FakeDurableClient } from './durable-client-double.js';
import {
  annotatedEvent,
  asCloudEvent,
  fakeDependencies,
  flexVm,
  recordingContext,
  request,
  uniformVm,
} from './fixtures.js';

void describe('reboot notice: Event Grid trigger', () => {
  void it('enqueues a normalized notice', async () => {
    const deps = fakeDependencies();
    const outcome = await handleRebootEvent(annotatedEvent(uniformVm()), recordingContext(), deps);
    assert.equal(outcome.kind, 'enqueued');
    assert.equal(deps.sent[0]?.resourceId, uniformVm());
    assert.equal(deps.sent[0]?.schema, REBOOT_NOTICE_SCHEMA);
  });

  void it('takes CloudEvents too', async () => {
    const deps = fakeDependencies();
    assert.equal(
      (await handleRebootEvent(asCloudEvent(annotatedEvent(flexVm())), recordingContext(), deps)).kind,
      'enqueued',
    );
  });

  void it('drops and logs what is not a reboot', async () => {
    const deps = fakeDependencies();
    const context = recordingContext();
    const outcome = await handleRebootEvent(
      annotatedEvent(uniformVm(), 'VirtualMachineCrashed'),
      context,
      deps,
    );
    assert.deepEqual(outcome.kind === 'dropped' ? outcome.reason : outcome.kind, 'not-a-reboot');
    assert.equal(deps.sent.length, 0);
    assert.ok(context.logs.some((log) => log.level === 'warning'));
  });

  void it('throws when the queue is down, so Event Grid redelivers', async () => {
    const deps = fakeDependencies();
    deps.failSends = true;
    await assert.rejects(
      handleRebootEvent(annotatedEvent(uniformVm()), recordingContext(), deps),
      /queue unavailable/,
    );
  });
});

void describe('reboot notice: queue trigger', () => {
  void it('starts the pool debounce for an Event Grid event', async () => {
    const client = new FakeDurableClient();
    const result = await handleRebootQueueMessage(
      JSON.stringify(annotatedEvent(uniformVm())),
      client,
      recordingContext(),
      fakeDependencies(),
    );
    assert.deepEqual(result.signalled, [{ cluster: 'prod', pool: 'pool1', how: 'started' }]);
    const started = client.started[0];
    assert.equal(started?.instanceId, 'signal:prod:pool1');
    const input = started?.input as PoolSignalInput;
    assert.equal(input.quietPeriodSeconds, 600);
    assert.equal(input.minimumReadySeconds, 3600);
  });

  void it('raises rebootNotice on a running debounce', async () => {
    const client = new FakeDurableClient();
    client.seed('signal:prod:pool1', 'Running', undefined, 'poolSignal');
    const entry = Buffer.from(
      JSON.stringify([annotatedEvent(uniformVm(), 'VirtualMachineRestarted', 'a')]),
    ).toString('base64');
    const result = await handleRebootQueueMessage(entry, client, recordingContext(), fakeDependencies());
    assert.deepEqual(
      result.signalled.map((s) => s.how),
      ['raised'],
    );
    assert.equal(client.raised[0]?.eventName, 'rebootNotice');
  });

  void it('maps a kured notice through the node', async () => {
    const client = new FakeDurableClient();
    const notice = {
      schema: REBOOT_NOTICE_SCHEMA,
      source: 'kured',
      cluster: 'prod',
      nodeName: 'k8s-pool1-12345678-vmss000003',
      observedAt: '2026-11-22T11:00:00.000Z',
      eventId: 'kured:1',
    };
    const result = await handleRebootQueueMessage(notice, client, recordingContext(), fakeDependencies());
    assert.deepEqual(result.signalled, [{ cluster: 'prod', pool: 'pool1', how: 'started' }]);
  });

  void it('drops a notice for a node that does not exist', async () => {
    const client = new FakeDurableClient();
    const notice = {
      schema: REBOOT_NOTICE_SCHEMA,
      source: 'kured',
      cluster: 'prod',
      nodeName: 'ghost',
      observedAt: '2026-11-22T11:00:00Z',
      eventId: 'k',
    };
    const result = await handleRebootQueueMessage(notice, client, recordingContext(), fakeDependencies());
    assert.deepEqual(
      result.dropped.map((d) => d.reason),
      ['node-not-found'],
    );
    assert.equal(client.started.length, 0);
  });

  void it('throws on a transient failure (host retries, then poison) after applying the rest', async () => {
    const client = new FakeDurableClient();
    const deps = fakeDependencies();
    deps.nodeResourceId = () => Promise.reject(new Error('connecting to the API server: ECONNREFUSED'));
    const kured = {
      schema: REBOOT_NOTICE_SCHEMA,
      source: 'kured',
      cluster: 'prod',
      nodeName: 'n-1',
      observedAt: '2026-11-22T11:00:00Z',
      eventId: 'k',
    };
    await assert.rejects(
      handleRebootQueueMessage([kured, annotatedEvent(uniformVm())], client, recordingContext(), deps),
      /applying reboot notices: connecting to the API server/,
    );
    assert.equal(client.started.length, 1);
  });
});

void describe('reboot notice: kured webhook', () => {
  function kured(
    body: string,
    url = 'https://x/api/notices/kured?cluster=prod',
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) {
    return request({ url, headers, body });
  }

  void it('enqueues "rebooted & uncordoned" with the cluster from the query', async () => {
    const deps = fakeDependencies();
    const response = await handleKuredNotification(
      kured(
        '{"title":"kured","message":"Node k8s-pool1-12345678-vmss000003 rebooted & uncordoned successfully!"}',
      ),
      recordingContext(),
      deps,
    );
    assert.equal(response.status, 202);
    assert.deepEqual(
      [deps.sent[0]?.cluster, deps.sent[0]?.nodeName, deps.sent[0]?.source],
      ['prod', 'k8s-pool1-12345678-vmss000003', 'kured'],
    );
  });

  void it('acknowledges and ignores drain messages', async () => {
    const deps = fakeDependencies();
    const response = await handleKuredNotification(
      kured('{"message":"Draining node n-1"}'),
      recordingContext(),
      deps,
    );
    assert.equal(response.status, 200);
    assert.equal(deps.sent.length, 0);
  });

  const failures: {
    name: string;
    body: string;
    url?: string;
    headers?: Record<string, string>;
    status: number;
  }[] = [
    { name: 'missing cluster', body: '{"message":"x"}', url: 'https://x/api/notices/kured', status: 400 },
    {
      name: 'unknown cluster',
      body: '{"message":"x"}',
      url: 'https://x/api/notices/kured?cluster=qa',
      status: 404,
    },
    {
      name: 'traversal in cluster',
      body: '{"message":"x"}',
      url: 'https://x/api/notices/kured?cluster=..%2F',
      status: 404,
    },
    { name: 'no message', body: '{"title":"t"}', status: 400 },
    { name: 'not JSON', body: 'Node x rebooted', status: 400 },
    {
      name: 'text content type',
      body: '{"message":"x"}',
      headers: { 'content-type': 'text/plain' },
      status: 415,
    },
  ];
  for (const failure of failures) {
    void it(`${failure.status}: ${failure.name}`, async () => {
      const deps = fakeDependencies();
      const response = await handleKuredNotification(
        kured(failure.body, failure.url, failure.headers),
        recordingContext(),
        deps,
      );
      assert.equal(response.status, failure.status);
      assert.equal(deps.sent.length, 0);
    });
  }

  void it('503 when the queue is down', async () => {
    const deps = fakeDependencies();
    deps.failSends = true;
    const response = await handleKuredNotification(
      kured('{"message":"Node n-1 rebooted & uncordoned successfully!"}'),
      recordingContext(),
      deps,
    );
    assert.equal(response.status, 503);
  });
});
