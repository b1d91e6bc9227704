// `vmss-prototype doctor` and the permission preflight of `refresh`, as an operator runs them: the built
// CLI in a child process against a simulator that enforces permission files with one Azure action and
// one Kubernetes verb removed (--sim-connect), and against the product's own permissions (--sim).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
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

void describe('vmss-prototype doctor', { concurrency: false }, () => {
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
      ['settings', 'cluster-secrets', 'kubernetes', 'azure-role'],
    );
  });
});
