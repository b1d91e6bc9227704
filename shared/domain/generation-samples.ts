/**
 * Nodes per generation over time: the pool lease's lasting record
 * `vmss-prototype.io/generation-samples` (LEASE_ANNOTATIONS.generationSamples), written by every run's
 * labelling step while it holds the pool, read by `status` and drawn on the status page. Pure.
 *
 * The record is JSON, oldest first: `[{"at":"2026-11-27T02:10:00.000Z","counts":{"2026.1127.1":4,"unknown":2}}]`.
 * It is bounded (MAX_GENERATION_SAMPLES samples, MAX_GENERATION_SAMPLES_CHARS characters; the oldest go
 * first), and a value that is not such JSON reads as no samples: an annotation anyone can edit never
 * breaks `status`.
 *
 * A sample is a reading; the chart draws a straight line between two readings. A run of identical
 * readings keeps its first (when the pool reached that state) and its last (that it still was so then):
 * the ones between say nothing more, so the record grows only when the pool changes. A repeat within
 * REPEAT_WITHIN_SECONDS of the last reading (a retried activity, a run right after another) is dropped.
 */
import { parseRfc3339 } from './rfc3339.js';

export interface GenerationSample {
  /** When the nodes were counted (RFC 3339). */
  readonly at: string;
  /**
   * Nodes per generation: the node label `vmss-prototype.io/image-version` (`unknown` for the pool's
   * original image). Generations without nodes are left out.
   */
  readonly counts: Readonly<Record<string, number>>;
}

export const MAX_GENERATION_SAMPLES = 48;
/** Kubernetes allows 256 KiB for all of an object's annotations together; this record takes a few. */
export const MAX_GENERATION_SAMPLES_CHARS = 8_192;
export const REPEAT_WITHIN_SECONDS = 300;

/** A node whose generation is not labelled yet (it joined after the last labelling), as `status` counts it. */
export const UNLABELLED_GENERATION = 'unlabelled';

const MAX_NAME_CHARS = 128;
const MAX_COUNT = 100_000;

/** Nodes per generation, keys in order, from one generation per node. */
export function countGenerations(generations: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const generation of generations) counts.set(generation, (counts.get(generation) ?? 0) + 1);
  return Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The samples a record holds, oldest first; whatever is not a well-formed sample is left out. */
export function parseGenerationSamples(value: string | undefined): GenerationSample[] {
  if (value === undefined || value.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const samples = parsed.flatMap((entry: unknown) => {
    const sample = sampleOf(entry);
    return sample === undefined ? [] : [sample];
  });
  return bounded(sortByTime(samples));
}

function sampleOf(entry: unknown): GenerationSample | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { at, counts } = entry as { at?: unknown; counts?: unknown };
  if (typeof at !== 'string' || parseRfc3339(at) === undefined) return undefined;
  if (typeof counts !== 'object' || counts === null || Array.isArray(counts)) return undefined;
  const kept: [string, number][] = [];
  for (const [name, count] of Object.entries(counts as Record<string, unknown>)) {
    if (name === '' || name.length > MAX_NAME_CHARS) return undefined;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_COUNT) {
      return undefined;
    }
    if (count > 0) kept.push([name, count]);
  }
  return { at, counts: Object.fromEntries(kept) };
}

export function serialiseGenerationSamples(samples: readonly GenerationSample[]): string {
  return JSON.stringify(samples.map(({ at, counts }) => ({ at, counts })));
}

/** The samples with `sample` added (see the module comment for repeats), within the bounds. */
export function appendGenerationSample(
  samples: readonly GenerationSample[],
  sample: GenerationSample,
): GenerationSample[] {
  const atMs = parseRfc3339(sample.at);
  if (atMs === undefined) return [...samples];
  const added = { at: sample.at, counts: withoutEmpty(sample.counts) };
  const last = samples.at(-1);
  const lastMs = last === undefined ? undefined : parseRfc3339(last.at);
  if (last === undefined || lastMs === undefined || atMs < lastMs) {
    // Older than the newest reading (another runner's clock): kept in its place.
    if (samples.some((s) => s.at === added.at && sameCounts(s.counts, added.counts))) return [...samples];
    return bounded(sortByTime([...samples, added]));
  }
  if (!sameCounts(last.counts, added.counts)) return bounded([...samples, added]);
  if (atMs - lastMs < REPEAT_WITHIN_SECONDS * 1000) return [...samples];
  const before = samples.at(-2);
  // The last one already marks the end of a run of identical readings: it moves to the new reading.
  if (before !== undefined && sameCounts(before.counts, added.counts)) {
    return bounded([...samples.slice(0, -1), added]);
  }
  return bounded([...samples, added]);
}

/** The record's new value with one more reading: what the labelling step writes on the lease. */
export function recordGenerationSample(current: string | undefined, sample: GenerationSample): string {
  return serialiseGenerationSamples(appendGenerationSample(parseGenerationSamples(current), sample));
}

function withoutEmpty(counts: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
}

function sameCounts(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  const left = Object.entries(withoutEmpty(a));
  const right = withoutEmpty(b);
  return left.length === Object.keys(right).length && left.every(([name, count]) => right[name] === count);
}

function sortByTime(samples: readonly GenerationSample[]): GenerationSample[] {
  return samples
    .map((sample, index) => ({ sample, index, ms: parseRfc3339(sample.at) ?? 0 }))
    .sort((a, b) => a.ms - b.ms || a.index - b.index)
    .map(({ sample }) => sample);
}

/** The newest samples that fit both bounds (at least the newest one). */
function bounded(samples: readonly GenerationSample[]): GenerationSample[] {
  let kept = samples.slice(-MAX_GENERATION_SAMPLES);
  while (kept.length > 1 && serialiseGenerationSamples(kept).length > MAX_GENERATION_SAMPLES_CHARS) {
    kept = kept.slice(1);
  }
  return kept;
}
