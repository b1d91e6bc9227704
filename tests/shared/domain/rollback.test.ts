import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { RollbackVersion } from '../../../shared/domain/rollback.js';
import { defaultRollbackTarget, planRollback } from '../../../shared/domain/rollback.js';

const DEFINITION = '/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/galleries/gal/images/pool';

function version(name: string, overrides: Partial<RollbackVersion> = {}): RollbackVersion {
  return {
    name,
    id: `${DEFINITION}/versions/${name}`,
    provisioningState: 'Succeeded',
    excludeFromLatest: false,
    tags: {},
    ...overrides,
  };
}

const V1 = version('2026.1101.10000');
const V2 = version('2026.1110.10000');
const V3 = version('2026.1120.10000');
const REJECTED = { 'vmss-prototype.rejected': 'canary: never joined' };

void describe('planRollback', () => {
  void it('by default goes to the newest usable version older than the current; hides and rejects the newer', () => {
    const plan = planRollback({
      versions: [V1, V2, V3],
      currentVersion: V3.name,
      pinned: false,
      definitionId: DEFINITION,
    });
    assert.deepEqual(plan, {
      kind: 'rollback',
      from: V3.name,
      to: V2.name,
      toId: V2.id,
      modelImageId: DEFINITION,
      hide: [V3.name],
      reject: [V3.name],
      unhideTarget: false,
    });
  });

  void it('a pinned model is pointed at the target version itself', () => {
    const plan = planRollback({
      versions: [V1, V2, V3],
      currentVersion: V3.name,
      pinned: true,
      definitionId: DEFINITION,
      to: V1.name,
    });
    assert.equal(plan.kind === 'rollback' ? plan.modelImageId : '', V1.id);
    assert.deepEqual(plan.kind === 'rollback' ? plan.hide : [], [V3.name, V2.name]);
  });

  void it('skips rejected and failed versions when choosing the default', () => {
    const plan = planRollback({
      versions: [
        V1,
        version(V2.name, { tags: REJECTED }),
        V3,
        version('2026.1115.10000', { provisioningState: 'Failed' }),
      ],
      currentVersion: V3.name,
      pinned: false,
      definitionId: DEFINITION,
    });
    assert.equal(plan.kind === 'rollback' ? plan.to : plan.reason, V1.name);
  });

  void it('puts a target an earlier rollback hid back in latest', () => {
    const plan = planRollback({
      versions: [V1, version(V2.name, { excludeFromLatest: true }), V3],
      currentVersion: V3.name,
      pinned: false,
      definitionId: DEFINITION,
      to: V2.name,
    });
    assert.equal(plan.kind === 'rollback' && plan.unhideTarget, true);
  });

  const refusals: readonly [string, Parameters<typeof planRollback>[0], RegExp][] = [
    [
      'a model not on our image',
      { versions: [V1], pinned: false, definitionId: DEFINITION },
      /nothing to roll back/,
    ],
    [
      'no older usable version',
      { versions: [V1], currentVersion: V1.name, pinned: false, definitionId: DEFINITION },
      /no retained, usable version is older than the current/,
    ],
    [
      'a target that is gone',
      {
        versions: [V1, V2],
        currentVersion: V2.name,
        pinned: false,
        definitionId: DEFINITION,
        to: '2025.1.1',
      },
      /version 2025\.1\.1 is gone.*retained: 2026\.1110\.10000, 2026\.1101\.10000/,
    ],
    [
      'a target that is not Succeeded',
      {
        versions: [version(V1.name, { provisioningState: 'Failed' }), V2],
        currentVersion: V2.name,
        pinned: false,
        definitionId: DEFINITION,
        to: V1.name,
      },
      /is Failed, not Succeeded/,
    ],
    [
      'a rejected target, naming the tag to remove',
      {
        versions: [version(V1.name, { tags: REJECTED }), V2],
        currentVersion: V2.name,
        pinned: false,
        definitionId: DEFINITION,
        to: V1.name,
      },
      /was rejected \(canary: never joined\); remove its tag vmss-prototype\.rejected/,
    ],
    [
      'the current version',
      { versions: [V1, V2], currentVersion: V2.name, pinned: false, definitionId: DEFINITION, to: V2.name },
      /already the one new instances get/,
    ],
  ];
  for (const [name, input, reason] of refusals) {
    void it(`refuses ${name}`, () => {
      const plan = planRollback(input);
      assert.equal(plan.kind, 'refused');
      assert.match(plan.kind === 'refused' ? plan.reason : '', reason);
    });
  }
  void it('says when it refuses because new instances get the asked version already', () => {
    const asked = planRollback({
      versions: [V1, V2],
      currentVersion: V2.name,
      pinned: false,
      definitionId: DEFINITION,
      to: V2.name,
    });
    assert.equal(asked.kind === 'refused' ? asked.alreadyAt : 'not refused', V2.name);
    const gone = planRollback({
      versions: [V1, V2],
      currentVersion: V2.name,
      pinned: false,
      definitionId: DEFINITION,
      to: '1.1.1',
    });
    assert.equal(gone.kind === 'refused' ? gone.alreadyAt : 'not refused', undefined);
  });
});

void describe('defaultRollbackTarget (what pruning keeps)', () => {
  void it('is the newest usable version older than the current', () => {
    assert.equal(defaultRollbackTarget([V1, V2, V3], V3.name)?.name, V2.name);
    assert.equal(defaultRollbackTarget([V1, V2, V3], V1.name), undefined);
    assert.equal(defaultRollbackTarget([V1, V2, V3], undefined), undefined);
  });
});
