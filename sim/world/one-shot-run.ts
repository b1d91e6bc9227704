/**
 * A run-once pod that is not a host script (the canary's check pod) run for real: its command runs in
 * the real shell (real-shell.ts) over a root of its own — the container's filesystem, empty but for the
 * directories every root has, with the machine's /usr standing in for the image's tools (the pinned
 * busybox the product's docs use has the same POSIX tools) — never over the node's disk. What it prints,
 * stdout and stderr as written, is its log, and its exit status is the container's exit code.
 *
 * As Kubernetes documents the container environment
 * (https://kubernetes.io/docs/concepts/containers/container-environment/): the container's hostname is
 * the pod's name, and the environment variables of the container's `env` are set (with HOSTNAME, as
 * containerd and CRI-O set it). No network (the sandbox has none); service-link variables
 * (FOO_SERVICE_HOST, …) are not set. `sleep` is simulated time the pod's end waits for.
 *
 * Without bwrap, or for a command the machine does not have, the modelled outcome stands
 * (`oneShotExit` below, `oneShotLog` in one-shot-output.ts).
 */
import { existsSync } from 'node:fs';

import { oneShotLog } from './one-shot-output.js';
import { findBwrap, runInRealShell } from './real-shell.js';

export interface OneShotInput {
  /** The container's command and args. */
  readonly words: readonly string[];
  /** The container's `env` (name → value). */
  readonly env: Readonly<Record<string, string>>;
  readonly podName: string;
  /** Simulated now (`date` answers it). */
  readonly nowMs: number;
}

export interface OneShotOutcome {
  readonly exitCode: number;
  /** The container's log, line by line. */
  readonly log: string[];
  /** Simulated seconds the command slept: the pod ends that much later. */
  readonly sleptSeconds: number;
  readonly shell: 'real' | 'modelled';
}

/** Where a command word names a program of the machine, as the sandbox's PATH would find it. */
function onMachine(program: string): boolean {
  if (program.startsWith('/')) return existsSync(program);
  return !program.includes('/') && ['/usr/bin', '/usr/sbin'].some((dir) => existsSync(`${dir}/${program}`));
}

/** Runs a one-shot pod's command: in the real shell when it can, else as modelled. */
export function runOneShot(input: OneShotInput): OneShotOutcome {
  const program = input.words[0];
  if (program === undefined || findBwrap() === null || !onMachine(program)) {
    return {
      exitCode: oneShotExit(input.words),
      log: oneShotLog(input.words, input.env),
      sleptSeconds: 0,
      shell: 'modelled',
    };
  }
  const result = runInRealShell({
    argv: input.words,
    disk: { files: {}, images: [] },
    hostname: input.podName,
    nowMs: input.nowMs,
    env: { HOSTNAME: input.podName, ...input.env },
  });
  const log = result.output.split('\n');
  if (log.at(-1) === '') log.pop();
  return { exitCode: result.exitCode, log, sleptSeconds: result.sleptSeconds, shell: 'real' };
}

/**
 * How a run-once pod's command ends when it cannot run in the real shell (sim/README.md, run-once pods):
 * `true` → 0, `false` → 1, a shell line ending in `exit N` → N; anything else is taken to succeed.
 */
export function oneShotExit(words: readonly string[]): number {
  const last = words.at(-1)?.trim() ?? '';
  if (words.length === 1 && last === 'false') return 1;
  if (words.length === 1 && last === 'true') return 0;
  const exit = /(?:^|[;&|\s])exit\s+(\d{1,3})\s*$/.exec(last);
  if (exit?.[1] !== undefined) return Number(exit[1]);
  if (/(?:^|[;&|\s])false\s*$/.test(last)) return 1;
  return 0;
}
