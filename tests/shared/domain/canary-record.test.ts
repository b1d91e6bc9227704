import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CanaryRecord } from '../../../shared/domain/canary-record.js';
import {
  canaryRecordTags,
  decideCanaryGiveBack,
  parseCanaryRecord,
  restoringImageReference,
  sameImageReference,
  withoutCanaryRecord,
} from '../../../shared/domain/canary-record.js';

const VERSION_ID =
  '/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/galleries/gal/images/pool/versions/2026.1123.10000';
const RECORD: CanaryRecord = {
  run: 'refresh:prod:pool',
  version: '2026.1123.10000',
  startedAt: '2026-11-23T10:00:00.000Z',
  priorImage: {
    publisher: 'Canonical',
    offer: '0001-com-ubuntu-server-jammy',
    sku: '22_04-lts-gen2',
    version: 'latest',
  },
  priorCapacity: 3,
  count: 1,
};

void describe('canary record in scale-set tags', () => {
  void it("round-trips, beside the scale set's own tags, and every value fits a tag", () => {
    const tags = { owner: 'team-a', ...canaryRecordTags({ ...RECORD, instances: ['7'] }) };
    for (const value of Object.values(tags)) assert.ok(value.length <= 256);
    assert.deepEqual(parseCanaryRecord(tags), { kind: 'record', record: { ...RECORD, instances: ['7'] } });
    assert.deepEqual(withoutCanaryRecord(tags), { owner: 'team-a' });
  });
  void it('a long prior image id is split over several tags and read back whole', () => {
    const priorImage = {
      id: `/subscriptions/s/resourceGroups/${'g'.repeat(80)}/providers/Microsoft.Compute/galleries/${'x'.repeat(80)}/images/${'y'.repeat(80)}/versions/1.2.3`,
    };
    const parsed = parseCanaryRecord(canaryRecordTags({ ...RECORD, priorImage }));
    assert.deepEqual(parsed.kind === 'record' ? parsed.record.priorImage : undefined, priorImage);
  });
  void it('no record, and a damaged one', () => {
    assert.deepEqual(parseCanaryRecord({ owner: 'x' }), { kind: 'none' });
    assert.equal(parseCanaryRecord({ 'vmss-prototype.canary-run': 'r' }).kind, 'damaged');
  });
  void it('restoring nulls the fields the prior image did not have (a merge patch removes them)', () => {
    assert.deepEqual(restoringImageReference(RECORD.priorImage)['id'], null);
    assert.ok(sameImageReference({ id: VERSION_ID.toUpperCase() }, { id: VERSION_ID }));
    assert.ok(!sameImageReference(RECORD.priorImage, { id: VERSION_ID }));
  });
});

void describe('decideCanaryGiveBack (a dead run)', () => {
  const facts = {
    record: { ...RECORD, instances: ['7'] },
    deadRun: RECORD.run,
    modelImage: { id: VERSION_ID },
    version: { id: VERSION_ID, published: false, succeeded: true },
    instances: [{ instanceId: '0' }, { instanceId: '7', imageVersionId: VERSION_ID }],
  };
  void it('restores the model, deletes the recorded canaries, abandons the version', () => {
    const decision = decideCanaryGiveBack(facts);
    assert.equal(decision.kind, 'give-back');
    if (decision.kind !== 'give-back') return;
    assert.deepEqual(decision.restoreImage, RECORD.priorImage);
    assert.deepEqual(decision.deleteInstances, ['7']);
    assert.equal(decision.abandonVersion, true);
  });
  void it('before the canaries were recorded, finds them by their image', () => {
    const decision = decideCanaryGiveBack({ ...facts, record: RECORD });
    assert.deepEqual(decision.kind === 'give-back' ? decision.deleteInstances : [], ['7']);
  });
  void it("another run's canary is never touched", () => {
    assert.equal(decideCanaryGiveBack({ ...facts, deadRun: 'refresh:prod:other' }).kind, 'nothing');
  });
  void it('a version already published keeps its canaries and the model', () => {
    const decision = decideCanaryGiveBack({ ...facts, version: { ...facts.version, published: true } });
    assert.deepEqual(decision.kind === 'give-back' ? [decision.deleteInstances, decision.restoreImage] : [], [
      [],
      undefined,
    ]);
  });
  void it('a model another tool moved stays as it is', () => {
    const decision = decideCanaryGiveBack({ ...facts, modelImage: { id: 'other' } });
    assert.equal(decision.kind === 'give-back' ? decision.restoreImage : 'x', undefined);
  });
});
