// `vmss-prototype doctor` for a CAPZ cluster, as an operator runs it: the built CLI in a child process
// against the simulator's capz scenario, its management cluster enforcing infra/kubernetes/management/
// with one verb removed (--sim-connect), and with the product's own permissions (--sim).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments, stringify } from 'yaml';

import type { DoctorResult } from '../../cli/doctor.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { startSimulatorSession } from '../../cli/sim-session.js';
import { connectionOf } from '../../sim/connection.js';
import { CAPZ_SCENARIO } from '../../sim/index.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = CLI_ENTRY;
const RBAC_DIR = join(ROOT, 'infra', 'kubernetes');

function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
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

/** infra/kubernetes/ with the management Role's patch of azuremachinepools taken away. */
async function reducedManagementRbac(): Promise<string> {
  const dir = join(work, 'kubernetes');
  await cp(RBAC_DIR, dir, { recursive: true });
  const file = join(dir, 'management', 'role.yaml');
  const documents = parseAllDocuments(await readFile(file, 'utf8')).map(
    (document) => document.toJS() as { rules?: { resources: string[]; verbs: string[] }[] },
  );
  for (const document of documents) {
    for (const rule of document.rules ?? []) {
      if (rule.resources.includes('azuremachinepools'))
        rule.verbs = rule.verbs.filter((verb) => verb !== 'patch');
    }
  }
  await writeFile(file, documents.map((document) => stringify(document)).join('---\n'));
  return dir;
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-doctor-capz-'));
  sim = await startSimulatorSession({ scenarioPath: CAPZ_SCENARIO, rbacDir: await reducedManagementRbac() });
  connectionFile = join(work, 'connection.json');
  await writeFile(connectionFile, JSON.stringify(connectionOf(sim.running)));
});

after(async () => {
  await sim.stop();
  await rm(work, { recursive: true, force: true });
});

void describe('vmss-prototype doctor, CAPZ cluster', { concurrency: false }, () => {
  void it('names the permission the management cluster lacks and the fix, exit 1', async () => {
    const run = await cli([
      'doctor',
      '--json',
      `--sim-connect=${connectionFile}`,
      `--state-dir=${join(work, 'a')}`,
    ]);

    assert.equal(run.code, 1, run.stderr);
    const result = JSON.parse(run.stdout) as DoctorResult;
    const management = result.checks.filter((check) => check.check === 'management-cluster');
    assert.deepEqual(
      management.map((check) => check.result),
      ['ok', 'missing'],
    );
    assert.deepEqual(management[1]?.missing, [
      'patch azuremachinepools.infrastructure.cluster.x-k8s.io in namespace default',
    ]);
    assert.match(management[1]?.fix ?? '', /kubectl apply -k infra\/kubernetes\/management/);
    assert.deepEqual(
      result.checks.filter((check) => check.check !== 'management-cluster' && check.result !== 'ok'),
      [],
    );
  });

  void it("with the product's own permissions (--sim) every check passes, exit 0", async () => {
    const run = await cli(['doctor', `--sim=${CAPZ_SCENARIO}`, '--json', `--state-dir=${join(work, 'b')}`]);

    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as DoctorResult;
    assert.equal(result.ok, true);
    assert.deepEqual(
      [...new Set(result.checks.map((check) => check.check))],
      ['settings', 'cluster-secrets', 'kubernetes', 'management-cluster', 'azure-role', 'pool-policies'],
    );
  });
});
