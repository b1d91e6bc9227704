import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { DEFAULT_CANARY_POLICY } from '../../../shared/domain/canary.js';
import type {
  PolicyActionRecord,
  PoolPolicySpec,
  PoolPolicyValues,
} from '../../../shared/domain/pool-policy.js';
import {
  applyPoolPolicy,
  isRecordReferred,
  keptActionRecords,
  pendingPolicyActions,
  recordRefOf,
} from '../../../shared/domain/pool-policy.js';

/** What a pool's settings resolve to: the cluster's defaults with a pool override or two. */
const SETTINGS: PoolPolicyValues = {
  captureMode: 'auto',
  pinVersion: false,
  canary: { ...DEFAULT_CANARY_POLICY, instances: 2 },
  generations: { taintEffect: 'PreferNoSchedule', maxGenerationsBehind: 3 },
  retirement: {
    enabled: false,
    policy: { keepGenerations: 2, budget: { nodes: 1 }, windows: [], surge: true },
    drainTimeoutSeconds: 900,
  },
};

const WITH_PREP_IMAGE = { hasPrepImage: true };

void describe('applyPoolPolicy: the precedence of a PoolImagePolicy over the settings', () => {
  const cases: {
    name: string;
    spec: PoolPolicySpec;
    base?: PoolPolicyValues;
    context?: { hasPrepImage: boolean };
    values?: Partial<PoolPolicyValues>;
    overridden?: string[];
    problems?: string[];
  }[] = [
    {
      name: 'an empty spec changes nothing: the pool runs with its settings',
      spec: { paused: false },
      values: {},
      overridden: [],
    },
    {
      name: 'a field the spec sets replaces the setting; the others keep the settings (pool and cluster)',
      spec: { paused: false, captureMode: 'live', canary: { soakSeconds: 60 } },
      values: { captureMode: 'live', canary: { ...SETTINGS.canary, soakSeconds: 60 } },
      overridden: ['spec.capture.mode', 'spec.canary.soak'],
    },
    {
      name: 'false and 0 are values, not absence',
      spec: {
        paused: false,
        pinVersion: false,
        canary: { enabled: false },
        generations: { maxGenerationsBehind: 0 },
      },
      values: {
        canary: { ...SETTINGS.canary, enabled: false },
        generations: { taintEffect: 'PreferNoSchedule', maxGenerationsBehind: 0 },
      },
      overridden: ['spec.pinVersion', 'spec.canary.enabled', 'spec.generations.maxGenerationsBehind'],
    },
    {
      name: 'retirement fields one by one, the windows as a whole list',
      spec: {
        paused: false,
        retirement: {
          enabled: true,
          budget: { percent: 20 },
          windows: [{ schedule: '0 0 2 * * sat', durationSeconds: 7200 }],
        },
      },
      values: {
        retirement: {
          enabled: true,
          policy: {
            keepGenerations: 2,
            budget: { percent: 20 },
            windows: [{ schedule: '0 0 2 * * sat', durationSeconds: 7200 }],
            surge: true,
          },
          drainTimeoutSeconds: 900,
        },
      },
      overridden: ['spec.retirement.enabled', 'spec.retirement.budget', 'spec.retirement.windows'],
    },
    {
      name: 'enabling retirement uses the rule the settings give (keepGenerations)',
      spec: { paused: false, retirement: { enabled: true } },
      values: { retirement: { ...SETTINGS.retirement, enabled: true } },
      overridden: ['spec.retirement.enabled'],
    },
    {
      name: 'enabling retirement without a rule anywhere is refused, naming the field and the fix',
      spec: { paused: false, retirement: { enabled: true } },
      base: {
        ...SETTINGS,
        retirement: { ...SETTINGS.retirement, policy: { budget: { nodes: 1 }, windows: [], surge: true } },
      },
      problems: ['spec.retirement.enabled'],
    },
    {
      name: "a soak as long as the settings' deadline is refused on the soak",
      spec: { paused: false, canary: { soakSeconds: 1800 } },
      problems: ['spec.canary.soak'],
    },
    {
      name: 'a deadline shorter than the soak is refused on the deadline',
      spec: { paused: false, canary: { soakSeconds: 600, deadlineSeconds: 300 } },
      problems: ['spec.canary.deadline'],
    },
    {
      name: 'a mode that runs pods needs the prep image the settings did not give',
      spec: { paused: false, captureMode: 'drain-and-stop' },
      context: { hasPrepImage: false },
      problems: ['spec.capture.mode'],
    },
    {
      name: 'run-command needs no prep image',
      spec: { paused: false, captureMode: 'run-command' },
      context: { hasPrepImage: false },
      values: { captureMode: 'run-command' },
      overridden: ['spec.capture.mode'],
    },
  ];
  for (const testCase of cases) {
    void it(testCase.name, () => {
      const base = testCase.base ?? SETTINGS;
      const applied = applyPoolPolicy(base, testCase.spec, testCase.context ?? WITH_PREP_IMAGE);
      if (testCase.problems !== undefined) {
        assert.equal(applied.ok, false);
        if (applied.ok) return;
        assert.deepEqual(
          applied.problems.map((problem) => problem.field),
          testCase.problems,
        );
        for (const problem of applied.problems) assert.match(problem.message, /set|lengthen|shorten/);
        return;
      }
      assert.equal(applied.ok, true, JSON.stringify(applied));
      if (!applied.ok) return;
      assert.deepEqual(applied.values, { ...base, ...testCase.values });
      assert.deepEqual(applied.overridden, testCase.overridden);
    });
  }
});

function record(target: string, state: PolicyActionRecord['state']): PolicyActionRecord {
  return { target, observedGeneration: 2, state, startedAt: '2026-11-28T02:00:00.000Z' };
}

void describe('pendingPolicyActions: each value the spec asks for is acted on once', () => {
  const cases: {
    name: string;
    spec: PoolPolicySpec;
    recorded: Parameters<typeof pendingPolicyActions>[1];
    expected: string[];
  }[] = [
    { name: 'nothing asked', spec: { paused: false }, recorded: {}, expected: [] },
    {
      name: 'both asked, nothing recorded: rollback first',
      spec: { paused: false, rollbackTo: '2026.1127.1', retire: { generation: 'unknown' } },
      recorded: {},
      expected: ['rollback 2026.1127.1', 'retire unknown'],
    },
    {
      name: 'done for the same value: not again',
      spec: { paused: false, rollbackTo: '2026.1127.1' },
      recorded: { rollback: record('2026.1127.1', 'Done') },
      expected: [],
    },
    {
      name: 'failed for the same value: not again (a new value asks anew)',
      spec: { paused: false, rollbackTo: '2026.1127.1' },
      recorded: { rollback: record('2026.1127.1', 'Failed') },
      expected: [],
    },
    {
      name: 'done for another value: the new one is pending',
      spec: { paused: false, rollbackTo: '2026.1127.2' },
      recorded: { rollback: record('2026.1127.1', 'Done') },
      expected: ['rollback 2026.1127.2'],
    },
    {
      name: 'running for the same value: continued (budget-paced retirement, a tick that died)',
      spec: { paused: false, retire: { generation: 'unknown' } },
      recorded: { retire: record('unknown', 'Running') },
      expected: ['retire unknown'],
    },
    {
      name: 'a paused pool still acts on what is asked',
      spec: { paused: true, rollbackTo: '2026.1127.1' },
      recorded: {},
      expected: ['rollback 2026.1127.1'],
    },
  ];
  for (const testCase of cases) {
    void it(testCase.name, () => {
      assert.deepEqual(
        pendingPolicyActions(testCase.spec, testCase.recorded).map(
          (action) => `${action.kind} ${action.target}`,
        ),
        testCase.expected,
      );
    });
  }
});

void describe('keptActionRecords', () => {
  const recorded = { rollback: record('2026.1127.1', 'Done'), retire: record('unknown', 'Done') };
  void it('forgets the record of an action the spec no longer asks for, so asking again acts again', () => {
    assert.deepEqual(keptActionRecords({ paused: false, rollbackTo: '2026.1127.1' }, recorded), {
      rollback: recorded.rollback,
    });
    const forgotten = keptActionRecords({ paused: false }, recorded);
    assert.deepEqual(forgotten, {});
    assert.deepEqual(pendingPolicyActions({ paused: false, rollbackTo: '2026.1127.1' }, forgotten), [
      { kind: 'rollback', target: '2026.1127.1' },
    ]);
  });
  void it('keeps every record while the spec is invalid (it says nothing then)', () => {
    assert.deepEqual(keptActionRecords(undefined, recorded), recorded);
  });
});

void describe('isRecordReferred: a record write is a compare-and-set on what its tick read', () => {
  const running = record('2026.1127.1', 'Running');
  const cases: [string, PolicyActionRecord | undefined, ReturnType<typeof recordRefOf>, boolean][] = [
    ['none read, none found', undefined, null, true],
    ['none read, another tick started it', running, null, false],
    ['read, then forgotten (the spec dropped the field)', undefined, recordRefOf(running), false],
    [
      'the same record (message and finish aside)',
      { ...running, message: 'other words' },
      recordRefOf(running),
      true,
    ],
    ['ended by another tick', { ...running, state: 'Done' }, recordRefOf(running), false],
    [
      'restarted by another tick',
      { ...running, startedAt: '2026-11-28T03:00:00.000Z' },
      recordRefOf(running),
      false,
    ],
    ['another target', record('2026.1127.2', 'Running'), recordRefOf(running), false],
  ];
  for (const [name, found, ref, expected] of cases) {
    void it(name, () => assert.equal(isRecordReferred(found, ref), expected));
  }
});
