// The repository is its own source of truth: no tracked file cites a document that is not in it, every
// `docs/<page>.md#<anchor>` a file cites resolves, and the commits on top of main keep their subjects short.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';

import { anchorOf, repoFiles, ROOT } from './docs-files.js';

/**
 * The documents that live beside the repository, never in it. Built from parts, so that this file does
 * not match its own patterns.
 */
const OUTSIDE: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  { what: 'the design notes outside the repository', pattern: new RegExp(`\\b${'DESIGN'}\\.md\\b`) },
  { what: 'the style notes outside the repository', pattern: new RegExp(`\\b${'STYLE'}\\.md\\b`) },
  { what: 'research notes outside the repository', pattern: new RegExp(`\\b${'research'}/[\\w.-]+\\.md\\b`) },
];

/** A relative path to a `shared` folder: fine when it stays inside the repository (`../shared/domain`). */
const RELATIVE_SHARED = new RegExp(`(?:\\.\\./)+${'shared'}\\b`, 'g');

/** A citation of one of our pages, with an optional anchor: `docs/design.md#the-reaper`. */
const DOCS_CITATION = /(?<![\w/.-])(?:\.\.\/)*docs\/([\w-]+\.md)(?:#([\w-]+))?/g;

/** The main commit this check starts from: the commits after it must keep the subject rule. */
const MAIN_BASE = '418bfa9b1578204738162fe7de246b92685fb1cd';
const SUBJECT_LIMIT = 72;

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** The tracked files (`git ls-files`), or every file of the tree when git or its index is not there. */
function trackedFiles(): string[] {
  const listed = git(['ls-files', '-z']);
  if (listed === undefined) return repoFiles('.', ['']);
  return listed.split('\0').filter((path) => path !== '' && existsSync(join(ROOT, path)));
}

/** The file's text, or undefined for a binary file (a NUL byte in its first 8 000 bytes). */
function textOf(path: string): string | undefined {
  const bytes = readFileSync(join(ROOT, path));
  if (bytes.subarray(0, 8000).includes(0)) return undefined;
  return bytes.toString('utf8');
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

const headingsByPage = new Map<string, Set<string>>();

/** The anchors of a page's headings, as GitHub makes them. */
function anchorsOf(page: string): Set<string> {
  const known = headingsByPage.get(page);
  if (known !== undefined) return known;
  const anchors = new Set<string>();
  for (const line of readFileSync(join(ROOT, 'docs', page), 'utf8').split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(anchorOf(heading.replaceAll('`', '')));
  }
  headingsByPage.set(page, anchors);
  return anchors;
}

const files = trackedFiles()
  .map((path) => ({ path, text: textOf(path) }))
  .filter((file): file is { path: string; text: string } => file.text !== undefined);

void describe('the repository is self-contained', () => {
  void it('reads the tracked files', () => {
    for (const path of ['README.md', 'docs/design.md', 'docs/conventions.md', 'package.json']) {
      assert.ok(
        files.some((file) => file.path === path),
        path,
      );
    }
  });

  void it('no tracked file cites a document that lives outside the repository', () => {
    const problems: string[] = [];
    for (const { path, text } of files) {
      for (const { what, pattern } of OUTSIDE) {
        const found = pattern.exec(text);
        if (found !== null) problems.push(`${path}:${lineOf(text, found.index)}: ${found[0]} (${what})`);
      }
      for (const found of text.matchAll(RELATIVE_SHARED)) {
        const inside = relative(ROOT, join(ROOT, dirname(path), found[0]));
        if (inside.startsWith('..')) {
          problems.push(`${path}:${lineOf(text, found.index)}: ${found[0]} leaves the repository`);
        }
      }
    }
    assert.deepEqual(problems, [], 'cite a docs/… section of this repository or the public source instead');
  });

  void it('every docs/<page>.md#<anchor> a file cites exists', () => {
    const problems: string[] = [];
    for (const { path, text } of files) {
      for (const found of text.matchAll(DOCS_CITATION)) {
        const [citation, page = '', anchor] = found;
        if (!existsSync(join(ROOT, 'docs', page))) {
          problems.push(`${path}:${lineOf(text, found.index)}: ${citation}: no such page`);
        } else if (anchor !== undefined && !anchorsOf(page).has(anchor)) {
          problems.push(`${path}:${lineOf(text, found.index)}: ${citation}: no heading #${anchor}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  void it(`commit subjects after main's ${MAIN_BASE.slice(0, 7)} are at most ${SUBJECT_LIMIT} characters`, (t) => {
    if (git(['rev-parse', '--is-inside-work-tree'])?.trim() !== 'true') {
      t.skip('not a git work tree');
      return;
    }
    if (git(['cat-file', '-e', `${MAIN_BASE}^{commit}`]) === undefined) {
      t.skip(`commit ${MAIN_BASE.slice(0, 7)} is not in this clone's history (a shallow clone?)`);
      return;
    }
    const log = git(['log', '--format=%h%x09%s', `${MAIN_BASE}..HEAD`]);
    if (log === undefined) {
      t.skip('git log failed');
      return;
    }
    const long = log
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const [hash = '', ...subject] = line.split('\t');
        return { hash, subject: subject.join('\t') };
      })
      .filter(({ subject }) => [...subject].length > SUBJECT_LIMIT)
      .map(({ hash, subject }) => `${hash} (${[...subject].length} characters): ${subject}`);
    assert.deepEqual(long, [], `keep a commit subject to ${SUBJECT_LIMIT} characters, the why in the body`);
  });
});
