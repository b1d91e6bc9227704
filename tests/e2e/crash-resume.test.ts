/**
 * Crash and resume with drain-and-stop capture, killed at every activity boundary: the world must end
 * exactly as an uninterrupted run leaves it (fixtures/crash-sweep.ts). Live capture's sweep is in
 * crash-resume-live.test.ts (two files: the node test runner runs them in parallel).
 */
import { describe, it } from 'node:test';

import { everyBoundary, sweepCrashes } from './fixtures/crash-sweep.js';

void describe(
  'crash and resume at every activity boundary (capture mode drain-and-stop)',
  { concurrency: false, timeout: 30 * 60_000 },
  () => {
    // One child process and one resume per kill point: minutes on two shared cores.
    void it('reaches the same end state wherever the runner is killed', { timeout: 30 * 60_000 }, (t) =>
      sweepCrashes(t, 'drain-and-stop', everyBoundary),
    );
  },
);
