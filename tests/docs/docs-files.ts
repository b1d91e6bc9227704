// Reading the repository's Markdown for the documentation tests.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const SKIPPED = new Set(['node_modules', 'dist', '.git', '.ci', '.runs', '.sim']);

/** Every file under `dir` (relative to the repository root) whose name ends with one of `endings`. */
export function repoFiles(dir: string, endings: readonly string[]): string[] {
  const found: string[] = [];
  const pending = [join(ROOT, dir)];
  while (pending.length > 0) {
    const current = pending.pop() ?? '';
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (SKIPPED.has(entry.name) || entry.name.startsWith('dist-')) continue;
      const full = join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (endings.some((ending) => entry.name.endsWith(ending))) found.push(relative(ROOT, full));
    }
  }
  return found.sort();
}

export function readRepoFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The text between two marker comments of a Markdown file. */
export function section(text: string, name: string): string {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const start = text.indexOf(begin);
  const stop = text.indexOf(end);
  if (start === -1 || stop < start) throw new Error(`reading the documentation: no ${name} section`);
  return text.slice(start + begin.length, stop);
}

/** The first cells of a Markdown table that are code spans: `| \`x\` | … |` → x. */
export function codeRows(table: string): string[] {
  return table
    .split('\n')
    .map((line) => /^\|\s*`([^`]+)`\s*\|/.exec(line.trim())?.[1])
    .filter((cell): cell is string => cell !== undefined);
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replaceAll(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');
}
