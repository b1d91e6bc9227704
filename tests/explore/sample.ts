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

import { shardOf } from '../shards.js';
import { explore, reportTable, violationList } from './explore.js';
import type { FaultKind, Variant } from './space.js';
import { FAULT_KINDS, VARIANTS } from './space.js';

/** How many test files the sample is split into (sample-1.test.ts … sample-<n>.test.ts). */
export const SAMPLE_SHARDS = 6;

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

/** The test of one shard: its points explored, each keeping every invariant. */
export function describeSampleShard(shard: number): void {
  void describe(`fault-space explorer sample, shard ${shard} of ${SAMPLE_SHARDS}`, () => {
    void it('its points of the whole space keep every invariant', { timeout: 40 * 60_000 }, async (t) => {
      const pairs = sampleShard(shard);
      const chosen = new Set(pairs.map((pair) => `${pair.variant}\n${pair.fault}`));
      const report = await explore({
        variants: VARIANTS,
        boundariesPerFault: 1,
        select: (variant, fault) => chosen.has(`${variant.name}\n${fault}`),
      });
      t.diagnostic(`\n${reportTable(report)}`);
      assert.equal(report.points.length, pairs.length);
      assert.equal(violationList(report), '');
    });
  });
}
