/**
 * The built CLI (dist/cli/main.js) in a child process, as an operator runs it: exit code, stdout and
 * stderr, whatever the outcome. For tests that check what a command prints and how it exits.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

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
      [CLI, ...args],
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
