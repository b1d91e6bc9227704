/** Finds the repository root from the compiled or the source test file, and reads files relative to it. */

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from dist/tests/infra/ (compiled) or tests/infra/ (source). */
export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

function findRepoRoot(start: string): string {
  let directory = start;
  for (let depth = 0; depth < 6; depth += 1) {
    try {
      readFileSync(join(directory, 'package.json'));
      return directory;
    } catch {
      directory = dirname(directory);
    }
  }
  throw new Error(`finding the repository root from ${start}: no package.json above it`);
}

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}
