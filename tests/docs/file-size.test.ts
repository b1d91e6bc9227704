// Product and simulator files stay small: one over the limit is named in docs/conventions.md's File size table, with
// its reason, and a row of that table names a file that is still large (else it is stale).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readRepoFile, repoFiles } from './docs-files.js';

/** About 400 lines, with room for a few lines of growth before the table must be touched. */
const LIMIT = 420;
const PRODUCT_DIRS = ['functions', 'shared', 'cli', 'sim'];

function lineCount(path: string): number {
  return readRepoFile(path).split('\n').length - 1;
}

function listedFiles(): Set<string> {
  const conventions = readRepoFile('docs/conventions.md');
  const section = conventions.slice(conventions.indexOf('## File size'));
  return new Set([...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] ?? ''));
}

void describe('file size', () => {
  const listed = listedFiles();

  void it('every product or simulator file over the limit is listed in docs/conventions.md with its reason', () => {
    const large = PRODUCT_DIRS.flatMap((dir) => repoFiles(dir, ['.ts']))
      .filter((path) => lineCount(path) > LIMIT)
      .map((path) => `${path} (${lineCount(path)} lines)`);
    const unlisted = large.filter((entry) => !listed.has(entry.split(' ')[0] ?? ''));
    assert.deepEqual(unlisted, [], 'split these files, or add a row with the reason to the File size table');
  });

  void it('every listed file exists and is still larger than about 400 lines', () => {
    assert.ok(listed.size > 0, 'the File size table was not found');
    const stale = [...listed].filter((path) => {
      try {
        return lineCount(path) <= 400;
      } catch {
        return true;
      }
    });
    assert.deepEqual(stale, [], 'remove these rows from the File size table: the files are gone or small');
  });
});
