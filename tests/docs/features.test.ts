/**
 * The documentation never calls a built feature unbuilt (design.md listed retirement under
 * "not supported" after `retire` shipped). Each feature names the files that implement it (the test fails
 * when one is gone: then the feature, or this list, changed) and the words that name it in prose; no
 * sentence of docs/ or the README that names it may say it is not built, not yet there, or planned.
 * infra/README.md is the infrastructure's own document and is checked by tests/infra.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { readRepoFile, repoFiles, ROOT } from './docs-files.js';

interface Feature {
  readonly name: string;
  /** Words that name it in a sentence. */
  readonly words: RegExp;
  /** Files that implement it. */
  readonly files: readonly string[];
}

const FEATURES: readonly Feature[] = [
  {
    name: 'retirement of older generations',
    words: /\bretir(?:e|es|ing|ement)\b|\bolder generations?\b/i,
    files: ['shared/domain/retirement.ts', 'functions/orchestrations/retire-pool.orchestration.ts'],
  },
  {
    name: 'live capture',
    words: /\blive capture\b/i,
    files: ['shared/domain/live-capture.ts'],
  },
  {
    name: 'canary gate',
    words: /\bcanar(?:y|ies)\b/i,
    files: ['shared/domain/canary.ts'],
  },
  {
    name: 'rollback',
    words: /\brollback\b|\brolls? back\b/i,
    files: ['shared/domain/rollback.ts', 'functions/orchestrations/rollback-pool.orchestration.ts'],
  },
  {
    name: 'run events on Event Grid',
    words: /\bevent grid\b|\bevents topic\b|\brun events\b/i,
    files: ['shared/adapters/eventgrid'],
  },
  {
    name: 'status page',
    words: /\bstatus page\b/i,
    files: ['cli/status-page.ts', 'shared/application/status-page'],
  },
  {
    name: 'metrics',
    words: /\bmetrics\b|\bopentelemetry\b/i,
    files: ['shared/adapters/opentelemetry/metrics.ts'],
  },
  {
    name: 'release and the reaper',
    words: /\breaper\b|`release`/i,
    files: [
      'functions/orchestrations/release-pool.orchestration.ts',
      'functions/orchestrations/reap-cluster.orchestration.ts',
    ],
  },
];

/** What says a thing is not there. */
const NOT_BUILT =
  /\bnot (?:yet )?built\b|\bnot yet\b|\bnot used yet\b|\b(?:is|are) planned\b|\bplanned for\b|\bnot (?:yet )?(?:implemented|supported)\b|\bfuture work\b/i;

const DOCS = [...repoFiles('docs', ['.md']), 'README.md'];

/**
 * Sentences of a Markdown text, with the line each starts on: wrapped lines are joined into their
 * paragraph, list item or table row first (a statement may wrap), then split at sentence ends and cells.
 */
function sentences(text: string): { line: number; text: string }[] {
  const blocks: { line: number; text: string }[] = [];
  text.split('\n').forEach((line, index) => {
    const last = blocks.at(-1);
    const starts = line.trim() === '' || /^\s*(?:[-*] |\d+\. |\||#|```)/.test(line);
    if (last === undefined || starts || last.text === '') blocks.push({ line: index + 1, text: line.trim() });
    else last.text = `${last.text} ${line.trim()}`;
  });
  return blocks.flatMap((block) =>
    block.text.split(/(?<=[.!?;])\s+|\s+\|\s+/).map((part) => ({ line: block.line, text: part })),
  );
}

void describe('the documentation calls no built feature unbuilt', () => {
  for (const feature of FEATURES) {
    void it(`${feature.name}: implemented, and never called unbuilt`, () => {
      for (const file of feature.files) {
        assert.ok(existsSync(join(ROOT, file)), `${file} (${feature.name}) is missing: update this list`);
      }
      const wrong: string[] = [];
      for (const doc of DOCS) {
        for (const sentence of sentences(readRepoFile(doc))) {
          if (feature.words.test(sentence.text) && NOT_BUILT.test(sentence.text)) {
            wrong.push(`${doc}:${sentence.line}: ${sentence.text.trim().slice(0, 200)}`);
          }
        }
      }
      assert.deepEqual(wrong, [], `${feature.name} is built, yet these say otherwise`);
    });
  }

  void it('the check sees a statement that a built feature is not built', () => {
    const said = sentences('Retiring older generations is not built yet.');
    assert.ok(said.some((s) => FEATURES[0]?.words.test(s.text) === true && NOT_BUILT.test(s.text)));
  });
});
