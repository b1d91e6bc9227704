/**
 * Crash and resume with live capture (fixtures/crash-sweep.ts): killed at every boundary up to the image
 * version's request and at each of live capture's own activities after it. The image and model phases
 * are the same code as drain-and-stop's and are swept in crash-resume.test.ts; sweeping them twice would
 * double the suite's longest test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { everyBoundary, sweepCrashes } from './fixtures/crash-sweep.js';

/** The activities live capture adds after its own phase: the image from the copy disk, the disk's deletion. */
const LIVE_AFTER_CAPTURE = new Set(['requestImageVersion', 'requestCopyDiskDeletion', 'readCopyDisk']);

function liveKillPoints(activities: readonly string[]): number[] {
  const imageRequested = activities.indexOf('requestImageVersion');
  assert.ok(imageRequested > 0, 'the live run requested an image version');
  return everyBoundary(activities).filter(
    (killAfter) => killAfter - 1 <= imageRequested || LIVE_AFTER_CAPTURE.has(activities[killAfter - 1] ?? ''),
  );
}

void describe(
  'crash and resume at every activity boundary (capture mode live)',
  { concurrency: false, timeout: 30 * 60_000 },
  () => {
    void it('reaches the same end state wherever the runner is killed', { timeout: 30 * 60_000 }, (t) =>
      sweepCrashes(t, 'live', liveKillPoints),
    );
  },
);
