/** Starts a real Azurite queue service on an ephemeral 127.0.0.1 port for a test, and stops it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const AZURITE_QUEUE = fileURLToPath(
  new URL('../../../../../node_modules/.bin/azurite-queue', import.meta.url),
);

/** Azurite's well-known development account key. */
const ACCOUNT_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface RunningAzurite {
  readonly connectionString: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startAzurite(): Promise<RunningAzurite> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    AZURITE_QUEUE,
    [
      '--silent',
      '--skipApiVersionCheck',
      '--disableTelemetry',
      '--inMemoryPersistence',
      '--queueHost',
      '127.0.0.1',
      '--queuePort',
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    // Under a busy machine Azurite's start has taken over 10 s; past the bound, the child is killed so a
    // failed start leaves no process behind.
    const timeout = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`starting azurite: no answer after 60 s: ${output}`));
    }, 60_000);
    const check = (): void => {
      if (/successfully listens/i.test(output)) {
        clearTimeout(timeout);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timeout);
      reject(new Error(`starting azurite: exited with ${code}: ${output}`));
    });
  });
  return {
    connectionString:
      `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${ACCOUNT_KEY};` +
      `QueueEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
