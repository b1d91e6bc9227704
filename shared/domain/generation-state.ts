/**
 * What a node's generation (its `vmss-prototype.io/image-version` label) is to an operator: the version new
 * nodes get, an older one, one whose canary or an operator rejected (rolled back from) or whose canary never
 * ended, the pool's original image, or not labelled yet. `status --json` carries it per node and the status
 * page shows it: a node from a rejected version is "rejected vX", never just "older". Pure.
 */
import { UNLABELLED_GENERATION } from './generation-samples.js';
import { UNKNOWN_GENERATION } from './generations.js';
import type { VersionVerdict } from './version-verdict.js';

export type GenerationState = 'current' | 'older' | 'rejected' | 'abandoned' | 'original' | 'unlabelled';

export function generationStateOf(input: {
  /** The node's label; absent when it carries none yet. */
  readonly generation: string | undefined;
  /** The version new nodes get, when it is ours. */
  readonly current: string | undefined;
  /** The verdict of each of our versions, by name (versions without a verdict may be left out). */
  readonly verdicts: ReadonlyMap<string, VersionVerdict>;
}): GenerationState {
  const { generation } = input;
  if (generation === undefined || generation === UNLABELLED_GENERATION) return 'unlabelled';
  if (generation === UNKNOWN_GENERATION) return 'original';
  const verdict = input.verdicts.get(generation);
  // A rejected version stays rejected even when the model still points at it (a rollback not yet done).
  if (verdict?.kind === 'rejected') return 'rejected';
  if (verdict?.kind === 'abandoned') return 'abandoned';
  return generation === input.current ? 'current' : 'older';
}

/** In words, for a node of `generation` in that state: `rejected v2026.1127.1`, `older`, `current`. */
export function describeGenerationState(state: GenerationState, generation: string | undefined): string {
  switch (state) {
    case 'rejected':
    case 'abandoned':
      return `${state} v${generation ?? ''}`;
    case 'original':
      return "the pool's original image";
    case 'unlabelled':
      return 'not labelled yet';
    case 'current':
    case 'older':
      return state;
  }
}
