/**
 * Security suite: the service-account token never leaves the product (a canary token searched for in
 * every log, status, history, persisted file, CLI output and HTTP response), TLS to the API server and
 * to ARM fails closed with a wrong CA, and unknown or malformed cluster ids and foreign events reach
 * neither Azure nor Kubernetes through any entry point.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import type { HttpResponse } from '@azure/functions';

import type { DurableRunner, OrchestrationStatus } from '../../cli/runner/index.js';
import { createDurableRunner, createFileStore, createMemoryStore } from '../../cli/runner/index.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import { handleKuredNotification } from '../../functions/triggers/kured-notify.http.js';
import { handleRebootEvent } from '../../functions/triggers/reboot-notice.eventgrid.js';
import { handleRebootQueueMessage } from '../../functions/triggers/reboot-notice.queue.js';
import {
  handlePlanRequest,
  handleRefreshRequest,
  handleStatusRequest,
} from '../../functions/triggers/refresh-api.http.js';
import type { TriggerDependencies } from '../../functions/triggers/trigger-dependencies.js';
import { createTriggerDependencies } from '../../functions/triggers/trigger-dependencies.js';
import type { ActivityFailure } from '../../shared/application/activities/activity.js';
import type { ActivityName } from '../../shared/application/activities/catalogue.js';
import { ACTIVITIES, bindActivities } from '../../shared/application/activities/catalogue.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { RebootNotice } from '../../shared/application/reboot-notices.js';
import { parseVmResourceId } from '../../shared/application/reboot-notices.js';
import type { Composition } from '../../shared/composition-root.js';
import { compose } from '../../shared/composition-root.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { generateSimTls } from '../../sim/world/tls.js';
import { CLI_ENTRY } from '../builders/cli-entry.js';
import type { ClusterSettingsData, ScenarioData } from '../e2e/harness.js';
import { nodeOf, POOL1, POOL2, sampleScenario } from '../e2e/harness.js';
import { FakeDurableClient, runnerClient } from '../functions/triggers/durable-client-double.js';
import {
  actionEvent,
  annotatedEvent,
  asCloudEvent,
  availabilityEvent,
  flexVm,
  recordingContext,
  request,
  uniformVm,
} from '../functions/triggers/fixtures.js';
import { Capture } from './leak-scan.js';

/** The sample scenario's subscription (the fixtures' SUB) and a foreign one. */
const SUB = '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f';
const FOREIGN_SUB = '99999999-8888-4777-8666-555555555555';

/** Cluster ids an attacker or a typo produces (the configured one is `prod`). */
const BAD_CLUSTERS: readonly string[] = [
  'nope',
  'PROD',
  'prod ',
  ' prod',
  '../prod',
  'prod/..',
  'prod%2F..',
  '..%2Fprod',
  'prod/../prod',
  'a'.repeat(300),
  `prod${'x'.repeat(63)}`,
  'prod"',
  "prod'",
  '"prod"',
  'pröd',
  'prod\u202e',
  'ｐｒｏｄ',
  'prod\n',
  'prod\u0000',
  '',
  '%00',
  'prod;ls',
  '$(id)',
  'prod:pool1',
];

const tally = { checks: 0, badInputs: 0, secretsFound: 0, capturedArtifacts: 0, capturedBytes: 0 };
function check(condition: boolean, message: string): void {
  tally.checks += 1;
  assert.ok(condition, message);
}

/** A token that changes under URL and base64 encoding, unique per run. */
function canaryToken(): string {
  return `vmssp-canary+${randomBytes(12).toString('hex')}/${randomBytes(12).toString('base64url')}=`;
}

/** A unique token shaped like a Kubernetes service-account token (a JWT). */
function jwtCanary(): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return [
    part({ alg: 'RS256', kid: randomBytes(8).toString('hex') }),
    part({ iss: 'kubernetes/serviceaccount', sub: `canary-${randomBytes(12).toString('hex')}` }),
    randomBytes(48).toString('base64url'),
  ].join('.');
}

interface Session {
  readonly sim: SimulatorSession;
  readonly composition: Composition;
  readonly runner: DurableRunner;
  readonly env: Record<string, string>;
}

interface SessionOptions {
  readonly scenario?: (scenario: ScenarioData) => void;
  readonly settings?: (cluster: ClusterSettingsData) => void;
  readonly storeDir?: string;
  readonly armCaPem?: string;
  readonly onLog?: (level: string, instanceId: string, args: unknown[]) => void;
  readonly onStatus?: (status: OrchestrationStatus) => void;
}

/** The e2e harness's composition, with a choice of store, log sink and ARM CA. */
async function startSession(options: SessionOptions = {}): Promise<Session> {
  const scenario = sampleScenario();
  options.scenario?.(scenario);
  const sim = await startSimulatorSession({ scenarioPath: scenario, timeFactor: 200 });
  try {
    const env = { ...sim.env };
    const clusters = JSON.parse(env['VMSSP_CLUSTERS'] ?? '[]') as ClusterSettingsData[];
    const first = clusters[0];
    if (first !== undefined) options.settings?.(first);
    env['VMSSP_CLUSTERS'] = JSON.stringify(clusters);
    const composition = compose({
      env,
      simulator: { ...sim.endpoints, caPem: options.armCaPem ?? sim.endpoints.caPem },
      now: () => new Date(sim.clock.now()),
    });
    const runner = createDurableRunner({
      ...durableRegistry(composition.dependencies),
      clock: sim.clock,
      store: options.storeDir === undefined ? createMemoryStore() : createFileStore(options.storeDir),
      maxConcurrentActivities: 8,
      ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
      ...(options.onStatus === undefined ? {} : { onStatus: options.onStatus }),
    });
    return { sim, composition, runner, env };
  } catch (error) {
    await sim.stop();
    throw error;
  }
}

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI in a child process (asynchronously: the simulator lives in this process). */
function runCli(args: readonly string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, ...args],
      { cwd, timeout: 120_000, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A reboot-queue sender that records what it would enqueue. */
function recordingSender(): TriggerDependencies['notices'] & { sent: RebootNotice[] } {
  const sent: RebootNotice[] = [];
  return {
    sent,
    send(notice) {
      sent.push(notice);
      return Promise.resolve();
    },
  };
}

function bodyOf(response: HttpResponse): Promise<string> {
  return response.body === null ? Promise.resolve('') : response.text();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs one catalogue activity as the host does; it must fail, and its failure value is returned. */
async function activityFailure(
  composition: Composition,
  activity: ActivityName,
  input: unknown,
): Promise<ActivityFailure> {
  const result = await bindActivities(composition.dependencies)[activity](input);
  if (result.ok) assert.fail(`${activity} must fail, it returned ${JSON.stringify(result.value)}`);
  return result.failure;
}

/** The instance failure message, or the empty string. */
function failureOf(status: OrchestrationStatus): string {
  return status.failure?.ErrorMessage ?? '';
}

after(() => {
  const rows: [string, number][] = [
    ['checks run', tally.checks],
    ['bad inputs tried', tally.badInputs],
    ['artifacts scanned for secrets', tally.capturedArtifacts],
    ['characters scanned', tally.capturedBytes],
    ['secrets found', tally.secretsFound],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(
    ['security suite', ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`)].join('\n'),
  );
});

void describe('security', { concurrency: false }, () => {
  void it('a canary service-account token appears in nothing the product emits', async () => {
    const canary = canaryToken();
    const capture = new Capture();
    const work = await mkdtemp(join(tmpdir(), 'vmssp-security-'));
    const restoreConsole = capture.patchConsole();
    const donor = nodeOf(POOL2, 1);
    let session: Session | undefined;
    try {
      session = await startSession({
        scenario: (scenario) => {
          const cluster = scenario.clusters[0];
          assert.ok(cluster);
          cluster['tokens'] = { serviceAccount: canary };
          // A budget that never allows: the forced refresh of its node times out draining.
          cluster.workloads.push({
            kind: 'Deployment',
            namespace: 'default',
            name: 'singleton-db',
            replicas: 1,
            nodeSelector: { 'kubernetes.io/hostname': donor },
            pdb: { minAvailable: 1 },
          });
        },
        settings: (cluster) => {
          cluster.capture = { ...cluster.capture, drainTimeout: '2m' };
        },
        storeDir: join(work, 'runs'),
        onLog: (level, instanceId, args) => capture.add(`runner log ${level} ${instanceId}`, args),
        onStatus: (status) => capture.add(`status ${status.instanceId}`, status),
      });
      const { runner, composition, sim } = session;
      const secrets = [
        { name: 'service-account token', value: canary },
        { name: 'ARM bearer token', value: sim.endpoints.armToken },
      ];
      // The simulator accepts the canary: requests authenticate as the service account.
      check(
        connectionOf(sim.running).clusters[0]?.serviceAccountToken === canary,
        'the simulator serves the canary token',
      );

      const plan = await runner.startOrchestration(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'security', dryRun: true },
        'sec-plan',
      );
      check(plan.runtimeStatus === 'Completed', `plan: ${plan.runtimeStatus} ${failureOf(plan)}`);

      const failing = await runner.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, node: donor, trigger: 'security' },
        'sec-failing',
      );
      check(failing.runtimeStatus === 'Failed', `failing refresh: ${failing.runtimeStatus}`);
      check(/draining: timed out/.test(failureOf(failing)), `drain timeout: ${failureOf(failing)}`);
      capture.add('failing refresh error', failureOf(failing));

      const full = await runner.startOrchestration(
        ORCHESTRATION.refreshCluster,
        { cluster: 'prod', trigger: 'security' },
        'sec-full',
      );
      check(full.runtimeStatus === 'Completed', `full refresh: ${full.runtimeStatus} ${failureOf(full)}`);
      capture.add('full refresh output', full.output);

      const status = await runner.startOrchestration(
        ORCHESTRATION.clusterStatus,
        { cluster: 'prod' },
        'sec-status',
      );
      check(status.runtimeStatus === 'Completed', `status: ${status.runtimeStatus}`);

      // The function app's handlers over the same composition and runner.
      const sender = recordingSender();
      const deps = createTriggerDependencies(composition, sender);
      const client = runnerClient(runner);
      const context = recordingContext();
      const responses: [string, HttpResponse][] = [
        [
          'http status',
          await handleStatusRequest(
            request({ method: 'GET', params: { cluster: 'prod' } }),
            client,
            context,
            deps,
          ),
        ],
        [
          'http plan',
          await handlePlanRequest(
            request({ method: 'GET', params: { cluster: 'prod' }, url: 'https://x/api/clusters/prod/plan' }),
            context,
            deps,
          ),
        ],
        [
          'http refresh dry run',
          await handleRefreshRequest(
            request({ params: { cluster: 'prod' }, body: JSON.stringify({ pool: POOL1, dryRun: true }) }),
            client,
            context,
            deps,
          ),
        ],
        [
          'http refresh unknown pool',
          await handleRefreshRequest(
            request({ params: { cluster: 'prod' }, body: JSON.stringify({ pool: 'nope' }) }),
            client,
            context,
            deps,
          ),
        ],
        [
          'kured notify',
          await handleKuredNotification(
            request({
              url: 'https://x/api/notices/kured?cluster=prod',
              body: JSON.stringify({
                message: `Node ${nodeOf(POOL1, 1)} rebooted & uncordoned successfully!`,
              }),
            }),
            context,
            deps,
          ),
        ],
      ];
      for (const [name, response] of responses) {
        capture.add(`${name} (HTTP ${response.status})`, await bodyOf(response));
        capture.add(`${name} headers`, [...response.headers.entries()]);
      }
      check(responses[0]?.[1].status === 200, 'status answers 200');
      check(responses[1]?.[1].status === 200, 'plan answers 200');
      capture.add(
        'event grid',
        await handleRebootEvent(annotatedEvent(uniformVm(POOL1, '1')), context, deps),
      );
      const queue = await handleRebootQueueMessage(
        sender.sent.map((notice) => ({ ...notice })),
        new FakeDurableClient(),
        context,
        deps,
      );
      capture.add('queue result', queue);
      capture.add('enqueued notices', sender.sent);
      capture.add('invocation context logs', context.logs);

      // Failures of activities called directly (they answer with failure values).
      const bound = bindActivities(composition.dependencies);
      for (const [activity, input] of [
        ['readNodeState', { cluster: 'prod', node: 'no-such-node' }],
        ['planPool', { cluster: 'prod', pool: 'no-such-pool' }],
        ['drainNodeStep', { cluster: 'prod', node: 'no-such-node' }],
      ] as const) {
        capture.add(`activity ${activity} result`, await bound[activity](input));
      }

      // Everything the runner persisted and reports.
      for (const instance of await runner.listInstances())
        capture.add(`instance ${instance.instanceId}`, instance);
      const runsDir = join(work, 'runs');
      for (const file of await readdir(runsDir)) {
        capture.add(`persisted ${file}`, await readFile(join(runsDir, file), 'utf8'));
      }

      // The CLI in another process, against a second simulator whose token is a second canary.
      const cliCanary = canaryToken();
      secrets.push({ name: 'CLI service-account token', value: cliCanary });
      const cliSim = await startSimulatorSession({
        scenarioPath: (() => {
          const scenario = sampleScenario();
          const cluster = scenario.clusters[0];
          assert.ok(cluster);
          cluster['tokens'] = { serviceAccount: cliCanary };
          return scenario;
        })(),
        timeFactor: 200,
      });
      try {
        const connectionFile = join(work, 'connection.json');
        await writeConnectionFile(connectionFile, connectionOf(cliSim.running));
        const common = ['--sim-connect', connectionFile, '--state-dir', join(work, 'cli-runs')];
        for (const args of [
          ['plan', ...common],
          ['refresh', ...common, '--json'],
          ['status', ...common],
          ['refresh', ...common, '--pool', POOL2, '--node', 'no-such-node'],
        ]) {
          const result = await runCli(args, work);
          capture.add(`cli ${args[0] ?? ''} stdout`, result.stdout);
          capture.add(`cli ${args[0] ?? ''} stderr`, result.stderr);
          check(result.stdout.length + result.stderr.length > 0, `cli ${args.join(' ')}: printed nothing`);
          if (args.includes('--json')) {
            check(result.code === 0, `cli refresh exit ${result.code}: ${result.stderr}`);
            const printed = JSON.parse(result.stdout) as { clusters?: unknown[] };
            check((printed.clusters?.length ?? 0) === 1, 'cli refresh --json prints the cluster result');
          }
        }
        for (const file of await readdir(join(work, 'cli-runs'))) {
          capture.add(`cli persisted ${file}`, await readFile(join(work, 'cli-runs', file), 'utf8'));
        }
      } finally {
        await cliSim.stop();
      }

      restoreConsole();
      const persisted = capture.artifacts.filter((artifact) => artifact.name.startsWith('persisted ')).length;
      check(persisted >= 4, `persisted histories captured: ${persisted}`);
      // The orchestrators and activities log nothing today; the sink is attached for when they do.
      // A whole record is one line; each journal line carries the events that save added.
      const historyEvents = capture.artifacts
        .filter((artifact) => artifact.name.startsWith('persisted '))
        .flatMap((artifact) => artifact.text.split('\n').filter((line) => line.trim() !== ''))
        .reduce((sum, line) => sum + (JSON.parse(line) as { history: unknown[] }).history.length, 0);
      check(historyEvents > 100, `history events captured: ${historyEvents}`);
      console.log(
        `captured: ${capture.artifacts.filter((a) => a.name.startsWith('runner log')).length} runner log lines, ` +
          `${historyEvents} history events, ${persisted} persisted files (records and journals)`,
      );
      const findings = capture.scan(secrets);
      tally.secretsFound += findings.length;
      tally.capturedArtifacts += capture.artifacts.length;
      tally.capturedBytes += capture.bytes;
      console.log(
        `canary scan: ${capture.artifacts.length} artifacts, ${capture.bytes} characters, secrets found: ${findings.length}`,
      );
      check(findings.length === 0, `secrets found: ${JSON.stringify(findings.slice(0, 20))}`);
      // The scan itself works: a planted copy is found in every form.
      const probe = new Capture();
      probe.add('probe raw', `x${canary}y`);
      probe.add('probe base64', Buffer.from(`ab${canary}cd`).toString('base64'));
      probe.add('probe url', `q=${encodeURIComponent(canary)}`);
      check(
        new Set(probe.scan([{ name: 'canary', value: canary }]).map((f) => f.artifact)).size === 3,
        'the scanner finds planted copies',
      );
    } finally {
      restoreConsole();
      await session?.sim.stop();
      await rm(work, { recursive: true, force: true });
    }
  });
  void it('a token pasted or misplaced in the settings is rejected without being echoed', async () => {
    // Service-account tokens are JWTs: shaped like one, a token is recognized in any field.
    const canary = jwtCanary();
    const opaque = canaryToken();
    const capture = new Capture();
    const work = await mkdtemp(join(tmpdir(), 'vmssp-security-'));
    const session = await startSession();
    try {
      const base = (): ClusterSettingsData[] =>
        JSON.parse(session.env['VMSSP_CLUSTERS'] ?? '[]') as ClusterSettingsData[];
      const withCluster = (change: (cluster: Record<string, unknown>) => void): Record<string, string> => {
        const clusters = base();
        const first = clusters[0];
        assert.ok(first);
        change(first);
        return { ...session.env, VMSSP_CLUSTERS: JSON.stringify(clusters) };
      };
      const apiServer = (cluster: Record<string, unknown>): Record<string, unknown> =>
        cluster['apiServer'] as Record<string, unknown>;
      const envs: [string, Record<string, string>][] = [
        ['token as a string', withCluster((c) => (apiServer(c)['auth'] = { serviceAccountToken: canary }))],
        [
          'token as a value',
          withCluster((c) => (apiServer(c)['auth'] = { serviceAccountToken: { value: canary } })),
        ],
        [
          'token as an env name',
          withCluster((c) => (apiServer(c)['auth'] = { serviceAccountToken: { env: canary } })),
        ],
        ['token field', withCluster((c) => (apiServer(c)['auth'] = { token: canary }))],
        ['bearer field', withCluster((c) => (apiServer(c)['auth'] = { bearerToken: canary }))],
        ['password at the top', withCluster((c) => (c['password'] = canary))],
        [
          'token in the URL',
          withCluster((c) => (apiServer(c)['url'] = `https://vmssp:${canary}@127.0.0.1:6443`)),
        ],
        ['token as the CA', withCluster((c) => (apiServer(c)['caCertificate'] = { pem: canary }))],
        ['token as the cluster name', withCluster((c) => (c['name'] = canary))],
        [
          'token as the prep image',
          withCluster((c) => (c['capture'] = { mode: 'drain-and-stop', prepImage: canary })),
        ],
        // An opaque (non-JWT) token is recognized by where it sits: under auth, a secret field, URL user-info.
        [
          'opaque token as a string',
          withCluster((c) => (apiServer(c)['auth'] = { serviceAccountToken: opaque })),
        ],
        ['opaque token field', withCluster((c) => (apiServer(c)['auth'] = { token: opaque }))],
        ['opaque password at the top', withCluster((c) => (c['password'] = opaque))],
        [
          'opaque token in the URL',
          withCluster((c) => (apiServer(c)['url'] = `https://vmssp:${opaque}@127.0.0.1:6443`)),
        ],
        [
          'opaque token in a Key Vault URI',
          withCluster(
            (c) =>
              (apiServer(c)['auth'] = {
                serviceAccountToken: {
                  keyVaultSecretUri: `https://u:${opaque}@kv.vault.azure.net/secrets/x`,
                },
              }),
          ),
        ],
        ['truncated JSON', { ...session.env, VMSSP_CLUSTERS: `[{"name":"prod","token":"${canary}"` }],
        ['JSON with a trailing comma', { ...session.env, VMSSP_CLUSTERS: `[{"token":"${canary}",}]` }],
        [
          'secret app setting with another setting wrong',
          { ...session.env, VMSSP_SECRET_EXTRA: canary, VMSSP_QUIET_PERIOD: 'soon', VMSSP_SCHEDULE: canary },
        ],
      ];
      let rejected = 0;
      for (const [label, env] of envs) {
        tally.badInputs += 1;
        try {
          const composition = compose({ env, simulator: session.sim.endpoints });
          // Accepted at load time: the first use must fail, still without the value.
          const failure = await activityFailure(composition, 'listPools', {
            cluster: composition.settings.clusters[0]?.name ?? 'prod',
          });
          capture.add(`${label}: first use`, failure);
        } catch (error) {
          rejected += 1;
          capture.add(`${label}: settings error`, error);
          capture.add(`${label}: settings message`, messageOf(error));
        }
      }
      check(rejected >= envs.length - 1, `settings rejected ${rejected} of ${envs.length}`);
      // A token whose value is broken (whitespace inside) fails at first use without being shown.
      const broken = `${canary} ${canary}`;
      const tokenKey = Object.keys(session.env).find((key) => key.startsWith('VMSSP_SECRET_')) ?? '';
      const composition = compose({
        env: { ...session.env, [tokenKey]: broken },
        simulator: session.sim.endpoints,
      });
      tally.badInputs += 1;
      const brokenFailure = await activityFailure(composition, 'listPools', { cluster: 'prod' });
      capture.add('broken token: first use', brokenFailure);
      check(/token/.test(brokenFailure.message), `broken token: ${brokenFailure.message}`);
      // A well-formed token the API server does not know: refused (401), the error does not show it.
      const stranger = canaryToken();
      const strangerComposition = compose({
        env: { ...session.env, [tokenKey]: stranger },
        simulator: session.sim.endpoints,
      });
      const log = session.sim.running.log;
      const okBefore = log.count({ api: 'kube', status: 200 });
      tally.badInputs += 1;
      const strangerFailure = await activityFailure(strangerComposition, 'listPools', { cluster: 'prod' });
      capture.add('unknown token: first use', strangerFailure);
      check(
        /rejected the service account token|401|unauthori[sz]ed/i.test(strangerFailure.message),
        `unknown token: ${strangerFailure.message}`,
      );
      check(log.count({ api: 'kube', status: 200 }) === okBefore, 'nothing served to an unknown token');
      check(log.count({ api: 'kube', status: 401 }) >= 1, 'the API server refused the unknown token');
      // The CLI with a pasted token in its settings file: exit 2, nothing echoed.
      const settingsFile = join(work, 'local.settings.json');
      await writeFile(settingsFile, JSON.stringify({ Values: envs[0]?.[1] ?? {} }), { mode: 0o600 });
      tally.badInputs += 1;
      const cli = await runCli(['plan', '--settings', settingsFile, '--state-dir', join(work, 'runs')], work);
      capture.add('cli --settings stdout', cli.stdout);
      capture.add('cli --settings stderr', cli.stderr);
      check(cli.code === 2, `cli with a pasted token: exit ${cli.code}`);
      check(/serviceAccountToken/.test(cli.stderr), `cli names the field: ${cli.stderr.slice(0, 300)}`);

      const findings = capture.scan([
        { name: 'pasted token', value: canary },
        { name: 'pasted opaque token', value: opaque },
        { name: 'unknown token', value: stranger },
        { name: 'broken token', value: canary },
      ]);
      tally.secretsFound += findings.length;
      tally.capturedArtifacts += capture.artifacts.length;
      tally.capturedBytes += capture.bytes;
      check(findings.length === 0, `secrets found: ${JSON.stringify(findings)}`);
    } finally {
      await session.sim.stop();
      await rm(work, { recursive: true, force: true });
    }
  });

  void it('a wrong CA for the API server fails closed: clear error, no Kubernetes request served', async () => {
    const wrongCa = generateSimTls(new Date(0)).caPem;
    const session = await startSession({
      settings: (cluster) => {
        cluster['apiServer'] = {
          ...(cluster['apiServer'] as Record<string, unknown>),
          caCertificate: { pem: wrongCa },
        };
      },
    });
    try {
      const log = session.sim.running.log;
      const kubeBefore = log.count({ api: 'kube' });
      for (const [name, input] of [
        [ORCHESTRATION.refreshCluster, { cluster: 'prod', trigger: 'security', dryRun: true }],
        [ORCHESTRATION.refreshPool, { cluster: 'prod', pool: POOL1, trigger: 'security' }],
      ] as const) {
        const status = await session.runner.startOrchestration(name, input, `tls-kube-${name}`);
        const message = failureOf(status);
        check(status.runtimeStatus === 'Failed', `${name} with a wrong CA: ${status.runtimeStatus}`);
        check(/\bprod\b/.test(message), `${name}: the error names the cluster: ${message}`);
        check(/CA certificate/i.test(message), `${name}: the error says to check the CA: ${message}`);
      }
      const caFailure = await activityFailure(session.composition, 'readNodeState', {
        cluster: 'prod',
        node: nodeOf(POOL1, 1),
      });
      check(/check the configured CA certificate/.test(caFailure.message), `activity: ${caFailure.message}`);
      const plan = await handlePlanRequest(
        request({ method: 'GET', url: 'https://x/api/clusters/prod/plan', params: { cluster: 'prod' } }),
        recordingContext(),
        createTriggerDependencies(session.composition, recordingSender()),
      );
      const planBody = await bodyOf(plan);
      check(plan.status === 502, `HTTP plan with a wrong CA: ${plan.status}`);
      check(/cluster prod\b.*check the configured CA/.test(planBody), `HTTP plan error: ${planBody}`);
      check(
        log.count({ api: 'kube' }) === kubeBefore,
        `Kubernetes requests served: ${log.count({ api: 'kube' }) - kubeBefore}`,
      );
    } finally {
      await session.sim.stop();
    }
  });

  void it('a wrong CA for Azure Resource Manager fails closed: clear error, no ARM request served', async () => {
    const wrongCa = generateSimTls(new Date(0)).caPem;
    const session = await startSession({ armCaPem: wrongCa });
    try {
      const log = session.sim.running.log;
      const armBefore = log.count({ api: 'arm' });
      const status = await session.runner.startOrchestration(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL1, trigger: 'security' },
        'tls-arm',
      );
      const message = failureOf(status);
      check(status.runtimeStatus === 'Failed', `refresh with a wrong ARM CA: ${status.runtimeStatus}`);
      check(/certificate/i.test(message), `the error says the certificate was refused: ${message}`);
      check(/\bprod\b|k8s-pool1/.test(message), `the error names what was being reached: ${message}`);
      check(
        log.count({ api: 'arm' }) === armBefore,
        `ARM requests served: ${log.count({ api: 'arm' }) - armBefore}`,
      );
    } finally {
      await session.sim.stop();
    }
  });
  void it('unknown or malformed cluster ids reach neither Azure nor Kubernetes through any entry point', async () => {
    const session = await startSession();
    const work = await mkdtemp(join(tmpdir(), 'vmssp-security-'));
    try {
      const log = session.sim.running.log;
      const sender = recordingSender();
      const deps = createTriggerDependencies(session.composition, sender);
      const client = new FakeDurableClient();
      const requestsBefore = log.total();
      const assertNoRequests = (label: string): void =>
        check(
          log.total() === requestsBefore,
          `${label}: ${log.total() - requestsBefore} requests reached the simulator`,
        );

      for (const name of BAD_CLUSTERS) {
        const label = `cluster ${JSON.stringify(name.slice(0, 40))}`;
        const context = recordingContext();
        const url = `https://x/api/clusters/${encodeURIComponent(name)}`;
        const responses = [
          await handleRefreshRequest(
            request({ url: `${url}/refresh`, params: { cluster: name }, body: '{}' }),
            client,
            context,
            deps,
          ),
          await handleRefreshRequest(
            request({
              url: `${url}/refresh`,
              params: { cluster: name },
              body: JSON.stringify({ pool: POOL1, node: nodeOf(POOL1, 1) }),
            }),
            client,
            context,
            deps,
          ),
          await handleStatusRequest(
            request({ method: 'GET', url: `${url}/status`, params: { cluster: name } }),
            client,
            context,
            deps,
          ),
          await handlePlanRequest(
            request({ method: 'GET', url: `${url}/plan?pool=${POOL1}`, params: { cluster: name } }),
            context,
            deps,
          ),
          await handleKuredNotification(
            request({
              url: `https://x/api/notices/kured?cluster=${encodeURIComponent(name)}`,
              body: JSON.stringify({
                message: `Node ${nodeOf(POOL1, 1)} rebooted & uncordoned successfully!`,
              }),
            }),
            context,
            deps,
          ),
        ];
        for (const response of responses) {
          tally.badInputs += 1;
          check(response.status >= 400 && response.status < 500, `${label}: HTTP ${response.status}`);
          const body = JSON.parse(await bodyOf(response)) as { error?: { message?: string } };
          check((body.error?.message ?? '').length > 0, `${label}: a clear error message`);
        }
        // A CloudEvent naming the node and the (bad) cluster, straight onto the queue.
        tally.badInputs += 1;
        const queued = await handleRebootQueueMessage(
          {
            specversion: '1.0',
            id: 'ce-bad',
            type: 'io.vmss-prototype.node.rebooted',
            source: '/clusters/x',
            data: { cluster: name, nodeName: nodeOf(POOL1, 1) },
          },
          client,
          context,
          deps,
        );
        check(queued.signalled.length === 0 && queued.dropped.length === 1, `${label}: queue notice dropped`);
        check(
          context.logs.some((entry) => entry.level === 'warning'),
          `${label}: the drop is logged`,
        );
        // Every activity, called directly with the bad cluster.
        for (const activity of Object.keys(ACTIVITIES) as ActivityName[]) {
          tally.badInputs += 1;
          const failure = await activityFailure(session.composition, activity, {
            cluster: name,
            pool: POOL1,
            node: nodeOf(POOL1, 1),
            scaleSet: { subscriptionId: SUB, resourceGroup: 'rg-K8s-Prod', name: POOL1 },
          });
          check(/cluster|input/i.test(failure.message), `${label} ${activity}: ${failure.message}`);
        }
        assertNoRequests(label);
      }
      check(
        client.started.length === 0 && client.raised.length === 0,
        'no orchestration started or signalled',
      );
      check(sender.sent.length === 0, 'nothing enqueued');
      check((await session.runner.listInstances()).length === 0, 'the runner has no instance');

      // The CLI: usage errors (exit 2) before any request.
      const connectionFile = join(work, 'connection.json');
      await writeConnectionFile(connectionFile, connectionOf(session.sim.running));
      for (const name of ['nope', '../prod', 'prod%2F..', 'prod"', 'pröd', 'a'.repeat(300)]) {
        for (const command of ['plan', 'refresh']) {
          tally.badInputs += 1;
          const result = await runCli(
            [command, '--sim-connect', connectionFile, '--state-dir', join(work, 'runs'), '--cluster', name],
            work,
          );
          check(result.code === 2, `cli ${command} --cluster ${name.slice(0, 20)}: exit ${result.code}`);
          check(/--cluster/.test(result.stderr), `cli names the bad option: ${result.stderr.slice(0, 200)}`);
        }
      }
      assertNoRequests('CLI');
    } finally {
      await session.sim.stop();
      await rm(work, { recursive: true, force: true });
    }
  });

  void it('scale sets outside the configured subscriptions are never called, whatever an activity is given', async () => {
    const session = await startSession();
    try {
      const log = session.sim.running.log;
      const before = log.count({ api: 'arm' });
      for (const activity of ['readScaleSetImage', 'listRemovableExtensions'] as const) {
        tally.badInputs += 1;
        const failure = await activityFailure(session.composition, activity, {
          cluster: 'prod',
          scaleSet: { subscriptionId: FOREIGN_SUB, resourceGroup: 'rg-K8s-Prod', name: POOL1 },
          keepExtensionTypes: [],
        });
        check(/subscription/i.test(failure.message), `${activity}: ${failure.message}`);
        check(failure.kind === 'terminal', `${activity}: refused, not retried (${failure.kind})`);
      }
      check(log.count({ api: 'arm' }) === before, `ARM requests: ${log.count({ api: 'arm' }) - before}`);
    } finally {
      await session.sim.stop();
    }
  });

  void it('reboot events outside the configured subscriptions and groups are rejected with a reason and no signal', async () => {
    const session = await startSession();
    try {
      const log = session.sim.running.log;
      const before = log.total();
      const sender = recordingSender();
      const deps = createTriggerDependencies(session.composition, sender);
      const client = new FakeDurableClient();
      const foreign = [
        uniformVm(POOL1, '1', 'rg-K8s-Prod', FOREIGN_SUB),
        uniformVm(POOL1, '1', 'rg-other', SUB),
        uniformVm(POOL1, '1', 'MC_rg_aks_westeurope', SUB),
        flexVm(`${POOL1}_1a2b3c4d`, 'rg-K8s-Prod', FOREIGN_SUB),
        flexVm('k8s-flex-vmss_1a2b3c4d', 'rg-other', SUB),
        `/subscriptions/${FOREIGN_SUB}/resourceGroups/rg-K8s-Prod/providers/Microsoft.Compute/virtualMachineScaleSets/${POOL1}/virtualMachines/1`.toUpperCase(),
        `/subscriptions/${SUB}/resourceGroups/rg-K8s-Prod/../rg-other/providers/Microsoft.Compute/virtualMachineScaleSets/${POOL1}/virtualMachines/1`,
        `/subscriptions/${SUB}/resourceGroups/rg-K8s-Prod%2F..%2Frg-other/providers/Microsoft.Compute/virtualMachineScaleSets/${POOL1}/virtualMachines/1`,
      ];
      for (const resourceId of foreign) {
        const topic = `/subscriptions/${parseVmResourceId(resourceId)?.subscriptionId ?? SUB}`;
        const events = [
          annotatedEvent(resourceId),
          { ...availabilityEvent(resourceId, 'Unavailable', 'Available'), topic, metadataVersion: '1' },
          {
            ...actionEvent(
              resourceId,
              'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/restart/action',
            ),
            topic,
            metadataVersion: '1',
          },
          asCloudEvent(annotatedEvent(resourceId)),
          {
            specversion: '1.0',
            id: 'ce-1',
            type: 'io.vmss-prototype.node.rebooted',
            source: '/x',
            data: { resourceId },
          },
        ];
        for (const event of events) {
          const label = `${String(event['type'] ?? event['eventType'])} ${resourceId}`;
          // Event Grid delivery (webhook to the function): dropped before the queue.
          const context = recordingContext();
          const outcome = await handleRebootEvent(event, context, deps);
          tally.badInputs += 1;
          const messages: unknown[] = [];
          check(outcome.kind === 'dropped', `${label}: Event Grid trigger ${outcome.kind}`);
          if (outcome.kind === 'dropped') check(outcome.message.length > 0, `${label}: a reason`);
          check(
            context.logs.some((entry) => entry.level === 'warning'),
            `${label}: the Event Grid drop is logged`,
          );
          // The same event as a queue message: JSON, base64 JSON, an array, and an already parsed object.
          const text = JSON.stringify(event);
          messages.push(text, Buffer.from(text).toString('base64'), `[${text}]`, event);
          for (const message of messages) {
            tally.badInputs += 1;
            const queueContext = recordingContext();
            const result = await handleRebootQueueMessage(message, client, queueContext, deps);
            check(result.signalled.length === 0, `${label}: no signal`);
            check(result.dropped.length >= 1, `${label}: dropped`);
            const reasons = result.dropped.map((drop) => drop.reason);
            check(
              reasons.every((reason) =>
                [
                  'foreign-subscription',
                  'unconfigured-resource-group',
                  'not-a-vm',
                  'unknown-scale-set',
                ].includes(reason),
              ),
              `${label}: reasons ${reasons.join(', ')}`,
            );
            check(
              queueContext.logs.some(
                (entry) => entry.level === 'warning' && JSON.stringify(entry.args).includes('reason'),
              ),
              `${label}: the reason is logged`,
            );
          }
        }
      }
      check(client.started.length === 0 && client.raised.length === 0, 'no pool signalled');
      check(sender.sent.length === 0, 'nothing enqueued');
      check(log.total() === before, `requests reached the simulator: ${log.total() - before}`);
    } finally {
      await session.sim.stop();
    }
  });
});
