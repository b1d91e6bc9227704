// Unknown fields in what a client writes: kubectl 1.32 against the simulated API server. A real server
// never stores a field its schema does not know; `--validate=warn` prints a warning per field,
// kubectl's default (`--validate=strict`) is refused, `--validate=false` drops the field silently.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { specOf } from '../../../sim/kube/objects.js';
import { ADMIN_TOKEN, nodeObject, startTestCluster, type TestCluster } from './fixtures.js';
import { type KubectlSession, startKubectlSession } from './kubectl-session.js';

const NODE_WITH_TYPO = (name: string): string =>
  `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${name}\nspec:\n  unschedulable: true\n  unschedulabel: false\n`;

void describe('unknown fields through kubectl', () => {
  let session: KubectlSession;

  before(async () => {
    session = await startKubectlSession();
  });

  after(async () => {
    await session.close();
  });

  void it('warns about and drops a misspelt node field with --validate=warn', async () => {
    const file = session.manifest('warn.yaml', NODE_WITH_TYPO('typo-warn'));

    const created = await session.kubectl('create', '-f', file, '--validate=warn');
    const read = await session.kubectl('get', 'node', 'typo-warn', '-o', 'json');

    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /Warning: unknown field "spec\.unschedulabel"/);
    const spec = (JSON.parse(read.stdout) as { spec: Record<string, unknown> }).spec;
    assert.equal(spec.unschedulable, true);
    assert.equal('unschedulabel' in spec, false);
  });

  void it("refuses the field under kubectl's default strict validation and stores nothing", async () => {
    const file = session.manifest('strict.yaml', NODE_WITH_TYPO('typo-strict'));

    const created = await session.kubectl('create', '-f', file);

    assert.equal(created.code, 1);
    assert.match(
      created.stderr,
      /Error from server \(BadRequest\).*strict decoding error: unknown field "spec\.unschedulabel"/,
    );
    assert.equal(session.cluster.store.get('nodes', undefined, 'typo-strict'), undefined);
  });

  void it('drops a misspelt pod metadata field silently with --validate=false', async () => {
    const file = session.manifest(
      'pod.yaml',
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  name: typo-pod',
        '  namespace: default',
        '  lables: {app: web}',
        'spec:',
        '  containers: [{name: c, image: busybox}]',
        '',
      ].join('\n'),
    );

    const created = await session.kubectl('create', '-f', file, '--validate=false');

    assert.equal(created.code, 0, created.stderr);
    assert.doesNotMatch(created.stderr, /Warning/);
    const stored = session.cluster.store.get('pods', 'default', 'typo-pod');
    assert.ok(stored);
    assert.equal('lables' in stored.metadata, false);
    assert.equal(stored.metadata.labels, undefined);
  });

  void it('drops an unknown field a merge patch adds, and says the patch changed nothing', async () => {
    session.cluster.store.create('nodes', nodeObject('patched', {}));

    const patched = await session.kubectl(
      'patch',
      'node',
      'patched',
      '--type=merge',
      '-p',
      '{"spec":{"bogus":1}}',
    );

    assert.equal(patched.code, 0, patched.stderr);
    assert.match(patched.stdout, /node\/patched patched \(no change\)/);
    assert.match(patched.stderr, /Warning: unknown field "spec\.bogus"/);
    const stored = session.cluster.store.get('nodes', undefined, 'patched');
    assert.ok(stored);
    assert.equal('bogus' in specOf(stored), false);
  });
});

void describe('unknown fields over raw HTTP', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startTestCluster();
    cluster.store.create('nodes', nodeObject('vmss000000', {}));
  });

  after(async () => {
    await cluster.close();
  });

  function patch(query: string, type: string, body: unknown): Promise<Response> {
    return fetch(`${cluster.url}/api/v1/nodes/vmss000000${query}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': type },
      body: JSON.stringify(body),
    });
  }

  void it('refuses a strict patch that adds an unknown field with 422 on the patched object', async () => {
    const merge = await patch('?fieldValidation=Strict', 'application/merge-patch+json', {
      spec: { bogus: 1 },
    });
    const json = await patch('?fieldValidation=Strict', 'application/json-patch+json', [
      { op: 'add', path: '/spec/other', value: 2 },
    ]);

    assert.equal(merge.status, 422);
    const status = (await merge.json()) as { reason: string; message: string };
    assert.equal(status.reason, 'Invalid');
    assert.match(
      status.message,
      /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec\.bogus"$/,
    );
    assert.equal(json.status, 422);
    assert.match(((await json.json()) as { message: string }).message, /unknown field "spec\.other"/);
    const stored = cluster.store.get('nodes', undefined, 'vmss000000');
    assert.ok(stored);
    assert.equal(specOf(stored).bogus, undefined);
  });

  void it('keeps fields the stored object already had when a client writes it back', async () => {
    const seeded = nodeObject('seeded', {});
    cluster.store.create('nodes', { ...seeded, spec: { ...specOf(seeded), simulatorOnly: true } });

    const response = await fetch(`${cluster.url}/api/v1/nodes/seeded`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { unschedulable: true } }),
    });

    assert.equal(response.status, 200);
    assert.equal(response.headers.get('warning'), null);
    const stored = cluster.store.get('nodes', undefined, 'seeded');
    assert.ok(stored);
    assert.equal(specOf(stored).simulatorOnly, true);
  });

  void it('refuses an unsupported fieldValidation value with 422 naming the accepted ones', async () => {
    const response = await patch('?fieldValidation=Loud', 'application/merge-patch+json', {});

    assert.equal(response.status, 422);
    assert.equal(
      ((await response.json()) as { message: string }).message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });
});
