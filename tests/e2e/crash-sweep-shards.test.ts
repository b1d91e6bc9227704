/**
 * The crash sweeps' split into shard files (fixtures/crash-sweep.ts): by the killed activity's name, so
 * that the shards' own uninterrupted runs, which poll a different number of times on the scaled clock,
 * still share every kill point out exactly once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CRASH_SHARDS, everyBoundary, killPointsOfShard, liveKillPoints } from './fixtures/crash-sweep.js';

/** A run's activities with `polls` rounds of each poll. */
function run(polls: number): string[] {
  const poll = (name: string): string[] => Array.from({ length: polls }, () => name);
  return [
    'acquirePoolLease',
    'readScaleSet',
    'protectNode',
    ...poll('readPowerOffSignals'),
    'requestSnapshot',
    ...poll('readSnapshot'),
    'requestImageVersion',
    ...poll('readImageVersion'),
    'requestCopyDiskDeletion',
    'readCopyDisk',
    'updateModel',
    'releasePoolLease',
  ];
}

/** Each kill point as its activity's name and occurrence (the sweep kills by that, not by index). */
function named(activities: readonly string[], points: readonly number[]): string[] {
  return points.map((killAfter) => {
    const name = activities[killAfter - 1] ?? '?';
    const occurrence = activities.slice(0, killAfter).filter((done) => done === name).length;
    return `${name}#${occurrence}`;
  });
}

void describe('the crash sweeps split into shards', () => {
  for (const [mode, killPoints] of [
    ['drain-and-stop', everyBoundary],
    ['live', liveKillPoints],
  ] as const) {
    void it(`${mode}: every kill point of a run is in exactly one shard, whatever its poll count`, () => {
      for (const polls of [1, 2, 4]) {
        const activities = run(polls);
        const whole = named(activities, killPoints(activities));
        const shards = Array.from({ length: CRASH_SHARDS }, (_, k) =>
          named(activities, killPointsOfShard(killPoints, k + 1, CRASH_SHARDS)(activities)),
        );
        assert.ok(CRASH_SHARDS > 1);
        for (const shard of shards) assert.ok(shard.length > 0, 'no shard is empty');
        assert.deepEqual(shards.flat().sort(), [...whole].sort(), `${polls} polls: the shards are the whole`);
        assert.equal(new Set(shards.flat()).size, whole.length, `${polls} polls: no point twice`);
      }
    });
  }

  void it("puts an activity's every occurrence in the same shard in every run", () => {
    const shardOfName = (polls: number): Map<string, number> => {
      const activities = run(polls);
      const found = new Map<string, number>();
      for (let k = 1; k <= CRASH_SHARDS; k += 1) {
        for (const point of killPointsOfShard(everyBoundary, k, CRASH_SHARDS)(activities)) {
          found.set(activities[point - 1] ?? '?', k);
        }
      }
      return found;
    };
    assert.deepEqual(shardOfName(1), shardOfName(3));
  });
});
