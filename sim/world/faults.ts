/**
 * Injected failures: rules that make the ARM or Kubernetes endpoint answer with an error instead of
 * serving a request, by operation pattern, count, simulated time window and seeded probability.
 */
import type { FaultInjector, InjectedFault, SimClock } from '../contracts.js';

export type FaultApi = 'arm' | 'kube';

/** A rule as added from a scenario or at run time. */
export interface FaultRuleSpec {
  /** Stable name so a rule can be listed and removed; generated when absent. */
  id?: string;
  api: FaultApi;
  /**
   * Exact operation or a glob (`*` any run of characters, `?` one character), matched case-insensitively,
   * e.g. `Microsoft.Compute/snapshots/write`, `Microsoft.Compute/*`, `pods/eviction:create`, `*`.
   * ARM long-running operations are checked once more when they would complete, as `<operation>#lro`; a
   * fault there makes the operation end `Failed` with the fault's code and message.
   */
  operation: string;
  status: number;
  code: string;
  message: string;
  retryAfterSeconds?: number;
  /** Fire this many times, then retire. Absent: unlimited (within the window). */
  times?: number;
  /** Simulated-time window, epoch ms; absent bounds are open. */
  fromMs?: number;
  untilMs?: number;
  /** Chance (0–1] that a matching request fails; drawn from the injector's seeded PRNG. */
  probability?: number;
}

export interface FaultRule extends FaultRuleSpec {
  id: string;
  /** How many requests this rule has failed so far. */
  fired: number;
}

export interface WorldFaults extends FaultInjector {
  add(spec: FaultRuleSpec): FaultRule;
  remove(id: string): boolean;
  clear(): void;
  rules(): FaultRule[];
}

export interface FaultInjectorOptions {
  clock: SimClock;
  /** PRNG seed for probabilistic rules, so a scenario fails the same requests on every run. */
  seed?: number;
}

/** mulberry32: tiny, fast and good enough to decide which request fails. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Compiles a glob where `*` matches any run of characters and `?` exactly one. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('')
    .map((char) => {
      if (char === '*') return '.*';
      if (char === '?') return '.';
      return char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${body}$`, 'i');
}

export function validateFaultRule(spec: FaultRuleSpec): void {
  const where = `fault rule ${spec.id ?? spec.operation}`;
  if (!spec.operation) throw new Error(`adding ${where}: operation must not be empty`);
  if (!Number.isInteger(spec.status) || spec.status < 400 || spec.status > 599) {
    throw new Error(`adding ${where}: status must be an HTTP error status (400–599), got ${spec.status}`);
  }
  if (spec.times !== undefined && (!Number.isInteger(spec.times) || spec.times < 1)) {
    throw new Error(`adding ${where}: times must be a positive integer, got ${spec.times}`);
  }
  if (spec.probability !== undefined && !(spec.probability > 0 && spec.probability <= 1)) {
    throw new Error(`adding ${where}: probability must be in (0, 1], got ${spec.probability}`);
  }
  if (spec.fromMs !== undefined && spec.untilMs !== undefined && spec.untilMs <= spec.fromMs) {
    throw new Error(`adding ${where}: the window ends before it starts`);
  }
}

export function createFaultInjector(options: FaultInjectorOptions): WorldFaults {
  const { clock } = options;
  const random = seededRandom(options.seed ?? 1);
  const rules: { rule: FaultRule; pattern: RegExp }[] = [];
  let nextId = 1;

  function exhausted(rule: FaultRule): boolean {
    return rule.times !== undefined && rule.fired >= rule.times;
  }

  return {
    check(api, operation): InjectedFault | undefined {
      const now = clock.nowMs();
      for (const { rule, pattern } of rules) {
        if (rule.api !== api || exhausted(rule)) continue;
        if (rule.fromMs !== undefined && now < rule.fromMs) continue;
        if (rule.untilMs !== undefined && now >= rule.untilMs) continue;
        if (!pattern.test(operation)) continue;
        // Draw only for matching rules so adding an unrelated rule does not shift which requests fail.
        if (rule.probability !== undefined && random() >= rule.probability) continue;
        rule.fired += 1;
        const fault: InjectedFault = { status: rule.status, code: rule.code, message: rule.message };
        if (rule.retryAfterSeconds !== undefined) fault.retryAfterSeconds = rule.retryAfterSeconds;
        return fault;
      }
      return undefined;
    },
    add(spec) {
      validateFaultRule(spec);
      const id = spec.id ?? `fault-${nextId++}`;
      if (rules.some(({ rule }) => rule.id === id))
        throw new Error(`adding fault rule ${id}: the id is taken`);
      const rule: FaultRule = { ...spec, id, fired: 0 };
      rules.push({ rule, pattern: globToRegExp(spec.operation) });
      return { ...rule };
    },
    remove(id) {
      const index = rules.findIndex(({ rule }) => rule.id === id);
      if (index < 0) return false;
      rules.splice(index, 1);
      return true;
    },
    clear() {
      rules.length = 0;
    },
    rules() {
      return rules.map(({ rule }) => ({ ...rule }));
    },
  };
}

/** Window helper for presets: from now for `seconds`. */
function windowFromNow(
  clock: SimClock,
  seconds: number,
  startInSeconds = 0,
): { fromMs: number; untilMs: number } {
  const fromMs = clock.nowMs() + startInSeconds * 1000;
  return { fromMs, untilMs: fromMs + seconds * 1000 };
}

export interface StormOptions {
  /** How long it lasts, simulated seconds. */
  seconds: number;
  /** Delay before it starts, simulated seconds. */
  startInSeconds?: number;
  /** Glob of operations hit; default every operation. */
  operation?: string;
}

/**
 * ARM throttling as the Compute RP reports it: 429 with Retry-After, code `TooManyRequests`. Real ARM
 * would also lower `x-ms-ratelimit-remaining-*`; clients only need the status and Retry-After.
 */
export function arm429Storm(
  clock: SimClock,
  options: StormOptions & { retryAfterSeconds?: number },
): FaultRuleSpec {
  return {
    api: 'arm',
    operation: options.operation ?? '*',
    status: 429,
    code: 'TooManyRequests',
    message:
      "The request is being throttled as the limit has been reached for operation type - 'HighCostGet3Min'. " +
      'For more information, see - https://aka.ms/throttling',
    retryAfterSeconds: options.retryAfterSeconds ?? 17,
    ...windowFromNow(clock, options.seconds, options.startInSeconds),
  };
}

/** A burst of server errors: the next `count` matching ARM requests fail with 500 (or the given status). */
export function arm5xxBurst(options: {
  count: number;
  operation?: string;
  status?: 500 | 502 | 503;
}): FaultRuleSpec {
  const status = options.status ?? 500;
  return {
    api: 'arm',
    operation: options.operation ?? '*',
    status,
    code: status === 503 ? 'ServiceUnavailable' : 'InternalServerError',
    message: 'An internal execution error occurred. Please retry later.',
    times: options.count,
  };
}

/** The next image version creation is accepted but its long-running operation ends Failed. */
export function imageVersionLroFailure(options: { count?: number } = {}): FaultRuleSpec {
  return {
    api: 'arm',
    operation: 'Microsoft.Compute/galleries/images/versions/write#lro',
    status: 500,
    code: 'ReplicationJobsNotCompleted',
    message:
      'Replication job not completed at this time. Please check the provisioning state of the image version and retry.',
    times: options.count ?? 1,
  };
}

/**
 * Snapshot creation accepted (the create call returned), then the copy ends `Failed`: what a run that
 * starts its donor as soon as the snapshot is taken must survive without building from it.
 */
export function snapshotLroFailure(options: { count?: number } = {}): FaultRuleSpec {
  return {
    api: 'arm',
    operation: 'Microsoft.Compute/snapshots/write#lro',
    status: 500,
    code: 'InternalDiskManagementError',
    message: 'An internal disk management error occurred while creating the snapshot. Please retry.',
    times: options.count ?? 1,
  };
}

/** Snapshot creation refused for quota, as CRP reports it. */
export function snapshotQuotaExceeded(options: { count?: number } = {}): FaultRuleSpec {
  const spec: FaultRuleSpec = {
    api: 'arm',
    operation: 'Microsoft.Compute/snapshots/write',
    status: 409,
    code: 'OperationNotAllowed',
    message:
      'Operation could not be completed as it results in exceeding approved Total Regional Snapshots quota. ' +
      'Current Limit: 200, Current Usage: 200, Additional Required: 1.',
  };
  if (options.count !== undefined) spec.times = options.count;
  return spec;
}

/** The Kubernetes API server is unreachable for a while (503 from every endpoint, as from a dead LB backend). */
export function kubeApiDown(clock: SimClock, options: StormOptions): FaultRuleSpec {
  return {
    api: 'kube',
    operation: options.operation ?? '*',
    status: 503,
    code: 'ServiceUnavailable',
    message: 'the server is currently unable to handle the request',
    retryAfterSeconds: 1,
    ...windowFromNow(clock, options.seconds, options.startInSeconds),
  };
}
