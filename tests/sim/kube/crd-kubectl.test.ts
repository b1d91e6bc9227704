// The machine's kubectl against the simulated API server's CustomResourceDefinitions: apply a CRD and
// policies, get them with their printer columns, describe, explain, patch status through the
// subresource, and the refusals kubectl users meet (invalid objects, strategic merge patches).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { stringify } from 'yaml';

import { CRD_NAME, policy, poolImagePolicyCrd } from './crd-fixtures.js';
import { type KubectlSession, startKubectlSession } from './kubectl-session.js';

function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

void describe('custom resources with kubectl', () => {
  let session: KubectlSession;

  async function ok(...args: string[]): Promise<string> {
    const result = await session.kubectl(...args);
    assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  }

  /** Cells cut at the header's column starts (kubectl pads columns; an empty cell is blank). */
  function rows(output: string): string[][] {
    const lines = output.replace(/\n$/, '').split('\n');
    const header = lines[0] ?? '';
    const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((match) => match.index);
    return lines.map((line) =>
      starts.map((start, index) => line.slice(start, starts[index + 1] ?? line.length).trim()),
    );
  }

  void before(async () => {
    session = await startKubectlSession({ rbac: false });
    const crd = session.manifest('crd.yaml', stringify(poolImagePolicyCrd()));
    assert.equal(
      await ok('apply', '-f', crd),
      `customresourcedefinition.apiextensions.k8s.io/${CRD_NAME} created\n`,
    );
    await ok('wait', '--for=condition=Established', '--timeout=20s', `crd/${CRD_NAME}`);
    const policies = session.manifest(
      'policies.yaml',
      [policy('pool-a'), policy('pool-b', { pool: 'pool-b', captureMode: 'live', keepGenerations: 5 })]
        .map((object) => stringify(object))
        .join('---\n'),
    );
    assert.equal(
      await ok('apply', '-f', policies),
      'poolimagepolicy.policies.sim.test/pool-a created\npoolimagepolicy.policies.sim.test/pool-b created\n',
    );
    session.cluster.time.advance(90);
  });
  void after(() => session.close());

  void it('lists the CRD with its creation time and the resource in api-resources', async () => {
    assert.deepEqual(rows(await ok('get', 'crd')), [
      ['NAME', 'CREATED AT'],
      [CRD_NAME, '2026-01-15T12:00:00Z'],
    ]);
    assert.deepEqual(rows(await ok('api-resources', '--api-group=policies.sim.test')), [
      ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'],
      ['poolimagepolicies', 'pip', 'policies.sim.test/v1alpha1', 'false', 'PoolImagePolicy'],
    ]);
  });

  void it('prints the printer columns, the status ones once the status subresource is written', async () => {
    assert.deepEqual(rows(await ok('get', 'poolimagepolicies')), [
      ['NAME', 'POOL', 'VERSION', 'FRESH', 'LAST RUN', 'AGE'],
      ['pool-a', 'pool-a', '', '', '', '90s'],
      ['pool-b', 'pool-b', '', '', '', '90s'],
    ]);
    const status = {
      status: {
        currentVersion: '2026.01.15',
        freshnessDays: 2,
        lastRun: { at: timestamp(session.cluster.time.nowMs() - 3 * 3600_000) },
        conditions: [
          { type: 'Fresh', status: 'True', reason: 'UpToDate', message: 'the pool runs the newest image' },
        ],
      },
    };
    assert.equal(
      await ok(
        'patch',
        'pip',
        'pool-a',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify(status),
      ),
      'poolimagepolicy.policies.sim.test/pool-a patched\n',
    );

    assert.deepEqual(rows(await ok('get', 'pip', '-o', 'wide')), [
      ['NAME', 'POOL', 'VERSION', 'FRESHNESS', 'FRESH', 'LAST RUN', 'AGE'],
      ['pool-a', 'pool-a', '2026.01.15', '2', 'True', '3h', '90s'],
      ['pool-b', 'pool-b', '', '', '', '', '90s'],
    ]);
    assert.equal(
      await ok('get', 'pip', 'pool-a', '-o', 'jsonpath={.metadata.generation} {.spec.keepGenerations}'),
      '1 3',
    );
  });

  void it('describes a policy with its defaulted spec, its conditions and its events', async () => {
    await ok(
      'create',
      '-f',
      session.manifest(
        'event.yaml',
        stringify({
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: 'pool-b.1', namespace: 'default' },
          involvedObject: {
            apiVersion: 'policies.sim.test/v1alpha1',
            kind: 'PoolImagePolicy',
            name: 'pool-b',
            uid: await ok('get', 'pip', 'pool-b', '-o', 'jsonpath={.metadata.uid}'),
          },
          reason: 'Paused',
          message: 'the pool is paused by its policy',
          type: 'Normal',
          count: 1,
          firstTimestamp: timestamp(session.cluster.time.nowMs()),
          lastTimestamp: timestamp(session.cluster.time.nowMs()),
          source: { component: 'vmss-prototype' },
        }),
      ),
    );
    const described = await ok('describe', 'pip', 'pool-a');
    const events = await ok('describe', 'poolimagepolicy', 'pool-b');

    assert.match(described, /^Name:\s+pool-a$/m);
    assert.match(described, /^API Version:\s+policies\.sim\.test\/v1alpha1$/m);
    assert.match(described, /^ {2}Capture Mode:\s+offline$/m);
    assert.match(described, /^ {2}Keep Generations:\s+3$/m);
    assert.match(
      described,
      /^ {2}Conditions:\n {4}Message:\s+the pool runs the newest image\n {4}Reason:\s+UpToDate\n {4}Status:\s+True\n {4}Type:\s+Fresh$/m,
    );
    assert.match(
      events,
      /^ {2}Normal {2}Paused {2}\S+ {2}vmss-prototype {2}the pool is paused by its policy$/m,
    );
  });

  void it('explains the kind and its fields from the CRD schema', async () => {
    const explained = await ok('explain', 'poolimagepolicies.spec');

    assert.match(explained, /^KIND:\s+PoolImagePolicy$/m);
    assert.match(explained, /^ {2}captureMode\t<string>\n {2}enum: live, offline$/m);
    assert.match(explained, /^ {2}pool\t<string> -required-\n {4}The pool this policy is for\.$/m);
    assert.match(
      await ok('explain', 'pip'),
      /PoolImagePolicy declares how one node pool keeps its OS image fresh\./,
    );
  });

  void it('refuses an invalid policy with the API server message and changes nothing', async () => {
    const bad = session.manifest(
      'bad.yaml',
      stringify(policy('bad', { pool: 'bad', keepGenerations: 11, captureMode: 'sometimes' })),
    );
    const result = await session.kubectl('apply', '-f', bad);

    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      'The PoolImagePolicy "bad" is invalid: \n' +
        '* spec.captureMode: Unsupported value: "sometimes": supported values: "live", "offline"\n' +
        '* spec.keepGenerations: Invalid value: 11: spec.keepGenerations in body should be less than or equal to 10\n',
    );
    assert.equal((await session.kubectl('get', 'pip', 'bad')).code, 1);
  });

  void it('answers a server dry run without storing and refuses a strategic merge patch', async () => {
    const dry = session.manifest('dry.yaml', stringify(policy('pool-c')));
    assert.equal(
      await ok('apply', '--dry-run=server', '-f', dry),
      'poolimagepolicy.policies.sim.test/pool-c created (server dry run)\n',
    );
    const strategic = await session.kubectl('patch', 'pip', 'pool-a', '-p', '{"spec":{"paused":true}}');
    await ok('patch', 'pip', 'pool-a', '--type=merge', '-p', '{"spec":{"paused":true}}');

    assert.equal((await session.kubectl('get', 'pip', 'pool-c')).code, 1);
    assert.equal(strategic.code, 1);
    assert.match(
      strategic.stderr,
      /application\/strategic-merge-patch\+json is not supported by policies\.sim\.test\/v1alpha1, Kind=PoolImagePolicy/,
    );
    assert.equal(
      await ok('get', 'pip', 'pool-a', '-o', 'jsonpath={.metadata.generation} {.spec.paused}'),
      '2 true',
    );
  });

  void it('applies a changed policy again as a JSON merge patch, as kubectl does for custom resources', async () => {
    // kubectl apply asks the OpenAPI document whether the kind takes a strategic merge patch; a custom
    // resource's PATCH must not offer one, or the second apply is refused with 415.
    const changed = session.manifest(
      'pool-d.yaml',
      stringify(policy('pool-d', { pool: 'pool-d', keepGenerations: 4 })),
    );
    await ok('apply', '-f', changed);
    session.manifest('pool-d.yaml', stringify(policy('pool-d', { pool: 'pool-d', keepGenerations: 6 })));
    assert.equal(await ok('apply', '-f', changed), 'poolimagepolicy.policies.sim.test/pool-d configured\n');
    assert.equal(await ok('get', 'pip', 'pool-d', '-o', 'jsonpath={.spec.keepGenerations}'), '6');
    await ok('delete', 'pip', 'pool-d');
  });

  void it('refuses an invalid CRD naming each problem, and deletes the policies with their CRD', async () => {
    const broken = poolImagePolicyCrd();
    broken.metadata.name = 'wrong.policies.sim.test';
    (broken.spec as { versions: { schema: unknown }[] }).versions[0]!.schema = {
      openAPIV3Schema: { type: 'object', properties: { spec: { properties: { pool: { type: 'string' } } } } },
    };
    const refused = await session.kubectl('apply', '-f', session.manifest('broken.yaml', stringify(broken)));
    await ok('delete', 'crd', CRD_NAME);
    const gone = await session.kubectl('get', 'pip');

    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      'The CustomResourceDefinition "wrong.policies.sim.test" is invalid: \n' +
        '* metadata.name: Invalid value: "wrong.policies.sim.test": must be spec.names.plural+"."+spec.group\n' +
        '* spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields\n',
    );
    assert.equal(session.cluster.store.list('poolimagepolicies.policies.sim.test').length, 0);
    assert.equal(gone.code, 1);
  });
});
