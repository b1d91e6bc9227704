// `vmss-prototype doctor` and the permission preflight of `refresh`, as an operator runs them: the built
// CLI in a child process against a simulator that enforces permission files with one Azure action and
// one Kubernetes verb removed (--sim-connect), and against the product's own permissions (--sim).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments, stringify } from 'yaml';

import type { DoctorResult } from '../../cli/doctor.js';
import { SAMPLE_SCENARIO } from '../../cli/session.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { startSimulatorSession } from '../../cli/sim-session.js';
import { connectionOf } from '../../sim/connection.js';
import { functionAppSettingsFor } from '../../sim/function-app-settings.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = CLI_ENTRY;
const ACTIONS_FILE = join(ROOT, 'infra', 'azure', 'compute-actions.json');
const RBAC_DIR = join(ROOT, 'infra', 'kubernetes');
const REMOVED_ACTION = 'Microsoft.Compute/snapshots/write';
const STACK_FRAME = /^\s+at .+[:(]/m;

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: work, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
          stdout,
          stderr,
        });
      },
    );
  });
}

let work: string;
let sim: SimulatorSession;
let connectionFile: string;

/** infra/ with one Azure action and one Kubernetes verb (create pods/eviction) taken away. */
async function reducedPermissions(): Promise<{ actionsFile: string; rbacDir: string }> {
  const actions = (JSON.parse(await readFile(ACTIONS_FILE, 'utf8')) as { action: string }[]).filter(
    (entry) => entry.action !== REMOVED_ACTION,
  );
  const actionsFile = join(work, 'compute-actions.json');
  await writeFile(actionsFile, JSON.stringify(actions));
  const rbacDir = join(work, 'kubernetes');
  await rm(rbacDir, { recursive: true, force: true });
  await mkdir(rbacDir);
  for (const file of await readdir(RBAC_DIR)) {
    if (!/\.ya?ml$/.test(file)) continue;
    const documents = parseAllDocuments(await readFile(join(RBAC_DIR, file), 'utf8')).map(
      (document) => document.toJS() as { kind?: string; rules?: { resources: string[]; verbs: string[] }[] },
    );
    for (const document of documents) {
      if (document.kind !== 'ClusterRole') continue;
      document.rules = (document.rules ?? []).filter((rule) => !rule.resources.includes('pods/eviction'));
    }
    await writeFile(join(rbacDir, file), documents.map((document) => stringify(document)).join('---\n'));
  }
  return { actionsFile, rbacDir };
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-doctor-'));
  const reduced = await reducedPermissions();
  sim = await startSimulatorSession({
    scenarioPath: SAMPLE_SCENARIO,
    armActionsFile: reduced.actionsFile,
    rbacDir: reduced.rbacDir,
  });
  connectionFile = join(work, 'connection.json');
  await writeFile(connectionFile, JSON.stringify(connectionOf(sim.running)));
});

after(async () => {
  await sim.stop();
  await rm(work, { recursive: true, force: true });
});

/** A 127.0.0.1 port nothing listens on: bound by the system, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

void describe('vmss-prototype doctor', { concurrency: false }, () => {
  void it('names an API server it cannot reach and the network checks to make, exit 1', async () => {
    const settings = functionAppSettingsFor(connectionOf(sim.running));
    const unreachable = `https://127.0.0.1:${await closedPort()}`;
    const clusters = (
      JSON.parse(settings.Values['VMSSP_CLUSTERS'] ?? '[]') as { apiServer: { url: string } }[]
    ).map((cluster) => ({ ...cluster, apiServer: { ...cluster.apiServer, url: unreachable } }));
    const file = join(work, 'unreachable.settings.json');
    await writeFile(
      file,
      JSON.stringify({
        ...settings,
        Values: { ...settings.Values, VMSSP_CLUSTERS: JSON.stringify(clusters) },
      }),
    );
    const run = await cli(['doctor', '--json', `--settings=${file}`, `--state-dir=${join(work, 'u')}`]);
    assert.equal(run.code, 1, run.stderr);
    const result = JSON.parse(run.stdout) as DoctorResult;
    const kubernetes = result.checks.filter((check) => check.check === 'kubernetes');
    assert.ok(kubernetes.length > 0, run.stdout);
    for (const check of kubernetes) {
      assert.equal(check.result, 'error');
      assert.equal(check.target, unreachable);
      assert.ok(
        check.detail.startsWith(`cannot reach the API server ${unreachable} (ECONNREFUSED)`),
        check.detail,
      );
      assert.match(check.fix ?? '', /^check \(1\) the server: something must listen on 127\.0\.0\.1:\d+/);
      assert.match(check.fix ?? '', /virtual network integration .*NSG rule .*authorized IP ranges: .*DNS: /);
      assert.match(check.fix ?? '', /see docs\/private-clusters\.md$/);
    }
    const text = await cli(['doctor', `--settings=${file}`, `--state-dir=${join(work, 'v')}`]);
    assert.equal(text.code, 1, text.stderr);
    assert.doesNotMatch(text.stderr, STACK_FRAME);
    assert.match(
      text.stdout.replaceAll(/\s+/g, ' '),
      new RegExp(`cannot reach the API server ${unreachable.replaceAll('.', '\\.')}`),
    );
  });

  void it('with one Azure action and one Kubernetes verb removed names both, exit 1', async () => {
    const run = await cli(['doctor', `--sim-connect=${connectionFile}`, `--state-dir=${join(work, 'a')}`]);
    assert.equal(run.code, 1, run.stderr);
    assert.doesNotMatch(run.stderr, STACK_FRAME);
    const text = run.stdout.replaceAll(/\s+/g, ' ');
    assert.match(text, /kubernetes prod \S+ missing/);
    assert.match(text, /- create pods\/eviction \(cluster-wide\)/);
    assert.match(
      text,
      /fix: apply the product's RBAC \(kubectl apply -k infra\/kubernetes: ClusterRole vmss-prototype\)/,
    );
    assert.match(text, /azure-role prod resource group rg-k8s-prod .*missing/);
    assert.match(text, new RegExp(`- ${REMOVED_ACTION.replaceAll('/', '\\/')}`));
    assert.match(text, /something is missing/);

    const json = await cli([
      'doctor',
      '--json',
      `--sim-connect=${connectionFile}`,
      `--state-dir=${join(work, 'b')}`,
    ]);
    assert.equal(json.code, 1, json.stderr);
    const result = JSON.parse(json.stdout) as DoctorResult;
    assert.equal(result.ok, false);
    const missing = result.checks.filter((check) => check.result === 'missing');
    assert.deepEqual(
      missing.map((check) => [check.check, check.missing]),
      [
        ['kubernetes', ['create pods/eviction (cluster-wide)']],
        ['azure-role', [REMOVED_ACTION]],
      ],
    );
    assert.deepEqual(
      result.checks.filter((check) => check.result === 'error'),
      [],
    );
  });

  void it('refresh runs the same checks first: refused, exit 1, nothing cordoned', async () => {
    const before = sim.running.log.snapshot().entries;
    const run = await cli(['refresh', `--sim-connect=${connectionFile}`, `--state-dir=${join(work, 'c')}`]);
    assert.equal(run.code, 1, run.stderr);
    assert.doesNotMatch(run.stderr, STACK_FRAME);
    assert.match(run.stderr, /refresh not started, nothing was changed: /);
    assert.match(run.stderr, /create pods\/eviction \(cluster-wide\)/);
    assert.match(run.stderr, new RegExp(REMOVED_ACTION.replaceAll('/', '\\/')));
    assert.match(run.stderr, /vmss-prototype doctor/);
    // Only reads were sent: no node patched, no Azure write.
    const writes = sim.running.log
      .snapshot()
      .entries.filter(
        (entry) => !before.some((old) => old.operation === entry.operation && old.count === entry.count),
      )
      .filter((entry) => entry.operation === 'nodes:patch' || /\/(write|action)$/.test(entry.operation));
    assert.deepEqual(writes, []);
  });

  void it("with the product's own permissions (--sim) every check passes, exit 0", async () => {
    const run = await cli(['doctor', '--sim', '--json', `--state-dir=${join(work, 'd')}`]);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as DoctorResult;
    assert.equal(result.ok, true);
    assert.deepEqual(
      [...new Set(result.checks.map((check) => check.check))],
      ['settings', 'cluster-secrets', 'kubernetes', 'azure-role', 'pool-policies'],
    );
  });
});
