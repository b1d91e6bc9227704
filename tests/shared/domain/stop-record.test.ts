// The stopped-VM record on a scale set's tags (and on a CAPZ pool's lease, as one JSON annotation):
// written, read back, removed only for its run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  parseLeaseStopRecords,
  parseStopRecords,
  stopRecordTag,
  withLeaseStopRecord,
  withoutLeaseStopRecord,
  withoutStopRecord,
} from '../../../shared/domain/stop-record.js';

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

  void it('round-trips through the lease annotation, one entry per VM, a later run replacing an earlier', () => {
    const one = withLeaseStopRecord(undefined, { instanceId: '1', runId: 'run-1' });
    assert.equal(one, '{"1":"run-1"}');
    const two = withLeaseStopRecord(one, { instanceId: 'aks-x_2', runId: 'run-2' });
    assert.deepEqual(parseLeaseStopRecords(two), [
      { instanceId: '1', runId: 'run-1' },
      { instanceId: 'aks-x_2', runId: 'run-2' },
    ]);
    assert.equal(withLeaseStopRecord(one, { instanceId: '1', runId: 'run-3' }), '{"1":"run-3"}');
  });

  void it("is removed from the lease annotation for its own run or any run; another run's stays", () => {
    const value = '{"1":"run-1","2":"run-2"}';
    assert.equal(withoutLeaseStopRecord(value, '1', 'run-1'), '{"2":"run-2"}');
    assert.equal(withoutLeaseStopRecord(value, '1', 'run-2'), value);
    assert.equal(withoutLeaseStopRecord('{"1":"run-1"}', '1'), '', 'no record left: the empty value');
  });

  void it('reads an absent, empty or unreadable lease annotation as no record', () => {
    for (const value of [undefined, '', 'not json', '[1]', '{"1":5}']) {
      assert.deepEqual(parseLeaseStopRecords(value), [], String(value));
    }
  });
});
