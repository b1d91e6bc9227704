/**
 * The fault-space explorer's sample for the test suite: every run variant × every fault kind at one
 * boundary each (a different one per fault kind, spread over the run), plus the points where outside
 * probes found a pool harmed. Every point must keep every invariant once unattended recovery
 * is over. `npm run explore` runs the whole space.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { explore, reportTable, violationList } from './explore.js';
import { type Finding, FINDINGS } from './findings.js';
import { explorePoint } from './point.js';
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

  void it('a sample of the whole space keeps every invariant', { timeout: 40 * 60_000 }, async (t) => {
    const report = await explore({ variants: VARIANTS, boundariesPerFault: 1 });
    t.diagnostic(`\n${reportTable(report)}`);
    assert.equal(report.points.length, VARIANTS.length * FAULT_KINDS.length);
    assert.equal(violationList(report), '');
  });
});
