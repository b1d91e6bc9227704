import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  findActive,
  readStatus,
  signalSingleton,
  startSingleton,
} from '../../../shared/application/singleton.js';
import { FakeDurableClient } from '../../functions/triggers/durable-client-double.js';

const REQUEST = {
  name: 'refreshPool',
  instanceId: 'refresh:prod:pool1',
  input: { cluster: 'prod', pool: 'pool1' },
};

void describe('startSingleton', () => {
  void it('starts an unknown id (getStatus throws for it, as in 3.x)', async () => {
    const client = new FakeDurableClient();
    assert.equal(await readStatus(client, REQUEST.instanceId), undefined);
    assert.deepEqual(await startSingleton(client, REQUEST), {
      kind: 'started',
      instanceId: REQUEST.instanceId,
    });
    assert.equal(client.started.length, 1);
  });

  for (const state of ['Running', 'Pending', 'ContinuedAsNew', 'Suspended']) {
    void it(`reports a ${state} instance instead of starting`, async () => {
      const client = new FakeDurableClient();
      client.seed(REQUEST.instanceId, state, { step: 'draining' });
      const outcome = await startSingleton(client, REQUEST);
      assert.equal(outcome.kind, 'running');
      assert.equal(client.started.length, 0);
    });
  }

  for (const state of ['Completed', 'Failed', 'Terminated', 'Canceled']) {
    void it(`replaces a ${state} instance`, async () => {
      const client = new FakeDurableClient();
      client.seed(REQUEST.instanceId, state);
      assert.equal((await startSingleton(client, REQUEST)).kind, 'started');
    });
  }

  void it('reports a running blocker (the cluster run) by its id', async () => {
    const client = new FakeDurableClient();
    client.seed('refresh:prod', 'Running', { step: 'refreshing' }, 'refreshCluster');
    const outcome = await startSingleton(client, { ...REQUEST, blockers: ['refresh:prod'] });
    assert.deepEqual(outcome.kind === 'running' ? outcome.instanceId : outcome.kind, 'refresh:prod');
    assert.equal(client.started.length, 0);
  });

  void it('reports a lost start race as running', async () => {
    const client = new FakeDurableClient();
    client.loseNextStartRace = true;
    const outcome = await startSingleton(client, REQUEST);
    assert.equal(outcome.kind, 'running');
  });

  void it('throws when the start fails and nothing runs', async () => {
    const client = new FakeDurableClient();
    client.startNew = () => Promise.reject(new Error('HTTP 500'));
    await assert.rejects(
      startSingleton(client, REQUEST),
      /starting orchestration refreshPool as refresh:prod:pool1: HTTP 500/,
    );
  });

  void it('findActive skips finished instances', async () => {
    const client = new FakeDurableClient();
    client.seed('a', 'Completed');
    client.seed('b', 'Running');
    assert.equal((await findActive(client, ['a', 'b']))?.instanceId, 'b');
  });
});

void describe('signalSingleton', () => {
  const SIGNAL = {
    name: 'poolSignal',
    instanceId: 'signal:prod:pool1',
    eventName: 'rebootNotice',
    eventData: { n: 1 },
    input: {},
  };

  void it('starts the debounce when absent', async () => {
    const client = new FakeDurableClient();
    assert.equal(await signalSingleton(client, SIGNAL), 'started');
  });

  void it('raises the event on a running debounce', async () => {
    const client = new FakeDurableClient();
    client.seed(SIGNAL.instanceId, 'Running');
    assert.equal(await signalSingleton(client, SIGNAL), 'raised');
    assert.deepEqual(client.raised, [
      { instanceId: SIGNAL.instanceId, eventName: 'rebootNotice', data: { n: 1 } },
    ]);
  });

  void it('starts again when the debounce finished between read and raise', async () => {
    const client = new FakeDurableClient();
    client.seed(SIGNAL.instanceId, 'Running');
    const raise = client.raiseEvent.bind(client);
    client.raiseEvent = (id, name, data) => {
      client.seed(SIGNAL.instanceId, 'Completed');
      return raise(id, name, data);
    };
    assert.equal(await signalSingleton(client, SIGNAL), 'started');
  });

  void it('raises when another trigger won the start race', async () => {
    const client = new FakeDurableClient();
    client.loseNextStartRace = true;
    assert.equal(await signalSingleton(client, SIGNAL), 'raised');
  });
});
