/** The explorer sample's choice of boundaries: by name and seed, never by position in the run's list. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { NamedBoundary } from './boundary-sample.js';
import { sampleBoundaries } from './boundary-sample.js';

function named(labels: string): NamedBoundary[] {
  return labels.split(' ').map((label) => {
    const [activity = '', occurrence = ''] = label.split('#');
    return { activity, occurrence: Number(occurrence) };
  });
}

function labels(boundaries: readonly NamedBoundary[]): string {
  return boundaries.map((b) => `${b.activity}#${b.occurrence}`).join(' ');
}

/** A drain-and-stop run's boundaries as boundariesOf gives them: polls at their first and last call. */
const RUN =
  'planPool#1 acquirePoolLease#1 protectNode#1 drainNodeStep#1 drainNodeStep#3 requestInstancePowerOff#1 ' +
  'readInstance#1 readInstance#4 requestSnapshot#1 readSnapshot#1 readSnapshot#2 restoreNode#1 releasePoolLease#1';

void describe('sampleBoundaries', () => {
  // The points themselves: a change of the draw (or of the seed) changes what every machine explores.
  const table: readonly { key: string; count: number; boundaries: string; picked: string }[] = [
    { key: 'refresh drain-and-stop\nkill', count: 1, boundaries: RUN, picked: 'protectNode#1' },
    {
      key: 'refresh drain-and-stop\nkill',
      count: 3,
      boundaries: RUN,
      picked: 'protectNode#1 requestInstancePowerOff#1 readInstance#4',
    },
    { key: 'refresh drain-and-stop\ncancel', count: 1, boundaries: RUN, picked: 'readInstance#1' },
    { key: 'retire\nkill', count: 1, boundaries: RUN, picked: 'readSnapshot#2' },
    { key: 'canary pass\nlease-lost', count: 1, boundaries: RUN, picked: 'acquirePoolLease#1' },
    // Fewer boundaries than asked for: all of them, in run order.
    {
      key: 'retire\nkill',
      count: 3,
      boundaries: 'planPool#1 readInstance#1',
      picked: 'planPool#1 readInstance#1',
    },
  ];
  for (const row of table) {
    void it(`${row.key.replace('\n', ' / ')}, ${row.count} of ${row.boundaries.split(' ').length}: ${row.picked}`, () => {
      assert.equal(labels(sampleBoundaries(named(row.boundaries), row.count, row.key)), row.picked);
    });
  }

  const keys = ['refresh drain-and-stop', 'retire', 'canary pass'].flatMap((variant) =>
    ['kill', 'kill-resume', 'cancel', 'lease-lost', 'node-deleted'].map((fault) => `${variant}\n${fault}`),
  );

  void it('does not depend on where a boundary stands in the list', () => {
    const run = named(RUN);
    const reordered = [...run.slice(7), ...run.slice(0, 7).reverse()];
    for (const key of keys) {
      for (const count of [1, 2, 4]) {
        assert.equal(
          labels(sampleBoundaries(reordered, count, key)),
          labels(sampleBoundaries(run, count, key)),
          key,
        );
      }
    }
  });

  void it('picks the same points when another machine polled more or fewer times elsewhere in the run', () => {
    const run = named(RUN);
    // Another machine's run: the lease taken at a second try, the drain polled twice more, the snapshot
    // read once less (every boundary after the lease stands one place later, up to the snapshot's).
    const other = named(
      RUN.replace('acquirePoolLease#1', 'acquirePoolLease#1 acquirePoolLease#2')
        .replace('drainNodeStep#3', 'drainNodeStep#5')
        .replace(' readSnapshot#2', ''),
    );
    const changed = new Set(['acquirePoolLease#2', 'drainNodeStep#3', 'drainNodeStep#5', 'readSnapshot#2']);
    let compared = 0;
    for (const key of keys) {
      const here = labels(sampleBoundaries(run, 1, key));
      const there = labels(sampleBoundaries(other, 1, key));
      // Only a boundary one machine lacks can be picked differently, and only where it wins the draw.
      if (changed.has(here) || changed.has(there)) continue;
      assert.equal(there, here, key);
      compared += 1;
    }
    assert.ok(compared >= keys.length - 4, `${compared} of ${keys.length} keys compared`);
  });

  void it('spreads the points of a run over its activities, one per activity before a second', () => {
    const picked = sampleBoundaries(named(RUN), 10, 'refresh drain-and-stop\nkill');
    assert.equal(new Set(picked.map((b) => b.activity)).size, 10);
    const chosen = new Set(keys.map((key) => labels(sampleBoundaries(named(RUN), 1, key))));
    assert.ok(chosen.size >= 6, `${chosen.size} distinct boundaries for ${keys.length} keys`);
  });

  void it('draws other points with another seed, the same with the same', () => {
    const run = named(RUN);
    const draw = (seed: string): string =>
      keys.map((key) => labels(sampleBoundaries(run, 1, key, seed))).join(',');
    assert.equal(draw('a seed'), draw('a seed'));
    assert.notEqual(draw('a seed'), draw('another seed'));
  });
});
