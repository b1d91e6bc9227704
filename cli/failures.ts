/**
 * How the CLI reports a failure: the message (which says what to do) and the exit code. Expected failures
 * — bad usage, bad settings or scenario files, Azure, the cluster or the simulator refusing or not
 * answering — print their message only; a stack trace is printed only for a programming error (a bug).
 */
import { SettingsError } from '../shared/config/settings-issues.js';
import { isRefreshError } from '../shared/domain/errors.js';
import { definedOnly } from '../shared/domain/optional.js';
import { UsageError } from './args.js';
import { giveBackAdvice } from './give-back-advice.js';

export interface FailureReport {
  /** 1: something failed or could not be reached; 2: bad usage or settings, nothing started. */
  readonly exitCode: 1 | 2;
  readonly message: string;
  /** Only for programming errors, so that the report of a bug carries its trace. */
  readonly stack?: string;
}

/** Errors that only a mistake in the code raises. */
const BUG_ERRORS = new Set([
  'TypeError',
  'ReferenceError',
  'RangeError',
  'SyntaxError',
  'EvalError',
  'URIError',
  'AssertionError',
]);

export function describeFailure(error: unknown): FailureReport {
  if (error instanceof UsageError) {
    const help =
      error.command === undefined ? 'vmss-prototype --help' : `vmss-prototype ${error.command} --help`;
    return { exitCode: 2, message: `${error.message}\n(see ${help})` };
  }
  if (error instanceof SettingsError) return { exitCode: 2, message: withSettingsHint(error.message) };
  if (!(error instanceof Error)) return { exitCode: 1, message: String(error) };
  // The simulator's scenario file is given on the command line: a mistake in it is a usage error.
  if (error.name === 'ScenarioError') return { exitCode: 2, message: error.message };
  if (isRefreshError(error) || !BUG_ERRORS.has(error.name)) {
    return { exitCode: 1, message: withResumeHint(error.message) };
  }
  return {
    exitCode: 1,
    message: `unexpected failure (a bug; please report it with the trace below): ${error.message}`,
    ...definedOnly({ stack: error.stack }),
  };
}

/**
 * The local runner refuses to start an instance whose earlier run is still recorded as running: that
 * run was interrupted (killed, Ctrl-C): resuming it finishes it; `release` gives back what it holds without
 * finishing it.
 */
function withResumeHint(message: string): string {
  const running = /\binstance (\S+) is already (?:Running|Pending)\b/.exec(message);
  if (running === null) return message;
  const instanceId = running[1] ?? '';
  // `refresh:<cluster>:<pool>`: the pool whose leftovers `release` gives back instead.
  const pool = /^refresh:[^:]+:(.+)$/.exec(instanceId)?.[1];
  const release = pool === undefined ? '' : `; or instead, ${giveBackAdvice(pool)}`;
  return (
    `${message}: an earlier run was interrupted; continue it with \`vmss-prototype refresh --resume ${instanceId}\` ` +
    `(same settings and --state-dir)${release}; see docs/interrupted-runs.md`
  );
}

/**
 * No settings at all (a first try without Azure): where settings come from, and the simulator that needs
 * none.
 */
function withSettingsHint(message: string): string {
  if (!/VMSSP_CLUSTERS: got nothing \(not set\)/.test(message)) return message;
  return (
    `${message}\nno settings were given: pass --settings local.settings.json (see ` +
    'local.settings.sample.json and docs/configuration.md) or set them in the environment; to try it on a ' +
    'simulated cluster without Azure, add --sim (e.g. `vmss-prototype status --sim`)'
  );
}

/** The text written to stderr for a failure. */
export function failureText(report: FailureReport, program = 'vmss-prototype'): string {
  return `${program}: ${report.message}${report.stack === undefined ? '' : `\n${report.stack}`}\n`;
}
