// How a run-once pod's command ends in the simulator (the canary's check pod): sim/world/prep-runs.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { oneShotExit } from '../../../sim/world/one-shot-run.js';

void describe('oneShotExit', () => {
  const cases: readonly [readonly string[], number][] = [
    [['true'], 0],
    [['false'], 1],
    [['sh', '-c', 'exit 0'], 0],
    [['sh', '-c', 'test -e /dev/kvm || exit 3'], 3],
    [['sh', '-c', 'echo checking; false'], 1],
    [['/bin/check', '--all'], 0],
  ];
  for (const [words, code] of cases) {
    void it(`${words.join(' ')} → ${code}`, () => assert.equal(oneShotExit(words), code));
  }
});
