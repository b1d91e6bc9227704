/**
 * Which boundaries of a run the explorer's sample strikes at: a function of the boundaries' names
 * (activity and occurrence), the point's key (variant and fault kind) and a fixed seed — never of their
 * positions in the run's list. The list's length differs between machines (a poll of a few calls more
 * or fewer), so a choice by index explored other points in CI than on a laptop, and a point found
 * harmful on one could not be found on the other.
 *
 * The choice is a rendezvous (highest-random-weight) draw on two levels: each activity of the run gets
 * a score from the seed, the key and its name, and each boundary of an activity a score from its name
 * with the occurrence; the first pick is the best boundary of the best activity, the next the best
 * boundary of the next activity, and so on (the second best of each once every activity has one). A
 * boundary that one machine has and another lacks (the last call of a longer poll) changes the choice
 * only when it would have been picked itself; which activity is picked never depends on how many times
 * it was polled.
 */
import { createHash } from 'node:crypto';

/** A boundary's name: the activity called and which call of it (1-based). */
export interface NamedBoundary {
  readonly activity: string;
  readonly occurrence: number;
}

/** The seed of the test suite's sample: changing it explores other points on every machine alike. */
export const SAMPLE_SEED = 'vmss-prototype explorer sample 1';

function score(seed: string, key: string, name: string): bigint {
  return createHash('sha256').update(`${seed}\n${key}\n${name}`).digest().readBigUInt64BE(0);
}

/**
 * `count` of `boundaries` (all of them, in run order, when there are no more), chosen by name for the
 * point key `key` (e.g. `<variant>\n<fault>`) and `seed`, in the order they were picked.
 */
export function sampleBoundaries<T extends NamedBoundary>(
  boundaries: readonly T[],
  count: number,
  key: string,
  seed: string = SAMPLE_SEED,
): T[] {
  if (boundaries.length <= count) return [...boundaries];
  const byActivity = new Map<string, { score: bigint; boundaries: { score: bigint; boundary: T }[] }>();
  for (const boundary of boundaries) {
    let group = byActivity.get(boundary.activity);
    if (group === undefined) {
      group = { score: score(seed, key, boundary.activity), boundaries: [] };
      byActivity.set(boundary.activity, group);
    }
    const name = `${boundary.activity}#${boundary.occurrence}`;
    group.boundaries.push({ score: score(seed, key, name), boundary });
  }
  const descending = (a: { score: bigint }, b: { score: bigint }): number =>
    a.score === b.score ? 0 : a.score > b.score ? -1 : 1;
  const activities = [...byActivity.values()].sort(descending);
  for (const group of activities) group.boundaries.sort(descending);
  const picked: T[] = [];
  for (let round = 0; picked.length < count; round += 1) {
    for (const group of activities) {
      const candidate = group.boundaries[round];
      if (candidate !== undefined && picked.length < count) picked.push(candidate.boundary);
    }
  }
  return picked;
}
