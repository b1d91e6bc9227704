// The stopped-VM record on a scale set's tags: written, read back, removed only for its run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseStopRecords, stopRecordTag, withoutStopRecord } from '../../../shared/domain/stop-record.js';

void describe('stop record', () => {
  void it('round-trips through the tags, next to tags of others', () => {
    const tags = { owner: 'team', ...stopRecordTag({ instanceId: '3', runId: 'run-1' }) };
    assert.deepEqual(tags, { owner: 'team', 'vmss-prototype.stopped.3': 'run-1' });
    assert.deepEqual(parseStopRecords(tags), [{ instanceId: '3', runId: 'run-1' }]);
    assert.deepEqual(parseStopRecords({ 'VMSS-Prototype.Stopped.aks-x_1': '' }), [
      { instanceId: 'aks-x_1', runId: 'unknown' },
    ]);
  });

  void it("is removed for its own run, or for any run when none is named; another run's stays", () => {
    const tags = { owner: 'team', 'vmss-prototype.stopped.3': 'run-1' };
    assert.deepEqual(withoutStopRecord(tags, '3', 'run-1'), { owner: 'team' });
    assert.deepEqual(withoutStopRecord(tags, '3', 'run-2'), tags);
    assert.deepEqual(withoutStopRecord(tags, '3'), { owner: 'team' });
    assert.deepEqual(withoutStopRecord(tags, '4'), tags);
  });

  void it('refuses an instance id that cannot name a tag', () => {
    assert.throws(() => stopRecordTag({ instanceId: 'a/b', runId: 'r' }), RangeError);
  });
});
