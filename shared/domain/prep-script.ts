/**
 * The script the one-shot prep pod runs in the host's namespaces (or Azure Run Command runs as root on
 * the host) before the OS disk is captured (docs/design.md#capture; kamino's `image_tweaks`). It makes the disk boot as a new machine: nothing
 * that identifies the donor may survive, and what a new node needs to join its cluster must. Which files
 * that is depends on the pool's bootstrap flavour (bootstrap-flavour.ts). The last command powers the
 * host off, so the script must be idempotent and quick; it uses only `set`, `trap … EXIT`, `echo`,
 * `rm -rf`, `truncate -s 0`, `sync` and `systemctl poweroff` (POSIX sh and coreutils; the simulator runs
 * it in a real shell over the disk, sim/README.md).
 */
import { type BootstrapFlavour, identityPlan } from './bootstrap-flavour.js';

export interface PrepScriptInput {
  /** One line appended to /var/log/vmss-prototype-ancestry.log: which node, run and time built this image. */
  readonly ancestry: string;
  /** The pool's bootstrap flavour (default aks-engine, what the product has always captured). */
  readonly flavour?: BootstrapFlavour;
  /**
   * End with `systemctl poweroff` (default true: the prep pod's host powers itself off). Azure Run
   * Command passes false: a guest that powers off under the agent never reports the command's result,
   * so the product powers the VM off through the API once the script has reported success.
   */
  readonly powerOff?: boolean;
  /**
   * Print the script's exit status last (`vmss-prototype-prep-exit-status=N`, from an EXIT trap). Azure's
   * Linux Run Command reports `Enable succeeded` whatever the script's exit status, with only the tails of
   * its stdout and stderr (Azure/run-command-extension-linux `main/cmds.go` `enable`): this line is the
   * only way the product learns whether the script succeeded (`prepScriptReport`).
   */
  readonly reportExitStatus?: boolean;
}

/** The start of the line a Run Command prep script prints last: its exit status. */
export const PREP_EXIT_STATUS_PREFIX = 'vmss-prototype-prep-exit-status=';

/** Paths the aks-engine script removes (kept for callers that list them). */
export const PREP_REMOVED_PATHS: readonly string[] = identityPlan('aks-engine').removes;

/** Quotes a string for a POSIX shell single-quoted context. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}

/**
 * Builds the script. `systemctl poweroff --force` stops the VM without waiting for the kubelet; the
 * node was drained before. `sync` first, so the changes are on the disk the snapshot copies (and, without
 * the power-off, before the API's graceful shutdown).
 */
export function buildPrepScript(input: PrepScriptInput): string {
  return [
    'set -eu',
    // Under `set -e` a failing command ends the shell; the EXIT trap still runs, with its status in `$?`.
    ...(input.reportExitStatus === true ? [`trap 'echo "${PREP_EXIT_STATUS_PREFIX}$?"' EXIT`] : []),
    ...deIdentificationCommands(input, ''),
    'sync',
    ...(input.powerOff === false ? [] : ['systemctl poweroff --force --message=vmss-prototype']),
  ].join('\n');
}

/**
 * The prep pod's script for a flavour scrubbed on a copy only (ScrubTarget `copy-only`): the donor's disk
 * is left as it is — only flushed and powered off for the snapshot; its copy is scrubbed once the donor
 * is back (the copy-scrub of drain-and-stop).
 */
export function buildPowerOffScript(): string {
  return ['set -eu', 'sync', 'systemctl poweroff --force --message=vmss-prototype'].join('\n');
}

/**
 * The de-identification itself (ancestry line, removals, emptied files) for the flavour, applied to the
 * file tree mounted at `root` (`''`: the host's own `/`; live capture: where the OS disk's copy is
 * mounted). Every path is absolute under `root`, so the same plan scrubs the donor and its copy alike.
 */
export function deIdentificationCommands(input: PrepScriptInput, root: string): string[] {
  if (root !== '' && !/^\/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$/.test(root)) {
    throw new Error(`building the de-identification commands: ${root} is not an absolute directory path`);
  }
  const plan = identityPlan(input.flavour ?? 'aks-engine');
  if (root === '' && plan.scrub === 'copy-only') {
    // What it removes could never be given back to the donor (bootstrap-flavour.ts ScrubTarget).
    throw new Error(
      `building the de-identification commands: the ${plan.flavour} identity is removed from a copy of the disk only, never from the donor's own`,
    );
  }
  const ancestry = input.ancestry.replaceAll(/[\r\n]+/g, ' ');
  return [
    `echo ${shellQuote(ancestry)} >> ${root}/var/log/vmss-prototype-ancestry.log`,
    `rm -rf ${plan.removes.map((path) => `${root}${path}`).join(' ')}`,
    ...plan.empties.map((path) => `truncate -s 0 ${root}${path}`),
  ];
}

/** Quotes a string for a POSIX shell single-quoted context (for scripts built next to this one). */
export function quoteForShell(value: string): string {
  return shellQuote(value);
}

/** What a Run Command prep script's output says about how it ended. */
export type PrepScriptReport =
  | { readonly kind: 'succeeded' }
  /** It printed a non-zero exit status. `detail`: the end of what it printed, or that it printed nothing. */
  | { readonly kind: 'failed'; readonly exitStatus: number; readonly detail: string }
  /** No exit status line ends its stdout: it was cut short (killed, timed out) or its output was lost. */
  | { readonly kind: 'unreported'; readonly detail: string };

/** How much of a stream goes into a failure's detail (its end). */
const DETAIL_LIMIT = 600;

/**
 * Reads the exit status a prep script built with `reportExitStatus` printed last. Only that line decides:
 * stderr is neither success (a warning on stderr is not a failure) nor failure (a failing command may
 * print nothing, `false` under `set -e`), and stdout without the line as its last is not a success.
 */
export function prepScriptReport(stdout: string, stderr: string): PrepScriptReport {
  const lines = stdout.replaceAll('\r', '').split('\n');
  while (lines.length > 0 && lines.at(-1)?.trim() === '') lines.pop();
  const last = lines.at(-1)?.trim() ?? '';
  const printed = [stderr.trim(), lines.slice(0, -1).join('\n').trim()].filter((text) => text !== '');
  const detail =
    printed.length === 0 ? 'it printed nothing' : `it printed: ${tailOf(printed.join(' | '), DETAIL_LIMIT)}`;
  if (!last.startsWith(PREP_EXIT_STATUS_PREFIX)) {
    const all = [stderr.trim(), stdout.trim()].filter((text) => text !== '').join(' | ');
    return {
      kind: 'unreported',
      detail: all === '' ? 'it printed nothing' : `it printed: ${tailOf(all, DETAIL_LIMIT)}`,
    };
  }
  const status = last.slice(PREP_EXIT_STATUS_PREFIX.length);
  if (!/^\d{1,3}$/.test(status))
    return { kind: 'unreported', detail: `its last line was ${tailOf(last, 120)}` };
  const exitStatus = Number(status);
  return exitStatus === 0 ? { kind: 'succeeded' } : { kind: 'failed', exitStatus, detail };
}

function tailOf(text: string, limit: number): string {
  return text.length <= limit ? text : `…${text.slice(text.length - limit)}`;
}
