// The built `vmss-prototype` command in a child process, as an operator runs it: help per command,
// --version, --opt=value, exit codes, progress lines and NDJSON, and no stack trace for an expected
// failure. Against the simulator (--sim) where a cluster is needed; one real-Azure path with no
// credential, kept on 127.0.0.1 by a stand-in managed identity endpoint.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import type { ProgressEvent } from '../../cli/progress.js';
import { SAMPLE_SCENARIO } from '../../cli/session.js';
import { connectionOf } from '../../sim/connection.js';
import { startSimulator } from '../../sim/index.js';
import { CLI_ENTRY, COMPILED_CLI } from '../builders/cli-entry.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const POOL1 = 'k8s-pool1-12345678-vmss';
const POOL2_NODE = 'k8s-pool2-12345678-vmss000001';
const AKS_POOL = 'aks-nodepool1-12345678-vmss';
/** A stack frame line: what an expected failure must never print. */
const STACK_FRAME = /^\s+at .+[:(]/m;

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let work: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-cli-'));
});

after(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Runs the CLI: its bundle when current (builders/cli-entry.ts), or the compiled modules when asked. */
function cli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  entry: string = CLI_ENTRY,
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [entry, ...args],
      { cwd: work, timeout: 180_000, maxBuffer: 16 * 1024 * 1024, env },
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

/** Table cells wrap onto continuation lines: read them as one line. */
function oneLine(text: string): string {
  return text.replaceAll(/\s+/g, ' ');
}

function stateDir(name: string): string {
  return `--state-dir=${join(work, name)}`;
}

void describe('vmss-prototype: help and version', () => {
  void it('each command has its own help, on stdout, exit 0', async () => {
    const texts: string[] = [];
    for (const command of ['status', 'plan', 'refresh', 'doctor']) {
      const run = await cli([command, '--help']);
      assert.equal(run.code, 0);
      assert.equal(run.stderr, '');
      assert.match(run.stdout, new RegExp(`^usage: vmss-prototype ${command}\\b`));
      texts.push(run.stdout);
    }
    assert.equal(new Set(texts).size, 4);
    const overview = await cli(['--help']);
    assert.equal(overview.code, 0);
    assert.match(overview.stdout, /^vmss-prototype: keeps the OS image/);
  });

  void it('--version prints the package version', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const run = await cli(['--version']);
    assert.deepEqual(run, { code: 0, stdout: `vmss-prototype ${manifest.version}\n`, stderr: '' });
  });

  void it('--version and --help load no SDK and no zod (start-up is the small modules only)', async () => {
    // Records every file module the command resolves (Node's synchronous resolve hook), as the bundle
    // test does: the settings schema (zod) and the clients load only for a command that runs.
    const recorder = join(work, 'resolve-recorder.mjs');
    await writeFile(
      recorder,
      `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on('exit', () => appendFileSync(process.env.VMSSP_TEST_RESOLVED, [...seen].join('\\n') + '\\n'));
`,
    );
    for (const args of [['--version'], ['--help'], ['refresh', '--help']]) {
      const resolvedFile = join(work, `resolved-${args.join('')}.txt`);
      const run = await cli(
        args,
        {
          ...process.env,
          NODE_OPTIONS: `--import=${pathToFileURL(recorder).href}`,
          VMSSP_TEST_RESOLVED: resolvedFile,
        },
        COMPILED_CLI,
      );
      assert.equal(run.code, 0, run.stderr);
      const resolved = (await readFile(resolvedFile, 'utf8')).split('\n').filter(Boolean);
      assert.ok(
        resolved.some((url) => url.endsWith('/dist/cli/main.js')),
        'the recorder saw the CLI',
      );
      const heavy = resolved.filter((url) =>
        /\/node_modules\/(zod|@azure|@kubernetes|durable-functions)\/|\/shared\/config\/settings\.js$/.test(
          url,
        ),
      );
      assert.deepEqual(heavy, [], `${args.join(' ')} loaded them`);
    }
  });
});

void describe('vmss-prototype: usage errors exit 2 and start nothing', () => {
  const cases: readonly (readonly [string[], RegExp])[] = [
    [
      ['plan', '--pol=x'],
      /unknown option "--pol" for plan \(did you mean --pool\?\)\n\(see vmss-prototype plan --help\)/,
    ],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['refresh', '--node=n1'], /--node needs --pool/],
  ];
  for (const [args, message] of cases) {
    void it(args.join(' '), async () => {
      const run = await cli(args);
      assert.equal(run.code, 2);
      assert.equal(run.stdout, '');
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, STACK_FRAME);
    });
  }

  void it('an unknown pool, naming the pools there are', async () => {
    const run = await cli(['plan', '--sim', '--pool', 'nosuch', stateDir('unknown-pool')]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`--pool nosuch: cluster prod has no such pool; its pools are .*${POOL1}`),
    );
    assert.equal(run.stdout, '');
  });

  void it('--resume of a run the state directory does not hold', async () => {
    const run = await cli(['refresh', '--sim', '--resume=nosuch', stateDir('resume')]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--resume nosuch: no run with this id in .*resume/);
    assert.doesNotMatch(run.stderr, STACK_FRAME);
  });

  void it('a bad scenario file: its problems, no stack trace', async () => {
    const scenario = join(work, 'bad.yaml');
    await writeFile(scenario, 'clusters: [\n  - name: x\n');
    const run = await cli(['plan', '--sim', scenario, stateDir('bad-scenario')]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /^vmss-prototype: reading scenario .*bad\.yaml/);
    assert.doesNotMatch(run.stderr, STACK_FRAME);
    const missing = await cli(['plan', `--sim=${join(work, 'missing.yaml')}`, stateDir('bad-scenario')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /reading scenario .*missing\.yaml: cannot read the file/);
    assert.doesNotMatch(missing.stderr, STACK_FRAME);
  });

  void it('invalid settings: every problem, no stack trace', async () => {
    const file = join(work, 'bad.settings.json');
    await writeFile(
      file,
      JSON.stringify({ Values: { VMSSP_CLUSTERS: '[{"name":"Prod"}]', VMSSP_SCHEDUL: 'x' } }),
    );
    const run = await cli(['status', `--settings=${file}`, stateDir('bad-settings')]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /loading settings: \d+ problems/);
    assert.match(run.stderr, /VMSSP_SCHEDUL.*did you mean VMSSP_SCHEDULE/);
    assert.doesNotMatch(run.stderr, STACK_FRAME);
  });
});

void describe('vmss-prototype against the simulator', () => {
  void it('plan --pool=<pool>: the plan on stdout, timed progress on stderr, exit 0', async () => {
    const run = await cli(['plan', '--sim', `--pool=${POOL1}`, stateDir('plan')]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^CLUSTER +POOL +OUTCOME`));
    assert.match(run.stdout, new RegExp(`prod +${POOL1} +planned`));
    // How the donor would be captured: the sample scenario sets capture.mode to drain-and-stop.
    assert.match(run.stdout, /^CLUSTER .* DONOR +CAPTURE /);
    assert.match(run.stdout, new RegExp(`${POOL1}000001 +drain-and-stop `));
    assert.match(run.stdout, /candidate \(ready for \d+d\d+h/);
    // The reason wraps onto continuation lines (output to a file is fitted to 120 columns), never cut.
    assert.ok(run.stdout.split('\n').length > 6, run.stdout);
    assert.match(
      run.stdout.replaceAll(/\s+/g, ''),
      /isReadylongest\(\d+d[\dhms]*,lastpatched[\d-]+T[\d:.]+Z\)among2candidate\(s\)inrg-k8s-prod\/k8s-pool1-12345678-vmss/,
    );
    assert.doesNotMatch(run.stdout, /…/);
    const progress = run.stderr.trimEnd().split('\n');
    assert.ok(progress.length >= 2, run.stderr);
    for (const line of progress) {
      assert.match(line, /^\d\d:\d\d:\d\dZ {2}\+(\d+[dhms])+ {2}plan:prod:k8s-pool1-12345678-vmss:\d+: /);
    }
    assert.match(progress.at(-1) ?? '', /: completed \(planned: /);
  });

  void it('--json: the result as JSON on stdout, progress as one JSON event per line on stderr', async () => {
    const run = await cli(['plan', '--sim', '--json', stateDir('json')]);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { kind: string; clusters: { pools: { pool: string }[] }[] };
    assert.equal(result.kind, 'plan');
    assert.ok(result.clusters[0]?.pools.some((pool) => pool.pool === POOL1));
    const captures = (JSON.parse(run.stdout) as { captures?: Record<string, unknown>[] }).captures ?? [];
    assert.deepEqual(
      captures.find((capture) => capture['pool'] === POOL1),
      {
        cluster: 'prod',
        pool: POOL1,
        mode: 'drain-and-stop',
        setting: 'drain-and-stop',
        fellBackFromLive: false,
        scrubbed: 'donor',
        reason: 'capture.mode is drain-and-stop',
      },
    );
    const events = run.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as ProgressEvent);
    assert.ok(events.length >= 2);
    for (const event of events) {
      assert.equal(event.event, 'progress');
      assert.ok(Number.isFinite(Date.parse(event.time)));
      assert.equal(typeof event.elapsedSeconds, 'number');
      assert.match(event.instanceId, /^plan:prod:/);
    }
    assert.deepEqual(events.map((event) => event.runtimeStatus).at(-1), 'Completed');
  });

  void it('a named node outside the pool is refused: exit 1', async () => {
    const run = await cli(['refresh', '--sim', '--pool', POOL1, '--node', POOL2_NODE, stateDir('outside')]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      oneLine(run.stdout),
      new RegExp(`requested node ${POOL2_NODE} is not a member of this pool`),
    );
  });

  void it('a named pool that is refused: exit 1; the same pool refused in auto mode: exit 0', async () => {
    const named = await cli(['plan', '--sim', `--pool=${AKS_POOL}`, stateDir('refused')]);
    assert.equal(named.code, 1, named.stderr);
    assert.match(named.stdout, new RegExp(`${AKS_POOL} +refused`));
    const auto = await cli(['plan', '--sim', stateDir('refused-auto')]);
    assert.equal(auto.code, 0, auto.stderr);
    assert.match(auto.stdout, new RegExp(`${AKS_POOL} +refused`));
  });

  void it('a stopped simulator (--sim-connect): what to do, exit 1, no stack trace', async () => {
    const outDir = join(work, 'sim');
    await mkdir(outDir, { recursive: true });
    const simulator = await startSimulator({ scenario: SAMPLE_SCENARIO, outDir, clock: 'manual' });
    const connectionFile = join(work, 'connection.json');
    await writeFile(connectionFile, JSON.stringify(connectionOf(simulator)));
    await simulator.stop();
    const run = await cli(['status', `--sim-connect=${connectionFile}`, stateDir('stopped')]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /the simulator at https:\/\/127\.0\.0\.1:\d+ does not answer \(.*ECONNREFUSED.*\): start it with `npm run sim`/,
    );
    assert.doesNotMatch(run.stderr, STACK_FRAME);
  });
});

void describe('vmss-prototype against Azure without a credential', () => {
  void it('stops before any run with the fix first, exit 1', async () => {
    // A managed identity endpoint that knows no identity, as on a VM without one, so that no request
    // leaves 127.0.0.1; no az, azd or pwsh on PATH; no AZURE_* variables.
    const requests: string[] = [];
    const imds = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'invalid_request', error_description: 'Identity not found' }));
    });
    await new Promise<void>((resolve) => imds.listen(0, '127.0.0.1', resolve));
    try {
      const emptyBin = join(work, 'empty-bin');
      await mkdir(emptyBin, { recursive: true });
      const settings = join(work, 'azure.settings.json');
      const cluster = {
        name: 'prod-weu',
        subscriptionId: '11111111-2222-3333-4444-555555555555',
        resourceGroup: 'k8s-prod-weu',
        apiServer: {
          url: 'https://k8s-prod-weu.example.com:6443',
          caCertificate: { keyVaultSecretUri: 'https://kv-vmssp-test.vault.azure.net/secrets/prod-weu-ca' },
          auth: {
            serviceAccountToken: {
              keyVaultSecretUri: 'https://kv-vmssp-test.vault.azure.net/secrets/prod-weu-token',
            },
          },
        },
        pools: [{ name: 'agents', scaleSet: 'k8s-agents-vmss' }],
        capture: { prepImage: `busybox:1.37@sha256:${'0'.repeat(64)}` },
      };
      await writeFile(settings, JSON.stringify({ Values: { VMSSP_CLUSTERS: JSON.stringify([cluster]) } }));
      const port = (imds.address() as AddressInfo).port;
      const run = await cli(['status', `--settings=${settings}`, stateDir('azure')], {
        PATH: emptyBin,
        HOME: work,
        AZURE_POD_IDENTITY_AUTHORITY_HOST: `http://127.0.0.1:${port}`,
      });
      assert.equal(run.code, 1, run.stderr);
      assert.match(
        run.stderr,
        /^vmss-prototype: getting an Azure token for https:\/\/management\.azure\.com\/\.default: no Azure credential is available: run `az login`/,
      );
      assert.match(
        run.stderr,
        /set AZURE_CLIENT_ID to its client id\. Tried: EnvironmentCredential is unavailable; ManagedIdentityCredential/,
      );
      assert.doesNotMatch(run.stderr, STACK_FRAME);
      assert.equal(run.stdout, '');
      assert.ok(requests.length > 0, 'the managed identity endpoint was asked');
    } finally {
      await new Promise<void>((resolve) => imds.close(() => resolve()));
    }
  });
});
