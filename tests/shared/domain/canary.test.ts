import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CanaryObservation, CanaryPolicy, DaemonSetTarget } from '../../../shared/domain/canary.js';
import {
  daemonSetTargetsNode,
  DEFAULT_CANARY_POLICY,
  EMPTY_CANARY_MEMORY,
  judgeCanaries,
} from '../../../shared/domain/canary.js';

const START = Date.parse('2026-11-23T10:00:00Z');
const POLICY: CanaryPolicy = { ...DEFAULT_CANARY_POLICY, soakSeconds: 300, deadlineSeconds: 1_800 };

function observation(overrides: Partial<CanaryObservation> = {}): CanaryObservation {
  return {
    instanceId: '7',
    instance: {
      exists: true,
      provisioningState: 'Succeeded',
      powerState: 'running',
      computerName: 'vmss000007',
    },
    node: { name: 'vmss000007', ownsName: true, ready: 'True', readySince: '2026-11-23T10:05:00Z' },
    daemonSets: { expected: ['kube-system/kube-proxy'], missing: [], notReady: [] },
    checkPod: 'Absent',
    ...overrides,
  };
}

/** An observation of canary 7 whose node, registered under its own name, is in the given Ready state. */
function observationWithOwnNode(
  ready: Omit<NonNullable<CanaryObservation['node']>, 'name' | 'ownsName'>,
): CanaryObservation {
  return observation({ node: { name: 'vmss000007', ownsName: true, ...ready } });
}

function judge(
  observations: CanaryObservation[],
  nowIso: string,
  policy = POLICY,
  memory = EMPTY_CANARY_MEMORY,
) {
  return judgeCanaries({ observations, memory, policy, startedAtMs: START, nowMs: Date.parse(nowIso) });
}

void describe('judgeCanaries', () => {
  const cases: readonly {
    name: string;
    observations: CanaryObservation[];
    now: string;
    kind: 'waiting' | 'passed' | 'failed';
    reason?: RegExp;
  }[] = [
    {
      name: 'Ready long enough, DaemonSets running: passed',
      observations: [observation()],
      now: '2026-11-23T10:11:00Z',
      kind: 'passed',
    },
    {
      name: 'Ready, still soaking: waiting',
      observations: [observation()],
      now: '2026-11-23T10:08:00Z',
      kind: 'waiting',
    },
    {
      name: 'never registered, before the deadline: waiting',
      observations: [observation({ node: undefined })],
      now: '2026-11-23T10:20:00Z',
      kind: 'waiting',
    },
    {
      name: 'never registered, at the deadline: failed, naming the node it should be',
      observations: [observation({ node: undefined })],
      now: '2026-11-23T10:30:00Z',
      kind: 'failed',
      reason: /deadline of 30m.*instance 7 never registered as a node \(vmss000007\)/,
    },
    {
      name: "registered under another machine's name: failed at once",
      observations: [observation({ node: { name: 'vmss000001', ownsName: false, ready: 'True' } })],
      now: '2026-11-23T10:01:00Z',
      kind: 'failed',
      reason: /not under its own name.*another machine's identity/,
    },
    {
      name: 'instance failed to provision: failed at once',
      observations: [observation({ instance: { exists: true, provisioningState: 'Failed' } })],
      now: '2026-11-23T10:01:00Z',
      kind: 'failed',
      reason: /failed to provision/,
    },
    {
      name: 'instance deleted: failed at once',
      observations: [observation({ instance: { exists: false } })],
      now: '2026-11-23T10:01:00Z',
      kind: 'failed',
      reason: /deleted during the canary/,
    },
    {
      name: 'a DaemonSet pod missing after the soak: waiting, then failed at the deadline naming it',
      observations: [observation({ daemonSets: { expected: ['a/b'], missing: ['a/b'], notReady: [] } })],
      now: '2026-11-23T10:30:00Z',
      kind: 'failed',
      reason: /no pod of a\/b/,
    },
    {
      name: 'no canary instance at the deadline',
      observations: [],
      now: '2026-11-23T10:30:00Z',
      kind: 'failed',
      reason: /no canary instance appeared/,
    },
  ];
  for (const testCase of cases) {
    void it(testCase.name, () => {
      const { verdict } = judge(testCase.observations, testCase.now);
      assert.equal(verdict.kind, testCase.kind, JSON.stringify(verdict));
      if (testCase.reason !== undefined && verdict.kind === 'failed')
        assert.match(verdict.reason, testCase.reason);
    });
  }

  void it('a node that was Ready and turns NotReady fails the soak', () => {
    const first = judge([observation()], '2026-11-23T10:06:00Z');
    assert.equal(first.verdict.kind, 'waiting');
    const second = judge(
      [observationWithOwnNode({ ready: 'False', notReadyReason: 'KubeletNotReady' })],
      '2026-11-23T10:07:00Z',
      POLICY,
      first.memory,
    );
    assert.equal(second.verdict.kind, 'failed');
    assert.match(
      second.verdict.kind === 'failed' ? second.verdict.reason : '',
      /went NotReady during the soak \(KubeletNotReady\)/,
    );
  });

  void it('a node Ready again since a later time was NotReady in between: fails the soak, unseen or not', () => {
    const first = judge([observation()], '2026-11-23T10:06:00Z');
    assert.equal(first.verdict.kind, 'waiting');
    assert.equal(first.memory.readySince?.['7'], '2026-11-23T10:05:00Z');
    const flapped = judge(
      [observationWithOwnNode({ ready: 'True', readySince: '2026-11-23T10:08:00Z' })],
      '2026-11-23T10:11:00Z',
      POLICY,
      first.memory,
    );
    assert.match(
      flapped.verdict.kind === 'failed' ? flapped.verdict.reason : '',
      /went NotReady during the soak \(Ready since 2026-11-23T10:05:00Z, again since 2026-11-23T10:08:00Z\)/,
    );
    // Ready since the same time all along: passes.
    assert.equal(judge([observation()], '2026-11-23T10:11:00Z', POLICY, first.memory).verdict.kind, 'passed');
  });

  void it('while every pending canary soaks, says when the first soak is due (never past the deadline)', () => {
    // Ready since 10:05, soak 5 minutes: due at 10:10, 2 minutes after 10:08.
    const soaking = judge([observation()], '2026-11-23T10:08:00Z').verdict;
    assert.equal(soaking.kind === 'waiting' ? soaking.nextObservationInSeconds : -1, 120);
    const two = judge(
      [
        observation(),
        observation({
          instanceId: '8',
          instance: {
            exists: true,
            provisioningState: 'Succeeded',
            powerState: 'running',
            computerName: 'vmss000008',
          },
          node: { name: 'vmss000008', ownsName: true, ready: 'True', readySince: '2026-11-23T10:07:00Z' },
        }),
      ],
      '2026-11-23T10:08:00Z',
    ).verdict;
    assert.equal(two.kind === 'waiting' ? two.nextObservationInSeconds : -1, 120, 'the first of the two');
    const registering = judge(
      [observation(), observation({ instanceId: '8', node: undefined })],
      '2026-11-23T10:08:00Z',
    ).verdict;
    assert.equal(registering.kind === 'waiting' ? registering.nextObservationInSeconds : -1, undefined);
    const nearDeadline = judge(
      [observationWithOwnNode({ ready: 'True', readySince: '2026-11-23T10:28:00Z' })],
      '2026-11-23T10:29:00Z',
    ).verdict;
    assert.equal(nearDeadline.kind === 'waiting' ? nearDeadline.nextObservationInSeconds : -1, 60);
  });

  void it('with a check pod: asks to start it once, passes when it succeeds, fails when it fails or times out', () => {
    const policy: CanaryPolicy = {
      ...POLICY,
      checkPod: { image: 'i', command: ['true'], args: [], env: [], timeoutSeconds: 120 },
    };
    const asked = judge([observation()], '2026-11-23T10:11:00Z', policy);
    assert.deepEqual(asked.verdict.kind === 'waiting' ? asked.verdict.startCheckPods : [], ['7']);
    const again = judge([observation()], '2026-11-23T10:11:15Z', policy, asked.memory);
    assert.deepEqual(again.verdict.kind === 'waiting' ? again.verdict.startCheckPods : ['x'], []);
    assert.equal(
      judge([observation({ checkPod: 'Succeeded' })], '2026-11-23T10:12:00Z', policy, asked.memory).verdict
        .kind,
      'passed',
    );
    const failed = judge(
      [observation({ checkPod: 'Failed', checkPodMessage: 'exit code 3: Error' })],
      '2026-11-23T10:12:00Z',
      policy,
      asked.memory,
    ).verdict;
    assert.match(
      failed.kind === 'failed' ? failed.reason : '',
      /check pod failed on node vmss000007: exit code 3/,
    );
    const late = judge(
      [observation({ checkPod: 'Running' })],
      '2026-11-23T10:13:00Z',
      policy,
      asked.memory,
    ).verdict;
    assert.match(late.kind === 'failed' ? late.reason : '', /did not finish within 2m/);
  });
});

void describe('daemonSetTargetsNode', () => {
  const base: DaemonSetTarget = {
    namespace: 'kube-system',
    name: 'agent',
    uid: 'u',
    nodeSelector: {},
    requiredNodeAffinity: [],
    tolerations: [],
  };
  const node = {
    labels: { 'kubernetes.io/os': 'linux', pool: 'a' },
    taints: [] as { key: string; effect: string }[],
  };
  const cases: readonly [string, DaemonSetTarget, typeof node, boolean][] = [
    ['no selector: every node', base, node, true],
    ['selector matches', { ...base, nodeSelector: { 'kubernetes.io/os': 'linux' } }, node, true],
    ['selector does not match', { ...base, nodeSelector: { 'kubernetes.io/os': 'windows' } }, node, false],
    [
      'required affinity In matches',
      { ...base, requiredNodeAffinity: [[{ key: 'pool', operator: 'In', values: ['a', 'b'] }]] },
      node,
      true,
    ],
    [
      'required affinity NotIn excludes',
      { ...base, requiredNodeAffinity: [[{ key: 'pool', operator: 'NotIn', values: ['a'] }]] },
      node,
      false,
    ],
    [
      'an untolerated NoSchedule taint keeps it off',
      base,
      { ...node, taints: [{ key: 'gpu', effect: 'NoSchedule' }] },
      false,
    ],
    [
      'PreferNoSchedule never keeps it off',
      base,
      { ...node, taints: [{ key: 'gpu', effect: 'PreferNoSchedule' }] },
      true,
    ],
    [
      'a toleration lets it on',
      { ...base, tolerations: [{ key: 'gpu', operator: 'Exists' }] },
      { ...node, taints: [{ key: 'gpu', effect: 'NoSchedule' }] },
      true,
    ],
    [
      'the controller tolerates unschedulable (a cordoned canary still runs DaemonSet pods)',
      base,
      { ...node, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] },
      true,
    ],
  ];
  for (const [name, daemonSet, target, expected] of cases) {
    void it(name, () => assert.equal(daemonSetTargetsNode(daemonSet, target), expected));
  }
});
