/**
 * Connects the CLI to a simulator running in another process (its connection file), so a runner can
 * be killed and resumed while the simulated world lives on. The runner's clock follows the
 * simulator's scaled clock and moves it forward (admin endpoint) when a durable timer is due.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';

import { messageOf } from '../shared/domain/errors.js';
import { settingsForConnection, SIM_ARM_TOKEN } from '../sim/app-settings.js';
import type { SimulatorConnection } from '../sim/connection.js';
import { UsageError } from './args.js';
import type { Clock } from './runner/index.js';

export interface ConnectedSimulator {
  readonly connection: SimulatorConnection;
  readonly env: Record<string, string>;
  readonly endpoints: { readonly armEndpoint: string; readonly caPem: string; readonly armToken: string };
  readonly clock: Clock;
}

interface SimTime {
  now: string;
  mode: 'manual' | 'scaled';
  timeFactor: number;
}

export async function connectSimulator(path: string): Promise<ConnectedSimulator> {
  let connection: SimulatorConnection;
  try {
    connection = JSON.parse(await readFile(path, 'utf8')) as SimulatorConnection;
  } catch {
    throw new UsageError(`--sim-connect ${path}: not a readable simulator connection file`);
  }
  const fields = connection as Partial<Record<keyof SimulatorConnection, unknown>> | null;
  if (
    typeof fields !== 'object' ||
    fields === null ||
    typeof fields.armEndpoint !== 'string' ||
    typeof fields.adminToken !== 'string' ||
    !Array.isArray(fields.clusters)
  ) {
    throw new UsageError(
      `--sim-connect ${path}: not a simulator connection file (the one \`npm run sim\` writes, e.g. .sim/connection.json)`,
    );
  }
  const admin = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<SimTime> =>
    adminCall(connection, method, path, body);
  let time: SimTime;
  try {
    time = await admin('GET', '/time');
  } catch (error) {
    throw new Error(
      `--sim-connect ${path}: the simulator at ${connection.armEndpoint} does not answer ` +
        `(${messageOf(error)}): start it with \`npm run sim\` ` +
        `(it writes a new connection file) and run the command again`,
      { cause: error },
    );
  }
  // Local estimate of simulated time: the last answer plus wall time elapsed × factor.
  let anchor = { simMs: Date.parse(time.now), wallMs: performance.now() };
  const now = (): number =>
    time.mode === 'scaled'
      ? anchor.simMs + (performance.now() - anchor.wallMs) * time.timeFactor
      : anchor.simMs;
  return {
    connection,
    env: settingsForConnection(connection),
    endpoints: { armEndpoint: connection.armEndpoint, caPem: connection.caPem, armToken: SIM_ARM_TOKEN },
    clock: {
      virtual: true,
      now,
      async sleepUntil(epochMs: number): Promise<void> {
        time = await admin('POST', '/time/advance', { to: new Date(Math.max(epochMs, now())).toISOString() });
        anchor = { simMs: Date.parse(time.now), wallMs: performance.now() };
      },
    },
  };
}

function adminCall(
  connection: SimulatorConnection,
  method: string,
  path: string,
  body?: unknown,
): Promise<SimTime> {
  const url = new URL(`/_sim${path}`, connection.armEndpoint);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const call = request(
      url,
      {
        method,
        ca: connection.caPem,
        headers: {
          authorization: `Bearer ${connection.adminToken}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((response.statusCode ?? 500) >= 300) {
            reject(
              new Error(
                `calling simulator ${method} ${path}: HTTP ${response.statusCode}: ${text.slice(0, 200)}`,
              ),
            );
            return;
          }
          try {
            resolve(JSON.parse(text) as SimTime);
          } catch {
            reject(new Error(`calling simulator ${method} ${path}: the answer is not JSON`));
          }
        });
      },
    );
    call.on('error', (error) => reject(new Error(`calling simulator ${method} ${path}: ${error.message}`)));
    call.end(payload);
  });
}
