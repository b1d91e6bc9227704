/**
 * A pool's PoolImagePolicy end to end (docs/pool-policy.md): the machine's kubectl applies the product's
 * CRD and a policy to the simulated API server, the product (least privilege, the manifests of
 * infra/kubernetes enforced) refreshes the pool, and `kubectl get poolimagepolicies` and `kubectl
 * describe` show what the app wrote: version, freshness, last run, conditions. Then the retirement
 * timer's ticks act on the spec: `retire` retires the node of the first version (a scale-out's: the first
 * refresh's canary ran in a canary scale set of its own, deleted after its verdict), `rollbackTo`
 * rolls back to it, each once and recorded in the status; `paused` makes the timer's cluster run skip the
 * pool; an invalid spec is refused with a condition and an Event and nothing starts. A pool without an
 * object refreshes as before, and nothing is written about it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { stringify } from 'yaml';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { ClusterRefreshResult, PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import type { RetireClusterResult } from '../../shared/application/retirement-contracts.js';
import { IMAGE_VERSION_LABEL } from '../../shared/domain/generations.js';
import type { Harness } from './harness.js';
import { nodeOf, POOL1, POOL2, scaleOutOne, startHarness } from './harness.js';

const CLUSTER = 'prod';
const CRD = fileURLToPath(new URL('../../../infra/kubernetes/pool-image-policy.crd.yaml', import.meta.url));

let harness: Harness;
let work: string;
let ticks = 0;

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      ['--kubeconfig', harness.sim.running.kubeconfigPath, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
          stdout,
          stderr,
        }),
    );
  });
}

async function ok(...args: string[]): Promise<string> {
  const result = await kubectl(...args);
  assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

let created = false;

/**
 * The pool's policy with `spec`: created with `kubectl apply -f`, then its spec replaced with a JSON
 * patch (`kubectl patch --type=json`), as an operator changes one.
 */
async function applyPolicy(spec: Record<string, unknown>): Promise<string> {
  if (created) {
    return ok(
      'patch',
      'poolimagepolicy',
      POOL2,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec', value: spec }]),
    );
  }
  const file = join(work, 'policy.yaml');
  await writeFile(
    file,
    stringify({
      apiVersion: 'vmss-prototype.io/v1alpha1',
      kind: 'PoolImagePolicy',
      metadata: { name: POOL2 },
      spec,
    }),
  );
  created = true;
  return ok('apply', '-f', file);
}

/** Cells of kubectl's table output, cut at the header's column starts. */
function rows(output: string): Record<string, string>[] {
  const lines = output.replace(/\n$/, '').split('\n');
  const header = lines[0] ?? '';
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((match) => ({ name: match[0], at: match.index }));
  return lines
    .slice(1)
    .map((line) =>
      Object.fromEntries(
        starts.map((start, index) => [
          start.name,
          line.slice(start.at, starts[index + 1]?.at ?? line.length).trim(),
        ]),
      ),
    );
}

interface PolicyStatus {
  readonly currentVersion?: string;
  readonly state?: string;
  readonly lastRun?: { readonly kind?: string; readonly outcome?: string };
  readonly actions?: Record<
    string,
    { readonly target: string; readonly state: string; readonly message?: string }
  >;
  readonly conditions?: {
    readonly type: string;
    readonly status: string;
    readonly reason: string;
    readonly message: string;
  }[];
}

async function policyStatus(): Promise<PolicyStatus> {
  return (
    (JSON.parse(await ok('get', 'poolimagepolicy', POOL2, '-o', 'json')) as { status?: PolicyStatus })
      .status ?? {}
  );
}

async function refresh(pool: string, node?: string): Promise<PoolRefreshResult> {
  const status = await harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: CLUSTER, pool, trigger: 'e2e', ...(node === undefined ? {} : { node }) },
    `refresh:${CLUSTER}:${pool}`,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as PoolRefreshResult;
}

/** One tick of the retirement timer (retirement-schedule.timer.ts starts exactly this). */
async function tick(): Promise<RetireClusterResult> {
  ticks += 1;
  const status = await harness.run(
    ORCHESTRATION.retireCluster,
    { cluster: CLUSTER, trigger: 'retirement-timer', runSeed: `tick-${ticks}` },
    `retire:${CLUSTER}`,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as RetireClusterResult;
}

function nodesOf(generation: string): string[] {
  return harness.sim.running.world
    .cluster(CLUSTER)
    .world.store.list('nodes')
    .filter((node) => node.metadata.labels?.[IMAGE_VERSION_LABEL] === generation)
    .map((node) => node.metadata.name);
}

void describe('PoolImagePolicy with kubectl and the product on the simulator', { concurrency: false }, () => {
  let first: string;
  let second: string;

  void before(async () => {
    work = await mkdtemp(join(tmpdir(), 'vmssp-policy-'));
    harness = await startHarness({
      clock: 'manual',
      settings: (cluster) => {
        cluster.capture = { ...cluster.capture, mode: 'drain-and-stop' };
        // A passed canary in the pool stays as a node of its version (`keep`): generations to retire.
        cluster['promotion'] = { canary: { afterPass: 'keep', soak: '1m', deadline: '20m' } };
      },
    });
    assert.match(await ok('apply', '-f', CRD), /poolimagepolicies\.vmss-prototype\.io created/);
    await ok(
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/poolimagepolicies.vmss-prototype.io',
    );
  });
  void after(async () => {
    await harness.stop();
    await rm(work, { recursive: true, force: true });
  });

  void it('kubectl apply, a refresh, then kubectl get and describe show what the app wrote', async () => {
    assert.match(
      await applyPolicy({ generations: { maxGenerationsBehind: 1 } }),
      /poolimagepolicy\.vmss-prototype\.io\/k8s-pool2-12345678-vmss created/,
    );

    const result = await refresh(POOL2);
    assert.equal(result.outcome, 'refreshed', result.reason);
    first = result.version?.versionName ?? '';

    const table = await ok('get', 'poolimagepolicies');
    process.stdout.write(`# kubectl get poolimagepolicies\n${table.replace(/^/gm, '#   ')}\n`);
    const [row] = rows(table);
    assert.equal(row?.['NAME'], POOL2);
    assert.equal(row?.['POOL'], `${CLUSTER}/${POOL2}`);
    assert.equal(row?.['VERSION'], first);
    assert.equal(row?.['FRESHNESS'], 'fresh');
    assert.match(row?.['PATCHED'] ?? '', /^\d+[smhd]/);
    assert.equal(row?.['LAST RUN'], 'refreshed');
    assert.equal(row?.['STATE'], 'Fresh');

    const described = await ok('describe', 'poolimagepolicy', POOL2);
    process.stdout.write(`# kubectl describe poolimagepolicy\n${described.replace(/^/gm, '#   ')}\n`);
    assert.match(described, /Conditions:/);
    for (const type of ['Valid', 'Fresh', 'Refreshing', 'Held', 'Degraded']) {
      assert.match(described, new RegExp(`Type:\\s+${type}`), type);
    }
    const status = await policyStatus();
    assert.equal(status.conditions?.find((c) => c.type === 'Valid')?.status, 'True');
    assert.match(
      status.conditions?.find((c) => c.type === 'Valid')?.message ?? '',
      /overrides spec\.generations\.maxGenerationsBehind/,
    );
    assert.equal(status.lastRun?.kind, 'refresh');
  });

  void it('a pool without an object refreshes as before, and nothing is written about it', async () => {
    const result = await refresh(POOL1);
    assert.equal(result.outcome, 'refreshed', result.reason);
    assert.equal((await kubectl('get', 'poolimagepolicy', POOL1)).code, 1, 'no object for it');
  });

  void it('retire: the next tick retires the first version’s node, once, recorded in status', async () => {
    // The first refresh's canary ran in a canary scale set of its own and is gone (docs/design.md#canary):
    // the first version's node is one a scale-out boots from the published model.
    const scaled = scaleOutOne(harness, POOL2);
    assert.ok(scaled.joined, `${scaled.nodeName} joined`);
    const result = await refresh(POOL2, nodeOf(POOL2, 2));
    assert.equal(result.outcome, 'refreshed', result.reason);
    second = result.version?.versionName ?? '';
    const canaries = nodesOf(first);
    assert.deepEqual(canaries, [scaled.nodeName], `the node of ${first}`);
    await applyPolicy({ generations: { maxGenerationsBehind: 1 }, retire: { generation: first } });

    const acted = await tick();

    assert.deepEqual(
      acted.policyActions?.map((action) => [action.kind, action.target, action.state]),
      [['retire', first, 'Done']],
      JSON.stringify(acted.policyActions),
    );
    assert.deepEqual(nodesOf(first), [], `${canaries.join(', ')} retired`);
    const status = await policyStatus();
    assert.equal(status.actions?.['retire']?.state, 'Done');
    assert.match(status.actions?.['retire']?.message ?? '', /retired /);
    assert.equal(status.lastRun?.kind, 'retire');
    assert.equal((await tick()).policyActions, undefined, 'not again');
  });

  void it('rollbackTo: the next tick rolls back, once, recorded in status and as an Event', async () => {
    await applyPolicy({ rollbackTo: first });

    const acted = await tick();

    assert.deepEqual(
      acted.policyActions?.map((action) => [action.kind, action.target, action.state]),
      [['rollback', first, 'Done']],
      JSON.stringify(acted.policyActions),
    );
    const [row] = rows(await ok('get', 'pip'));
    assert.equal(row?.['VERSION'], first, `rolled back from ${second}`);
    assert.equal(row?.['LAST RUN'], 'rolled-back');
    const status = await policyStatus();
    assert.equal(status.actions?.['rollback']?.state, 'Done');
    assert.equal(status.actions?.['retire'], undefined, 'the retire field left the spec: forgotten');
    assert.match(await ok('describe', 'pip', POOL2), /Normal\s+RolledBack/);
    assert.equal((await tick()).policyActions, undefined, 'not again');
  });

  void it('paused: the timer’s cluster run skips the pool, saying why', async () => {
    await applyPolicy({ paused: true });

    const status = await harness.run(
      ORCHESTRATION.refreshCluster,
      { cluster: CLUSTER, trigger: 'timer', runSeed: 'paused' },
      `refresh:${CLUSTER}`,
    );

    assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
    const pool = (status.output as ClusterRefreshResult).pools.find((entry) => entry.pool === POOL2);
    assert.equal(pool?.outcome, 'skipped');
    assert.match(
      pool?.reason ?? '',
      /paused by PoolImagePolicy k8s-pool2-12345678-vmss \(spec\.paused: true\)/,
    );
    await tick();
    assert.equal((await policyStatus()).state, 'Paused');
  });

  void it('an invalid spec is refused: a condition and an Event name the field, nothing starts', async () => {
    // The API server accepts it (durations are strings); the product refuses it.
    await applyPolicy({ canary: { soak: '1h', deadline: '30m' } });

    await tick();
    const result = await refresh(POOL2);

    assert.equal(result.outcome, 'refused');
    assert.match(result.reason, /spec\.canary\.deadline/);
    assert.equal(result.version, undefined, 'nothing built');
    assert.equal(result.runId, undefined, 'the pool was never held');
    const [row] = rows(await ok('get', 'pip'));
    assert.equal(row?.['STATE'], 'Invalid');
    const valid = (await policyStatus()).conditions?.find((c) => c.type === 'Valid');
    assert.equal(valid?.status, 'False');
    assert.equal(valid?.reason, 'InvalidSpec');
    assert.match(valid?.message ?? '', /spec\.canary\.deadline: .*lengthen spec\.canary\.deadline/);
    const events = await ok(
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      `involvedObject.name=${POOL2},reason=InvalidSpec`,
      '-o',
      'jsonpath={range .items[*]}{.type} {.reason}{"\\n"}{end}',
    );
    assert.equal(events, 'Warning InvalidSpec\n');
    assert.match(await ok('describe', 'pip', POOL2), /Warning\s+InvalidSpec/);

    // And the API server itself refuses what its schema forbids.
    const refused = await kubectl(
      'patch',
      'pip',
      POOL2,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { canary: { instances: 50 } } }),
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /spec\.canary\.instances/);
  });
});
