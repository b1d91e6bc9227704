// Table test: what a node's generation label is to an operator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { GenerationState } from '../../../shared/domain/generation-state.js';
import { describeGenerationState, generationStateOf } from '../../../shared/domain/generation-state.js';
import type { VersionVerdict } from '../../../shared/domain/version-verdict.js';

const VERDICTS = new Map<string, VersionVerdict>([
  ['2026.1127.3', { kind: 'rejected', reason: 'canary failed', at: '2026-11-27T10:00:00Z' }],
  ['2026.1127.4', { kind: 'abandoned', reason: 'canary never ended' }],
  ['2026.1127.1', { kind: 'none' }],
]);

const CASES: readonly [string | undefined, string | undefined, GenerationState, string][] = [
  ['2026.1127.2', '2026.1127.2', 'current', 'current'],
  ['2026.1127.1', '2026.1127.2', 'older', 'older'],
  ['2026.1127.3', '2026.1127.2', 'rejected', 'rejected v2026.1127.3'],
  // The model still points at a rejected version (its rollback has not happened): still rejected.
  ['2026.1127.3', '2026.1127.3', 'rejected', 'rejected v2026.1127.3'],
  ['2026.1127.4', '2026.1127.2', 'abandoned', 'abandoned v2026.1127.4'],
  ['unknown', '2026.1127.2', 'original', "the pool's original image"],
  [undefined, '2026.1127.2', 'unlabelled', 'not labelled yet'],
  ['unlabelled', undefined, 'unlabelled', 'not labelled yet'],
  ['2026.1127.9', undefined, 'older', 'older'],
];

void describe('generationStateOf', () => {
  for (const [generation, current, state, words] of CASES) {
    void it(`${generation ?? '(no label)'} with ${current ?? 'no version of ours'} current: ${state}`, () => {
      assert.equal(generationStateOf({ generation, current, verdicts: VERDICTS }), state);
      assert.equal(describeGenerationState(state, generation), words);
    });
  }
});
