/**
 * The simulator seam (docs/local-host.md): the VMSSP_SIMULATOR* app settings that point a Functions host on
 * a developer's machine at `npm run sim` (its ARM endpoint, the CA of its certificates, the token it
 * accepts) instead of Azure and the managed identity. Honoured only under the explicit flag, only on a
 * loopback endpoint, and never on an App Service instance.
 */

import { z } from 'zod';

import { PEM_FORMAT, PemCertificate } from './pem.js';
import { redact } from './secret-reference.js';
import { fromZodIssue, type RawIssue } from './settings-issues.js';
import type { SimulatorSettingsKey } from './settings-keys.js';

const GUIDE = 'docs/local-host.md';
const WRITER = '`npm run sim -- --function-app-settings <file>` writes it';

const ENDPOINT_ACCEPTS =
  "the simulator's ARM endpoint as `npm run sim` prints it: https://127.0.0.1:<port> or https://localhost:<port> (a loopback host; no path, credentials, query or fragment)";
const TOKEN_ACCEPTS =
  'the bearer token the simulator accepts on ARM: 1 to 4096 visible ASCII characters, no spaces';
const WAIT_SCALE_ACCEPTS =
  "a number from 0.01 to 1: the share of Azure's usual timings the product's polls wait for (1, the default, waits as against Azure)";

/** Whole-number or decimal text, e.g. `0.05`: nothing else is read as a scale (no exponent, no sign). */
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** 127.0.0.0/8, ::1 and localhost: the simulator listens on 127.0.0.1 only. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  const octets = host.split('.');
  return (
    octets.length === 4 &&
    octets[0] === '127' &&
    octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255)
  );
}

function isLoopbackHttpsOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (
      url.protocol === 'https:' &&
      isLoopbackHost(url.hostname) &&
      url.username === '' &&
      url.password === '' &&
      url.pathname === '/' &&
      url.search === '' &&
      url.hash === '' &&
      !value.includes('?') &&
      !value.includes('#')
    );
  } catch {
    return false;
  }
}

const FIELDS = {
  armEndpoint: z
    .string({ error: ENDPOINT_ACCEPTS })
    .refine(isLoopbackHttpsOrigin, { error: ENDPOINT_ACCEPTS })
    // The ARM client joins paths to it: one form whether or not the operator wrote the trailing slash.
    .transform((value) => new URL(value).origin),
  caPem: PemCertificate,
  armToken: z.string({ error: TOKEN_ACCEPTS }).regex(/^[\x21-\x7e]{1,4096}$/, { error: TOKEN_ACCEPTS }),
};

/**
 * `VMSSP_SIMULATOR_WAIT_SCALE`: the product's poll schedules (functions/orchestrations/timing.ts) are
 * Azure's observed timings; a simulator run with a fast latency profile at ×1 (a Functions host, or the
 * real Durable engine of docs/real-engine.md, whose timers run on wall time) shortens them by this share
 * so that a refresh takes a minute or two instead of twenty. Timeouts and the operator's own durations
 * (drain timeout, canary soak) are not scaled. Only with the seam on: against Azure every wait is Azure's.
 */
const WaitScale = z
  .string({ error: WAIT_SCALE_ACCEPTS })
  .regex(DECIMAL, { error: WAIT_SCALE_ACCEPTS })
  .transform(Number)
  .refine((scale) => scale >= 0.01 && scale <= 1, { error: WAIT_SCALE_ACCEPTS });

/** `Settings.simulator`: what the composition root reaches ARM with instead of Azure's endpoint and identity. */
export const SimulatorSettings = z.object({ ...FIELDS, waitScale: WaitScale.optional() });
export type SimulatorSettings = z.output<typeof SimulatorSettings>;

/** Which app setting feeds each field, in the order the issues name them. */
const KEY_OF_FIELD: Readonly<Record<keyof typeof FIELDS, SimulatorSettingsKey>> = {
  armEndpoint: 'VMSSP_SIMULATOR_ARM_ENDPOINT',
  caPem: 'VMSSP_SIMULATOR_CA',
  armToken: 'VMSSP_SIMULATOR_ARM_TOKEN',
};

const WAIT_SCALE_KEY: SimulatorSettingsKey = 'VMSSP_SIMULATOR_WAIT_SCALE';

const FIELD_ACCEPTS: Readonly<Record<keyof typeof FIELDS, string>> = {
  armEndpoint: ENDPOINT_ACCEPTS,
  caPem: PEM_FORMAT,
  armToken: TOKEN_ACCEPTS,
};

export interface SimulatorInput {
  /** The fields to parse into `Settings.simulator`: present only when the seam is on and nothing is wrong. */
  readonly input?: Readonly<Record<keyof typeof FIELDS, string>> & { readonly waitScale?: string };
  readonly issues: readonly RawIssue[];
}

/**
 * Reads the seam's settings. Off (the flag unset or `false`): none of the others may be set, so a stray
 * endpoint or token can never be half-applied. On: all three are required, and the flag is refused where
 * the app runs on App Service. Issues are keyed by app setting; the token is never echoed.
 */
export function readSimulatorSettings(env: Readonly<Record<string, string | undefined>>): SimulatorInput {
  const read = (key: string): string | undefined => {
    const value = env[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const issues: RawIssue[] = [];
  const flag = read('VMSSP_SIMULATOR');
  const on = flag?.toLowerCase() === 'true';
  if (flag !== undefined && !on && flag.toLowerCase() !== 'false') {
    issues.push({
      path: ['VMSSP_SIMULATOR'],
      received: JSON.stringify(flag.slice(0, 40)),
      expected: `"true" to run against the simulator on this machine (${GUIDE}), or unset`,
    });
  }
  const values: Partial<Record<keyof typeof FIELDS, string>> = {};
  for (const field of Object.keys(KEY_OF_FIELD) as (keyof typeof FIELDS)[]) {
    const key = KEY_OF_FIELD[field];
    const value = read(key);
    const shown = field === 'armToken' && value !== undefined ? redact(value) : undefined;
    if (!on) {
      if (value !== undefined) {
        issues.push({
          path: [key],
          received: `${shown ?? 'a value'} while VMSSP_SIMULATOR is not "true"`,
          expected: `unset: it points the app at the simulator and counts only with VMSSP_SIMULATOR=true on a developer's machine (${GUIDE}); remove it, or set VMSSP_SIMULATOR=true`,
        });
      }
      continue;
    }
    if (value === undefined) {
      issues.push({
        path: [key],
        received: 'nothing (not set)',
        expected: `${FIELD_ACCEPTS[field]}; required with VMSSP_SIMULATOR=true (${WRITER})`,
      });
      continue;
    }
    const parsed = FIELDS[field].safeParse(value, { reportInput: true });
    if (parsed.success) {
      values[field] = value;
      continue;
    }
    for (const issue of parsed.error.issues) {
      for (const raw of fromZodIssue(issue, [key]))
        issues.push(shown === undefined ? raw : { ...raw, received: shown });
    }
  }
  const waitScale = read(WAIT_SCALE_KEY);
  if (waitScale !== undefined) {
    if (!on) {
      issues.push({
        path: [WAIT_SCALE_KEY],
        received: `${JSON.stringify(waitScale.slice(0, 40))} while VMSSP_SIMULATOR is not "true"`,
        expected: `unset: it shortens the product's waits for a simulator run (${GUIDE}); against Azure every wait is Azure's`,
      });
    } else {
      const parsed = WaitScale.safeParse(waitScale, { reportInput: true });
      if (!parsed.success) {
        for (const issue of parsed.error.issues) issues.push(...fromZodIssue(issue, [WAIT_SCALE_KEY]));
      }
    }
  }
  if (on) {
    const sign = appServiceSign(env);
    if (sign !== undefined) {
      issues.push({
        path: ['VMSSP_SIMULATOR'],
        received: `"true" where ${sign}`,
        expected: `unset in Azure: the simulator seam is only for a Functions host on a developer's machine (${GUIDE}); remove every VMSSP_SIMULATOR* app setting`,
      });
    }
  }
  const { armEndpoint, caPem, armToken } = values;
  if (
    !on ||
    issues.length > 0 ||
    armEndpoint === undefined ||
    caPem === undefined ||
    armToken === undefined
  ) {
    return { issues };
  }
  return {
    input: { armEndpoint, caPem, armToken, ...(waitScale === undefined ? {} : { waitScale }) },
    issues,
  };
}

/**
 * Why the environment looks like a function app in Azure, or undefined. App Service sets
 * WEBSITE_INSTANCE_ID on every instance and WEBSITE_HOSTNAME to the app's host name; Core Tools
 * (`func start`) sets neither the first nor anything but `localhost:<port>` for the second.
 */
function appServiceSign(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if ((env['WEBSITE_INSTANCE_ID'] ?? '').trim() !== '') {
    return 'WEBSITE_INSTANCE_ID is set (App Service sets it on every instance of a function app)';
  }
  const hostname = (env['WEBSITE_HOSTNAME'] ?? '').trim();
  if (hostname === '') return undefined;
  const host = /^(\[[^\]]*\]|[^:]*)/.exec(hostname)?.[1] ?? hostname;
  if (isLoopbackHost(host)) return undefined;
  return `WEBSITE_HOSTNAME is ${JSON.stringify(hostname.slice(0, 80))}, not a loopback host (App Service sets the app's host name; Core Tools sets localhost:<port>)`;
}
