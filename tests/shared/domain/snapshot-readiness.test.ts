import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  mustWaitForSnapshotCompletion,
  type SnapshotCompletionWait,
} from '../../../shared/domain/snapshot-readiness.js';

void describe('mustWaitForSnapshotCompletion', () => {
  const cases: readonly [SnapshotCompletionWait, string | undefined, boolean, string][] = [
    ['auto', 'Premium_LRS', false, 'a Premium SSD snapshot is usable once taken'],
    ['auto', 'StandardSSD_LRS', false, 'Standard SSD: no background copy'],
    ['auto', 'Standard_LRS', false, 'Standard HDD: no background copy'],
    ['auto', 'PremiumV2_LRS', true, 'Premium SSD v2 fills its snapshot in the background'],
    ['auto', 'UltraSSD_LRS', true, 'Ultra fills its snapshot in the background'],
    ['auto', 'ultrassd_lrs', true, 'disk types compare case-insensitively'],
    ['auto', undefined, false, 'an unknown type is none of those (they cannot be OS disks)'],
    ['always', 'Premium_LRS', true, 'always waits'],
    ['always', undefined, true, 'always waits, type unknown'],
    ['never', 'UltraSSD_LRS', false, 'never waits, even where auto would'],
  ];
  for (const [setting, type, expected, why] of cases) {
    void it(`${setting}, ${type ?? 'unknown type'}: ${expected ? 'waits' : 'starts at once'} (${why})`, () => {
      assert.equal(mustWaitForSnapshotCompletion(setting, type), expected);
    });
  }
});
