/**
 * The built CLI (builders/cli-entry.ts: its bundle) in a child process, as an operator runs it: exit code, stdout and
 * stderr, whatever the outcome. For tests that check what a command prints and how it exits.
 */
import { execFile } from 'node:child_process';

import { CLI_ENTRY } from './cli-entry.js';

export interface CliChildRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCliChild(
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs?: number },
): Promise<CliChildRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, ...args],
      { cwd: options.cwd, timeout: options.timeoutMs ?? 180_000, maxBuffer: 16 * 1024 * 1024 },
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
