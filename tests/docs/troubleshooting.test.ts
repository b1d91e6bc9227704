// docs/troubleshooting.md explains messages the product really prints: the text of each heading is in
// the source (placeholders `<…>` and elisions `…` stand for what varies).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { readRepoFile, repoFiles } from './docs-files.js';

/** The product's source as one text, string concatenations joined and escaped backticks plain. */
const source = ['cli', 'shared', 'functions', 'sim']
  .flatMap((dir) => repoFiles(dir, ['.ts', '.cjs']))
  .map((path) =>
    readRepoFile(path)
      .replaceAll(/(['"`])\s*\+\s*\n?\s*(['"`])/g, '')
      .replaceAll('\\`', '`'),
  )
  .join('\n');

/** Headings that are a code span (``double backticks`` when the message holds a backtick). */
const headings = [...readRepoFile('docs/troubleshooting.md').matchAll(/^### (`+) ?(.+?) ?\1$/gm)].map(
  (match) => match[2] ?? '',
);

void describe('docs/troubleshooting.md', () => {
  void it('has messages to check', () => {
    assert.ok(headings.length >= 25, String(headings.length));
  });

  for (const heading of headings) {
    void it(heading, () => {
      const fragments = heading
        .split(/<[^>]*>|…/)
        .map((fragment) => fragment.replaceAll(/^[\s():;,.]+|[\s():;,.]+$/g, ''))
        .filter((fragment) => fragment.length >= 6);
      assert.ok(fragments.length > 0, 'something to look for');
      const missing = fragments.filter((fragment) => !source.includes(fragment));
      assert.deepEqual(missing, []);
    });
  }
});
