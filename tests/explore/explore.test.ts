/**
 * The fault-space explorer in the test suite: the points where outside probes found a pool harmed, and
 * the split of the sample (every run variant × every fault kind at one boundary each, sample.ts) into
 * its shard files (sample-<k>.test.ts). Every point must keep every invariant once unattended recovery
 * is over. `npm run explore` runs the whole space.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { type Finding, FINDINGS } from './findings.js';
import { explorePoint } from './point.js';
import { SAMPLE_SHARDS, samplePairs, sampleShard } from './sample.js';
import { boundariesOf, FAULT_KINDS, VARIANTS } from './space.js';

void describe('fault-space explorer', { concurrency: false, timeout: 40 * 60_000 }, () => {
  void it('boundaries: a poll stretch is explored at its first and last call', () => {
    assert.deepEqual(boundariesOf(['a', 'b', 'b', 'b', 'c', 'b']), [
      { activity: 'a', occurrence: 1 },
      { activity: 'b', occurrence: 1 },
      { activity: 'b', occurrence: 3 },
      { activity: 'c', occurrence: 1 },
      { activity: 'b', occurrence: 4 },
    ]);
  });

  void it(
    "the outside probes' findings leave no harm after unattended recovery",
    { timeout: 10 * 60_000 },
    async () => {
      const byName = (name: string) => {
        const variant = VARIANTS.find((candidate) => candidate.name === name);
        assert.ok(variant, name);
        return variant;
      };
      const findings: readonly Finding[] = [
        // A VM stopped while the API server is away: it must run again.
        { variant: 'refresh drain-and-stop', boundary: 'requestSnapshot#1', fault: 'kube-down-20m' },
        // The reaper starting a stopped VM while ARM is away: the node stays marked until the VM runs.
        { variant: 'release', boundary: 'readInstance#1', fault: 'arm-down-20m' },
        // Killed while the canary tests: the model must not stay on the untested version.
        { variant: 'canary pass', boundary: 'observeCanaries#2', fault: 'kill' },
        { variant: 'canary fail', boundary: 'observeCanaries#2', fault: 'kill' },
        // Stopped by the operator while the node is given back, or the snapshot taken: nothing held, nothing
        // published.
        { variant: 'refresh drain-and-stop', boundary: 'restoreNode#1', fault: 'ctrl-c' },
        { variant: 'refresh drain-and-stop', boundary: 'requestSnapshot#1', fault: 'ctrl-c' },
        { variant: 'refresh drain-and-stop', boundary: 'readSnapshot#1', fault: 'cancel' },
        ...FINDINGS,
      ];
      const failures: string[] = [];
      for (const finding of findings) {
        const [activity = '', occurrence = '1'] = finding.boundary.split('#');
        const point = await explorePoint(
          byName(finding.variant),
          { activity, occurrence: Number(occurrence) },
          finding.fault,
        );
        assert.ok(point.reached, `${finding.variant} reaches ${finding.boundary}`);
        failures.push(
          ...point.violations.map(
            (v) => `${finding.variant} / ${finding.fault} at ${finding.boundary}: ${v}`,
          ),
        );
      }
      assert.deepEqual(failures, []);
    },
  );

  void it('the sample is split into its shard files, every variant × fault kind in exactly one', () => {
    const pairs = samplePairs();
    assert.equal(pairs.length, VARIANTS.length * FAULT_KINDS.length);
    const shards = Array.from({ length: SAMPLE_SHARDS }, (_, k) => sampleShard(k + 1));
    assert.deepEqual(shards.flat(), pairs);
    // A shard whose file is missing would drop its points: one file per shard, no more.
    const sources = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'explore');
    const files = readdirSync(sources)
      .filter((name) => /^sample-\d+\.test\.ts$/.test(name))
      .sort();
    const expected = shards.map((_, k) => `sample-${k + 1}.test.ts`).sort();
    assert.deepEqual(files, expected);
    // A variant or fault kind added later lands in a shard without a file changing.
    const more = samplePairs(VARIANTS, [...FAULT_KINDS.map((fault) => fault.kind), 'kill']);
    const grown = Array.from({ length: SAMPLE_SHARDS }, (_, k) => sampleShard(k + 1, more));
    assert.equal(grown.flat().length, more.length);
  });
});
