/**
 * The fault-space explorer's sample for the test suite: every run variant × every fault kind at one
 * boundary each (chosen by name and a fixed seed, boundary-sample.ts). The pairs are split into
 * SAMPLE_SHARDS fixed shards (tests/shards.ts), one test file each (`sample-<k>.test.ts`), so that the
 * suite's two processes share the sample; together they explore exactly the points of the whole sample,
 * and a variant or fault kind added to space.ts lands in a shard by itself. Every point must keep every
 * invariant once unattended recovery is over. `npm run explore` runs the whole space.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';

import { shardOf } from '../shards.js';
import type { ExploreReport } from './explore.js';
import { reportTable, violationList } from './explore.js';
import type { FaultKind, Variant } from './space.js';
import { FAULT_KINDS, VARIANTS } from './space.js';

/** How many test files the sample is split into (sample-1.test.ts … sample-<n>.test.ts). */
export const SAMPLE_SHARDS = 8;

export interface SamplePair {
  readonly variant: string;
  readonly fault: FaultKind;
}

/** Every variant × fault kind pair of the sample, variant by variant (the order the shards slice). */
export function samplePairs(
  variants: readonly Variant[] = VARIANTS,
  faults: readonly FaultKind[] = FAULT_KINDS.map((fault) => fault.kind),
): SamplePair[] {
  return variants.flatMap((variant) => faults.map((fault) => ({ variant: variant.name, fault })));
}

/** The pairs of shard `shard` (1-based) of SAMPLE_SHARDS. */
export function sampleShard(shard: number, pairs: readonly SamplePair[] = samplePairs()): SamplePair[] {
  return shardOf(pairs, shard, SAMPLE_SHARDS);
}

/**
 * The pairs explored, one boundary each, on a worker thread (sample-worker.ts). node:test follows every
 * asynchronous resource of the thread its tests run on (an async hook with a destroy callback: a weak
 * handle for each promise, and the collector's work to clear it), which cost about a twentieth of a
 * shard's CPU; the worker's thread has no such hook. The points and the report are the same.
 */
function exploreOnWorker(pairs: readonly SamplePair[], signal: AbortSignal): Promise<ExploreReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./sample-worker.js', import.meta.url), { workerData: pairs });
    const stop = (): void => void worker.terminate();
    signal.addEventListener('abort', stop, { once: true });
    let report: ExploreReport | undefined;
    worker.once('message', (message: ExploreReport) => (report = message));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      signal.removeEventListener('abort', stop);
      if (report !== undefined) resolve(report);
      else reject(new Error(`the explorer's worker ended (exit code ${code}) without a report`));
    });
  });
}

/** The test of one shard: its points explored, each keeping every invariant. */
export function describeSampleShard(shard: number): void {
  void describe(`fault-space explorer sample, shard ${shard} of ${SAMPLE_SHARDS}`, () => {
    void it('its points of the whole space keep every invariant', { timeout: 40 * 60_000 }, async (t) => {
      const pairs = sampleShard(shard);
      const report = await exploreOnWorker(pairs, t.signal);
      t.diagnostic(`\n${reportTable(report)}`);
      assert.equal(report.points.length, pairs.length);
      assert.equal(violationList(report), '');
    });
  });
}
