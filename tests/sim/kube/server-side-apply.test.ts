// Server-side apply and managed fields: `kubectl apply --server-side` (kubectl 1.32) against the
// simulated API server, two field managers, a conflict, `--force-conflicts`, and the Update entries
// ordinary writes record.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { ADMIN_TOKEN, startTestCluster } from './fixtures.js';
import { type KubectlSession, startKubectlSession } from './kubectl-session.js';

interface Entry {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
  time: string;
}

void describe('server-side apply through kubectl', () => {
  let session: KubectlSession;
  let alice: string;
  let bob: string;

  const entries = async (): Promise<Entry[]> => {
    const read = await session.kubectl('get', 'node', 'applied', '-o', 'json', '--show-managed-fields');
    return (JSON.parse(read.stdout) as { metadata: { managedFields: Entry[] } }).metadata.managedFields;
  };

  before(async () => {
    session = await startKubectlSession();
    alice = session.manifest(
      'alice.yaml',
      'apiVersion: v1\nkind: Node\nmetadata:\n  name: applied\n  labels:\n    team: a\nspec:\n  podCIDR: 10.0.0.0/24\n',
    );
    bob = session.manifest(
      'bob.yaml',
      'apiVersion: v1\nkind: Node\nmetadata:\n  name: applied\n  labels:\n    team: b\n',
    );
  });

  after(async () => {
    await session.close();
  });

  void it('creates the object and records the applier as its Apply manager', async () => {
    const applied = await session.kubectl('apply', '--server-side', '-f', alice, '--field-manager=alice');

    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /node\/applied serverside-applied/);
    const [entry] = await entries();
    assert.equal(entry?.manager, 'alice');
    assert.equal(entry.operation, 'Apply');
    assert.deepEqual(entry.fieldsV1, {
      'f:metadata': { 'f:labels': { 'f:team': {} } },
      'f:spec': { 'f:podCIDR': {} },
    });
  });

  void it("refuses another manager's change to alice's field with a 409 conflict", async () => {
    const applied = await session.kubectl('apply', '--server-side', '-f', bob, '--field-manager=bob');

    assert.equal(applied.code, 1);
    assert.match(
      applied.stderr,
      /Apply failed with 1 conflict: conflict with "alice": \.metadata\.labels\.team/,
    );
    assert.equal(session.cluster.store.get('nodes', undefined, 'applied')?.metadata.labels?.team, 'a');
  });

  void it('takes the field with --force-conflicts; alice keeps what bob did not take', async () => {
    const applied = await session.kubectl(
      'apply',
      '--server-side',
      '-f',
      bob,
      '--field-manager=bob',
      '--force-conflicts',
    );

    assert.equal(applied.code, 0, applied.stderr);
    const node = session.cluster.store.get('nodes', undefined, 'applied');
    assert.equal(node?.metadata.labels?.team, 'b');
    const byManager = Object.fromEntries((await entries()).map((entry) => [entry.manager, entry.fieldsV1]));
    assert.deepEqual(byManager, {
      alice: { 'f:spec': { 'f:podCIDR': {} } },
      bob: { 'f:metadata': { 'f:labels': { 'f:team': {} } } },
    });
  });

  void it('removes a field its only manager stops applying', async () => {
    const shorter = session.manifest(
      'alice-2.yaml',
      'apiVersion: v1\nkind: Node\nmetadata:\n  name: applied\n',
    );

    const applied = await session.kubectl('apply', '--server-side', '-f', shorter, '--field-manager=alice');

    assert.equal(applied.code, 0, applied.stderr);
    const node = session.cluster.store.get('nodes', undefined, 'applied');
    assert.equal((node?.spec as Record<string, unknown> | undefined)?.podCIDR, undefined);
    assert.equal(node?.metadata.labels?.team, 'b');
  });

  void it('records an ordinary write as an Update by its field manager', async () => {
    const labelled = await session.kubectl('label', 'node', 'applied', 'extra=1');

    assert.equal(labelled.code, 0, labelled.stderr);
    const update = (await entries()).find((entry) => entry.manager === 'kubectl-label');
    assert.equal(update?.operation, 'Update');
    assert.deepEqual(update.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:extra': {} } } });
  });
});

void describe('managed fields over raw HTTP', () => {
  void it('names the user agent when no fieldManager is given, and requires one for apply', async () => {
    const cluster = await startTestCluster();
    try {
      const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'User-Agent': 'tool/1.0 (linux)' };
      const created = await fetch(`${cluster.url}/api/v1/namespaces`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'made', labels: { a: 'b' } } }),
      });
      const apply = await fetch(`${cluster.url}/api/v1/namespaces/made`, {
        method: 'PATCH',
        headers: { ...headers, 'Content-Type': 'application/apply-patch+yaml' },
        body: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: made\n',
      });

      assert.equal(created.status, 201);
      const body = (await created.json()) as { metadata: { managedFields: Entry[] } };
      assert.equal(body.metadata.managedFields[0]?.manager, 'tool');
      assert.equal(body.metadata.managedFields[0].operation, 'Update');
      assert.equal(apply.status, 422);
      assert.match(
        ((await apply.json()) as { message: string }).message,
        /fieldManager: Required value: is required for apply patch/,
      );
    } finally {
      await cluster.close();
    }
  });
});
