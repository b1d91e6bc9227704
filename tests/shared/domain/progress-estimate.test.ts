import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { secondsToFinish } from '../../../shared/domain/progress-estimate.js';

void describe('secondsToFinish: the rest at the pace so far', () => {
  const cases: readonly [string, number, number | undefined, number | undefined][] = [
    ['half done after 300 s: 300 s more', 300, 50, 300],
    ['86 % after 660 s: about 107 s more', 660, 86, (660 * 14) / 86],
    ['99 % after 664 s: seconds more', 664, 99, 664 / 99],
    ['no progress reported: nothing to say', 660, undefined, undefined],
    ['0 %: nothing to say (no pace yet)', 660, 0, undefined],
    ['100 %: done or about to be', 660, 100, undefined],
    ['no time elapsed: nothing to say', 0, 50, undefined],
    ['a nonsense progress: nothing to say', 660, Number.NaN, undefined],
  ];
  for (const [name, elapsed, progress, expected] of cases) {
    void it(name, () => assert.equal(secondsToFinish(elapsed, progress), expected));
  }
});
