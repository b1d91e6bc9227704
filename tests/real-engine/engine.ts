/**
 * The real Durable engine for tests (docs/real-engine.md): Azurite, the .NET host built by
 * tests/real-engine/build-host.sh (.ci/.real-engine), and the bridge that runs the app's registrations.
 * Durable client calls go through durable-functions' own client over the extension's local RPC endpoint
 * (127.0.0.1:17071, or another port when that one is taken), with the client binding the extension made.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

import azureFunctions from '@azure/functions';
import * as df from 'durable-functions';

import { type Bridge, loadRegistrations, startBridge } from './bridge.js';

const ROOT = resolve(import.meta.dirname, '../../..');
/** Where build-host.sh puts the host. */
export const HOST_DLL = join(ROOT, '.ci/.real-engine/bin/RealEngineHost.dll');
const AZURITE = join(ROOT, 'node_modules/.bin/azurite');
/** Azurite's well-known development account. */
const ACCOUNT = 'devstoreaccount1';
/** Azurite's published development account key (https://learn.microsoft.com/azure/storage/common/storage-use-azurite). */
const ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
export const HUB = 'realengine';

/** Whether the tier can run here: the built host is there. In CI (CI=true) a missing host fails. */
export function hostMissing(): string | undefined {
  if (existsSync(HOST_DLL)) return undefined;
  const reason = `the real-engine host is not built (${HOST_DLL}); run bash tests/real-engine/build-host.sh`;
  if (process.env['CI'] === 'true') throw new Error(`CI: ${reason}`);
  return reason;
}

/**
 * The .NET runtime's settings for the host, a short-lived process on a machine whose CPUs the other test
 * files use: no profile-guided re-JIT of hot methods (TieredPGO instruments them first), no background
 * GC thread, and a 64 MB gen0 budget (fewer collections of the storage SDK's short-lived buffers).
 * Measured on real-engine-4: the host's CPU 26.6 s → 18.1 s, the file's wall time unchanged (docs/real-engine.md).
 */
const HOST_RUNTIME = {
  DOTNET_TieredPGO: '0',
  DOTNET_gcConcurrent: '0',
  DOTNET_GCgen0size: '0x4000000',
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string, timeoutMs: number): Promise<void> {
  return new Promise((done, fail) => {
    const output: string[] = [];
    const timer = setTimeout(
      () => fail(new Error(`${what}: not ready after ${timeoutMs} ms\n${output.join('\n')}`)),
      timeoutMs,
    );
    const onLine = (line: string): void => {
      output.push(line);
      if (process.env['REAL_ENGINE_VERBOSE'] === '1') console.log(`[${what}] ${line}`);
      if (pattern.test(line)) {
        clearTimeout(timer);
        done();
      }
    };
    if (child.stdout) createInterface({ input: child.stdout }).on('line', onLine);
    if (child.stderr) createInterface({ input: child.stderr }).on('line', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${what} exited (${String(code)}) before it was ready\n${output.join('\n')}`));
    });
  });
}

export interface EngineOptions {
  /** The Azure Storage provider's maxQueuePollingInterval (default 1 s). */
  readonly maxQueuePollingInterval?: string;
}

export interface Engine {
  readonly bridge: Bridge;
  readonly client: df.DurableClient;
  /** History rows of an instance in the task hub's History table (what the engine replays from). */
  historyRows(instanceId: string): Promise<{ EventType: string }[]>;
  /** Ends the .NET host at once (SIGKILL), as a crash would. */
  killHost(): Promise<void>;
  /**
   * Why the host is gone when it exited without killHost or stop asking (a crash, its files rewritten
   * under it); undefined while it runs. A scenario waiting on the engine fails at once on it instead of
   * waiting out its deadline on a host that will never answer.
   */
  hostGone(): string | undefined;
  startHost(): Promise<void>;
  stop(): Promise<void>;
}

/** Azurite on three free ports of 127.0.0.1, in memory. */
interface Azurite {
  readonly process: ChildProcess;
  readonly blob: number;
  readonly queue: number;
  readonly table: number;
}

/**
 * Starts Azurite, again on other ports when it could not bind the ones picked (another test process took
 * one between our probe and Azurite's listen: EADDRINUSE, seen with several test files at once).
 */
async function startAzurite(dir: string): Promise<Azurite> {
  for (let attempt = 1; ; attempt += 1) {
    const [blob, queue, table] = [await freePort(), await freePort(), await freePort()];
    const azurite = spawn(
      AZURITE,
      [
        '--inMemoryPersistence',
        // No access log: a line per request (the engine polls its queues every second) that this process
        // would read and keep for nothing.
        '--silent',
        '--skipApiVersionCheck',
        '--disableTelemetry',
        '--blobHost',
        '127.0.0.1',
        '--queueHost',
        '127.0.0.1',
        '--tableHost',
        '127.0.0.1',
        '--blobPort',
        String(blob),
        '--queuePort',
        String(queue),
        '--tablePort',
        String(table),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir },
    );
    try {
      await waitForLine(azurite, /Table service is successfully listening/, 'azurite', 30_000);
      return { process: azurite, blob, queue, table };
    } catch (error) {
      if (azurite.exitCode === null) {
        const exited = new Promise((done) => azurite.once('exit', done));
        azurite.kill('SIGTERM');
        await exited;
      }
      if (attempt >= 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

export async function startEngine(options: EngineOptions = {}): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'real-engine-'));
  let started: Azurite;
  try {
    started = await startAzurite(dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const { process: azurite, blob, queue, table } = started;
  let host: ChildProcess | undefined;
  let hostGone: string | undefined;
  let killing = false;
  // A test process ended by a signal (a runner's timeout, Ctrl-C) runs no after hook: the host and Azurite
  // would outlive it. Stopped here, synchronously, then the process ends as the signal would have ended it.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (host !== undefined && host.exitCode === null) host.kill('SIGKILL');
    if (azurite.exitCode === null) azurite.kill('SIGTERM');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const bridge = await startBridge();
  const stopAll = async (): Promise<void> => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    killing = true;
    if (host !== undefined && host.exitCode === null) {
      const exited = new Promise((done) => host?.once('exit', done));
      host.kill('SIGKILL');
      await exited;
    }
    if (azurite.exitCode === null) {
      const exited = new Promise((done) => azurite.once('exit', done));
      azurite.kill('SIGTERM');
      await exited;
    }
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const base = 'http://127.0.0.1';
    const storage =
      `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${ACCOUNT_KEY};` +
      `BlobEndpoint=${base}:${blob}/${ACCOUNT};QueueEndpoint=${base}:${queue}/${ACCOUNT};` +
      `TableEndpoint=${base}:${table}/${ACCOUNT}`;
    const names = await loadRegistrations();
    const clientFile = join(dir, 'client.json');
    const manifest = join(dir, 'manifest.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        bridgeUrl: bridge.url,
        storage,
        hubName: HUB,
        clientFile,
        maxQueuePollingInterval: options.maxQueuePollingInterval ?? '00:00:01',
        ...names,
      }),
    );

    let client: df.DurableClient | undefined;
    const startHost = async (): Promise<void> => {
      rmSync(clientFile, { force: true });
      killing = false;
      hostGone = undefined;
      const started = spawn('dotnet', [HOST_DLL, manifest], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, DOTNET_NOLOGO: '1', DOTNET_CLI_TELEMETRY_OPTOUT: '1', ...HOST_RUNTIME },
      });
      started.once('exit', (code, signal) => {
        if (!killing) hostGone = `the real-engine host exited on its own (${String(code ?? signal)})`;
      });
      host = started;
      await waitForLine(host, /^real-engine: ready/, 'real-engine host', 120_000);
      // The binding names the host's local RPC endpoint, which moves off 17071 when that port is still
      // taken (a killed host's): read again at every start.
      const clientData = JSON.parse(readFileSync(clientFile, 'utf8')) as unknown;
      bridge.setClient(clientData);
      const input = df.input.durableClient();
      const context = new azureFunctions.InvocationContext({ options: { extraInputs: [input] } });
      context.extraInputs.set(input, clientData);
      client = df.getClient(context);
    };
    await startHost();

    return {
      bridge,
      get client() {
        if (client === undefined) throw new Error('real-engine: the host has not started');
        return client;
      },
      historyRows: (instanceId) => historyRows(`${base}:${table}`, instanceId),
      hostGone: () => hostGone,
      killHost: async () => {
        if (host === undefined || host.exitCode !== null) return;
        killing = true;
        const exited = new Promise((done) => host?.once('exit', done));
        host.kill('SIGKILL');
        await exited;
      },
      startHost,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The task hub's History table rows of one instance, through Azurite's Table API (SharedKeyLite). */
async function historyRows(tableEndpoint: string, instanceId: string): Promise<{ EventType: string }[]> {
  const table = `${HUB}History`;
  const rows: { EventType: string }[] = [];
  let next = '';
  do {
    const path = `/${ACCOUNT}/${table}()`;
    const date = new Date().toUTCString();
    const signature = createHmac('sha256', Buffer.from(ACCOUNT_KEY, 'base64'))
      .update(`${date}\n/${ACCOUNT}${path}`)
      .digest('base64');
    const filter = encodeURIComponent(`PartitionKey eq '${instanceId.replaceAll("'", "''")}'`);
    const response = await fetch(`${tableEndpoint}${path}?$filter=${filter}${next}`, {
      headers: {
        accept: 'application/json;odata=nometadata',
        'x-ms-date': date,
        'x-ms-version': '2019-02-02',
        authorization: `SharedKeyLite ${ACCOUNT}:${signature}`,
      },
    });
    if (!response.ok) throw new Error(`History table: HTTP ${response.status}: ${await response.text()}`);
    const page = (await response.json()) as { value: { EventType: string; RowKey: string }[] };
    rows.push(...page.value.filter((row) => row.RowKey !== 'sentinel'));
    const partition = response.headers.get('x-ms-continuation-NextPartitionKey');
    const row = response.headers.get('x-ms-continuation-NextRowKey');
    next =
      partition === null
        ? ''
        : `&NextPartitionKey=${encodeURIComponent(partition)}&NextRowKey=${encodeURIComponent(row ?? '')}`;
  } while (next !== '');
  return rows;
}
