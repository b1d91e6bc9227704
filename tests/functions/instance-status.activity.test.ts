// The singleton check's activity against durable-functions' own DurableClient (its getStatus runs for
// real, over a stubbed HTTP answer): the status of a running instance, an unknown id (HTTP 404), and an
// unreadable status, which must never read as "not running" (a start would replace a running refresh).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

// @azure/functions is a bundled CommonJS module: Node cannot see its named exports from ESM.
import azureFunctions from '@azure/functions';
import durableClientModule from 'durable-functions/lib/src/durableClient/DurableClient.js';

import {
  type InstanceStatusClient,
  instanceStatusHandler,
  READ_INSTANCE_STATUS,
} from '../../functions/instance-status.activity.js';

const { DurableClient } = durableClientModule as {
  DurableClient: { prototype: InstanceStatusClient };
};

/** A real DurableClient whose one HTTP call (getStatusInternal) answers `response`. */
function realClient(response: { status: number; data?: unknown } | Error): InstanceStatusClient {
  const client = Object.create(DurableClient.prototype) as InstanceStatusClient & {
    getStatusInternal: () => Promise<unknown>;
  };
  client.getStatusInternal = () =>
    response instanceof Error ? Promise.reject(response) : Promise.resolve(response);
  return client;
}

function statusData(runtimeStatus: string): Record<string, unknown> {
  return {
    name: 'refreshPool',
    instanceId: 'refresh:prod:pool1',
    createdTime: '2026-11-27T00:00:00Z',
    lastUpdatedTime: '2026-11-27T00:01:00Z',
    input: null,
    output: null,
    runtimeStatus,
    customStatus: null,
    history: [],
  };
}

function run(
  client: InstanceStatusClient | undefined,
  input: unknown = { instanceId: 'refresh:prod:pool1' },
) {
  const context = new azureFunctions.InvocationContext({ functionName: READ_INSTANCE_STATUS });
  return instanceStatusHandler(() => client)(input, context);
}

void describe('readInstanceStatus', () => {
  void it('a running instance is active (getStatus is a method of the client, not an own property)', async () => {
    assert.equal(
      typeof Object.getOwnPropertyDescriptor(realClient({ status: 200 }), 'getStatus'),
      'undefined',
    );
    assert.deepEqual(await run(realClient({ status: 200, data: statusData('Running') })), {
      ok: true,
      value: { active: true, runtimeStatus: 'Running' },
    });
  });

  void it('a finished instance is not active', async () => {
    assert.deepEqual(await run(realClient({ status: 200, data: statusData('Completed') })), {
      ok: true,
      value: { active: false, runtimeStatus: 'Completed' },
    });
  });

  void it('an unknown id (the extension answers 404) is not active', async () => {
    assert.deepEqual(await run(realClient({ status: 404 })), { ok: true, value: { active: false } });
  });

  void it('a status that cannot be read is a transient failure, never "not running"', async () => {
    const result = await run(realClient({ status: 500, data: 'storage unavailable' }));
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.failure.kind, 'transient');
    assert.equal(!result.ok && result.failure.code, 'InstanceStatusUnreadable');
    const unreachable = await run(realClient(new Error('connect ECONNREFUSED 127.0.0.1:7071')));
    assert.equal(!unreachable.ok && unreachable.failure.code, 'InstanceStatusUnreadable');
  });

  void it('refuses a bad input and a host that gave no client', async () => {
    const bad = await run(realClient({ status: 404 }), { instance: 'x' });
    assert.equal(!bad.ok && bad.failure.code, 'InvalidActivityInput');
    const none = await run(undefined);
    assert.equal(!none.ok && none.failure.code, 'NoDurableClient');
  });
});
