// The repository's Markdown links only to files inside the repository, and every such link (and its
// anchor) resolves.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';

import { anchorOf, readRepoFile, repoFiles, ROOT } from './docs-files.js';

const LINK = /\[[^\]]*\]\(([^)\s]+)\)/g;

function headingsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of readRepoFile(path).split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(anchorOf(heading.replaceAll('`', '')));
  }
  return anchors;
}

const markdown = repoFiles('.', ['.md']);

void describe('Markdown links', () => {
  void it('finds the documentation', () => {
    for (const path of ['README.md', 'docs/README.md', 'docs/configuration.md', 'infra/README.md']) {
      assert.ok(markdown.includes(path), path);
    }
  });

  for (const file of markdown) {
    void it(`${file}: every relative link stays in the repository and resolves`, () => {
      const problems: string[] = [];
      const text = readRepoFile(file);
      for (const match of text.matchAll(LINK)) {
        const target = match[1] ?? '';
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), path);
        const inside = relative(ROOT, resolved);
        if (inside.startsWith('..')) {
          problems.push(`${target}: outside the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          problems.push(`${target}: no such file`);
          continue;
        }
        if (
          anchor !== undefined &&
          anchor !== '' &&
          inside.endsWith('.md') &&
          !headingsOf(inside).has(anchor)
        ) {
          problems.push(`${target}: no heading #${anchor} in ${inside}`);
        }
      }
      if (/\.\.\/shared\/|\/work\//.test(text)) problems.push('mentions a path outside the repository');
      assert.deepEqual(problems, []);
    });
  }
});
