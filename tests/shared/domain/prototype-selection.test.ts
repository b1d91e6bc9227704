import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ClusterNode } from '../../../shared/domain/cluster-node.js';
import {
  groupNodesByScaleSet,
  type NodeVerdict,
  type PoolImageFacts,
  type PrototypeSelection,
  type PrototypeSelectionInput,
  type RejectionCode,
  SELECTION_RULES,
  selectPrototypeNode,
  selectPrototypeNodeForPool,
} from '../../../shared/domain/prototype-selection.js';
import { type ScaleSetRef, virtualMachineResourceId } from '../../../shared/domain/resource-id.js';
import { DEFAULT_SELECTION_POLICY, type SelectionPolicy } from '../../../shared/domain/selection-policy.js';
import {
  aNode,
  DAY,
  DEFAULT_POOL,
  HOUR,
  LAST_PATCH_ANNOTATION,
  NOW,
  readyCondition,
  REBOOT_IN_PROGRESS_ANNOTATION,
  secondsBefore,
} from '../../builders/node.js';

/** The pool's current image was captured from a node patched 10 days ago. */
const IMAGE: PoolImageFacts = { version: '2026.1112.0900', patchedAt: new Date(secondsBefore(10 * DAY)) };

function select(
  nodes: readonly ClusterNode[],
  overrides: Partial<Omit<PrototypeSelectionInput, 'policy'>> & { policy?: Partial<SelectionPolicy> } = {},
): PrototypeSelection {
  const { policy, ...rest } = overrides;
  return selectPrototypeNode({
    pool: { scaleSet: DEFAULT_POOL },
    image: IMAGE,
    now: NOW,
    nodes,
    ...rest,
    policy: { ...DEFAULT_SELECTION_POLICY, ...policy },
  });
}

function verdictOf(selection: PrototypeSelection, name: string): NodeVerdict {
  const verdict = selection.verdicts.find((candidate) => candidate.name === name);
  assert.ok(verdict, `no verdict for ${name}`);
  return verdict;
}

function withoutCondition(node: ClusterNode, type: string): ClusterNode['conditions'] {
  return node.conditions.filter((condition) => condition.type !== type);
}

const OTHER_POOL: ScaleSetRef = { ...DEFAULT_POOL, name: 'k8s-pool-b' };
const base = aNode();

void describe('selectPrototypeNode: every rule rejects', () => {
  const cases: {
    name: string;
    node: ClusterNode;
    rule: RejectionCode;
    policy?: Partial<SelectionPolicy>;
    rejectedBuilds?: PrototypeSelectionInput['rejectedBuilds'];
    reason?: RegExp;
  }[] = [
    { name: 'providerID absent', node: aNode({ providerId: undefined }), rule: 'no-provider-id' },
    { name: 'providerID empty', node: aNode({ providerId: '' }), rule: 'no-provider-id' },
    {
      name: 'providerID of another cloud',
      node: aNode({ providerId: 'aws:///eu-west-1a/i-0abc' }),
      rule: 'unparsable-provider-id',
    },
    {
      name: 'providerID malformed',
      node: aNode({
        providerId:
          'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/x',
      }),
      rule: 'unparsable-provider-id',
    },
    {
      name: 'node of another scale set',
      node: aNode({ pool: OTHER_POOL }),
      rule: 'not-in-pool',
      reason: /k8s-pool-b/,
    },
    {
      name: 'same scale set name in another resource group',
      node: aNode({ pool: { ...DEFAULT_POOL, resourceGroup: 'rg-other' } }),
      rule: 'not-in-pool',
    },
    {
      name: 'same scale set name in another subscription',
      node: aNode({ pool: { ...DEFAULT_POOL, subscriptionId: '00000000-0000-0000-0000-000000000000' } }),
      rule: 'not-in-pool',
    },
    {
      name: 'VM providerID not listed as a Flexible member',
      node: aNode({ providerId: `azure://${virtualMachineResourceId({ ...DEFAULT_POOL, name: 'vm-1' })}` }),
      rule: 'not-in-pool',
      reason: /standalone VM/,
    },
    {
      name: 'excluded by name',
      node: base,
      rule: 'excluded-by-name',
      policy: { excludeNodeNames: ['x', base.name] },
    },
    {
      name: 'control-plane label',
      node: aNode({ labels: { ...base.labels, 'node-role.kubernetes.io/control-plane': '' } }),
      rule: 'control-plane',
      reason: /node-role\.kubernetes\.io\/control-plane/,
    },
    {
      name: 'legacy master label',
      node: aNode({ labels: { ...base.labels, 'node-role.kubernetes.io/master': '' } }),
      rule: 'control-plane',
      reason: /node-role\.kubernetes\.io\/master/,
    },
    {
      name: 'kubernetes.io/role=master (aks-engine)',
      node: aNode({ labels: { ...base.labels, 'kubernetes.io/role': 'master' } }),
      rule: 'control-plane',
      reason: /kubernetes\.io\/role=master/,
    },
    {
      name: 'being deleted by cluster-autoscaler',
      node: aNode({
        taints: [{ key: 'ToBeDeletedByClusterAutoscaler', value: '1763800000', effect: 'NoSchedule' }],
      }),
      rule: 'autoscaler-deletion',
    },
    {
      name: 'deletion candidate of cluster-autoscaler',
      node: aNode({
        taints: [
          { key: 'DeletionCandidateOfClusterAutoscaler', value: '1763800000', effect: 'PreferNoSchedule' },
        ],
      }),
      rule: 'autoscaler-deletion',
    },
    { name: 'cordoned', node: aNode({ unschedulable: true }), rule: 'unschedulable', reason: /cordoned/ },
    {
      name: 'unschedulable taint without the spec field',
      node: aNode({ taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }),
      rule: 'unschedulable',
    },
    {
      name: 'ignore annotation, even with an empty value',
      node: aNode({
        annotations: { [LAST_PATCH_ANNOTATION]: secondsBefore(DAY), 'example.com/no-prototype': '' },
      }),
      rule: 'ignore-annotation',
      policy: { ignoreAnnotations: ['example.com/other', 'example.com/no-prototype'] },
    },
    {
      name: 'reboot pending',
      node: aNode({
        annotations: {
          [LAST_PATCH_ANNOTATION]: secondsBefore(HOUR),
          [REBOOT_IN_PROGRESS_ANNOTATION]: secondsBefore(HOUR),
        },
      }),
      rule: 'pending-reboot',
    },
    {
      name: 'no Ready condition',
      node: aNode({ conditions: withoutCondition(base, 'Ready') }),
      rule: 'not-ready',
      reason: /no Ready condition/,
    },
    {
      name: 'Ready=False',
      node: aNode({ conditions: [readyCondition(secondsBefore(2 * DAY), 'False')] }),
      rule: 'not-ready',
      reason: /False \(KubeletNotReady\)/,
    },
    {
      name: 'Ready=Unknown',
      node: aNode({ conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }] }),
      rule: 'not-ready',
      reason: /Unknown/,
    },
    {
      name: 'unreachable taint while Ready is still True',
      node: aNode({ taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] }),
      rule: 'not-ready',
    },
    {
      name: 'not-ready taint while Ready is still True',
      node: aNode({ taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] }),
      rule: 'not-ready',
    },
    {
      name: 'DiskPressure',
      node: aNode({
        conditions: [...withoutCondition(base, 'DiskPressure'), { type: 'DiskPressure', status: 'True' }],
      }),
      rule: 'not-ready',
      reason: /DiskPressure/,
    },
    {
      name: 'NetworkUnavailable',
      node: aNode({ conditions: [...base.conditions, { type: 'NetworkUnavailable', status: 'True' }] }),
      rule: 'not-ready',
    },
    {
      name: 'Ready for 30 minutes (minimum 1 hour)',
      node: aNode({ readySince: secondsBefore(30 * 60) }),
      rule: 'ready-too-short',
      reason: /Ready for 30m, less than the minimum 1h/,
    },
    {
      name: 'Ready one second short of the minimum',
      node: aNode({ readySince: secondsBefore(HOUR - 1) }),
      rule: 'ready-too-short',
    },
    {
      name: 'Ready transition in the future (clock skew)',
      node: aNode({ readySince: secondsBefore(-10 * 60) }),
      rule: 'ready-too-short',
      reason: /clock skew/,
    },
    {
      name: 'Ready transition time missing',
      node: aNode({ conditions: [{ type: 'Ready', status: 'True' }] }),
      rule: 'ready-too-short',
      reason: /cannot tell/,
    },
    {
      name: 'Ready transition time malformed',
      node: aNode({ readySince: 'last tuesday' }),
      rule: 'ready-too-short',
    },
    { name: 'no last-patch annotation', node: aNode({ lastPatch: null }), rule: 'missing-patch-annotation' },
    {
      name: 'last patch is a date without time',
      node: aNode({ lastPatch: '2026-11-21' }),
      rule: 'malformed-patch-timestamp',
      reason: /not an RFC 3339 timestamp/,
    },
    {
      name: 'last-patch annotation under another key than the policy',
      node: base,
      rule: 'missing-patch-annotation',
      policy: { lastPatchAnnotation: 'example.com/last-patched' },
    },
    {
      name: 'last patch an hour in the future (clock skew)',
      node: aNode({ lastPatch: secondsBefore(-HOUR) }),
      rule: 'patch-in-future',
      reason: /1h after now.*skewed/,
    },
    {
      name: 'last patch exactly at the image patch time',
      node: aNode({ lastPatch: IMAGE.patchedAt?.toISOString() ?? '' }),
      rule: 'patch-not-newer-than-image',
    },
    {
      name: 'last patch before the image',
      node: aNode({ lastPatch: secondsBefore(20 * DAY) }),
      rule: 'patch-not-newer-than-image',
      reason: /2026\.1112\.0900/,
    },
    {
      name: 'last patch earlier on the same day as the image (full instants, not dates)',
      node: aNode({ lastPatch: secondsBefore(10 * DAY + HOUR) }),
      rule: 'patch-not-newer-than-image',
    },
    {
      name: 'a version built from this node and patch was rejected (canary or rollback)',
      node: base,
      rule: 'rejected-build',
      rejectedBuilds: [
        {
          version: '2026.1121.90000',
          sourceNode: base.name,
          patchedAtMs: Date.parse(secondsBefore(2 * DAY)),
          reason: 'canary never joined',
        },
      ],
      reason: /2026\.1121\.90000.*canary never joined.*patched anew/,
    },
  ];
  for (const c of cases) {
    void it(`${c.rule}: ${c.name}`, () => {
      const selection = select([c.node], {
        ...(c.policy === undefined ? {} : { policy: c.policy }),
        ...(c.rejectedBuilds === undefined ? {} : { rejectedBuilds: c.rejectedBuilds }),
      });
      const verdict = verdictOf(selection, c.node.name);
      assert.equal(verdict.status, 'rejected');
      assert.equal(verdict.status === 'rejected' && verdict.rule, c.rule);
      if (c.reason !== undefined && verdict.status === 'rejected') {
        assert.match(verdict.reason, c.reason);
      }
      assert.equal(selection.chosen, undefined);
    });
  }

  void it('the healthy baseline these cases vary is a candidate', () => {
    const selection = select([base]);
    assert.equal(selection.outcome, 'chosen');
    assert.equal(selection.chosen?.name, base.name);
    assert.equal(selection.chosen?.readyForSeconds, 3 * DAY);
    assert.equal(selection.chosen?.lastPatchedAt, new Date(secondsBefore(2 * DAY)).toISOString());
  });

  void it('covers every rule in SELECTION_RULES', () => {
    const covered = new Set(cases.map((c) => c.rule));
    assert.deepEqual(
      SELECTION_RULES.filter((rule) => !covered.has(rule)),
      [],
    );
  });
});

void describe('selectPrototypeNode: malformed last-patch timestamps', () => {
  const shapes = [
    '2026-11-20',
    '2026-11-20T10:00:00',
    '2026-11-20 10:00:00Z',
    '2026-11-20T10:00Z',
    '20261120T100000Z',
    '2026-11-20T10:00:00+0200',
    '2026-11-20T10:00:00+2:00',
    '2026-13-01T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-11-31T00:00:00Z',
    '2026-11-20T24:00:00Z',
    '2026-11-20T10:60:00Z',
    '2026-11-20T10:00:60Z',
    '2026-11-20T10:00:00+24:00',
    'Fri, 20 Nov 2026 10:00:00 GMT',
    '1763632800',
    'true',
    '',
  ];
  for (const value of shapes) {
    void it(`rejects "${value}"`, () => {
      const node = aNode({ lastPatch: value });
      const verdict = verdictOf(select([node]), node.name);
      assert.equal(verdict.status === 'rejected' && verdict.rule, 'malformed-patch-timestamp');
    });
  }
});

void describe('selectPrototypeNode: accepted edge cases', () => {
  const cases: {
    name: string;
    node: ClusterNode;
    lastPatchedAt?: string;
    policy?: Partial<SelectionPolicy>;
  }[] = [
    { name: 'Ready for exactly the minimum', node: aNode({ readySince: secondsBefore(HOUR) }) },
    {
      name: 'patch with a +02:00 offset (kured in a non-UTC container)',
      node: aNode({ lastPatch: '2026-11-21T14:00:00+02:00' }),
      lastPatchedAt: '2026-11-21T12:00:00.000Z',
    },
    {
      name: 'patch with fractional seconds',
      node: aNode({ lastPatch: '2026-11-21T12:00:00.250Z' }),
      lastPatchedAt: '2026-11-21T12:00:00.250Z',
    },
    { name: 'patch one second after the image', node: aNode({ lastPatch: secondsBefore(10 * DAY - 1) }) },
    {
      name: 'patch later on the same day as the image (full instants, not dates)',
      node: aNode({ lastPatch: secondsBefore(10 * DAY - HOUR) }),
    },
    {
      name: 'patch 2 minutes in the future, within the skew tolerance',
      node: aNode({ lastPatch: secondsBefore(-120) }),
    },
    {
      name: 'patch annotation with surrounding whitespace',
      node: aNode({ lastPatch: ` ${secondsBefore(DAY)} ` }),
    },
    {
      name: 'scale-down-disabled annotation is not a reason to skip',
      node: aNode({
        annotations: {
          [LAST_PATCH_ANNOTATION]: secondsBefore(DAY),
          'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
        },
      }),
    },
    {
      name: 'a worker role label is not control-plane',
      node: aNode({
        labels: { ...base.labels, 'kubernetes.io/role': 'agent', 'node-role.kubernetes.io/agent': '' },
      }),
    },
    {
      name: 'a NoSchedule taint of the operator is not cordoning',
      node: aNode({ taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
    },
    {
      name: 'minimum Ready of zero',
      node: aNode({ readySince: secondsBefore(1) }),
      policy: { minimumReadySeconds: 0 },
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const selection = select([c.node], c.policy === undefined ? {} : { policy: c.policy });
      assert.equal(selection.outcome, 'chosen', selection.reason);
      assert.equal(selection.chosen?.name, c.node.name);
      if (c.lastPatchedAt !== undefined) {
        assert.equal(selection.chosen?.lastPatchedAt, c.lastPatchedAt);
      }
    });
  }

  void it('a custom skew tolerance of zero rejects a patch 2 minutes ahead', () => {
    const node = aNode({ lastPatch: secondsBefore(-120) });
    const verdict = verdictOf(select([node], { clockSkewToleranceSeconds: 0 }), node.name);
    assert.equal(verdict.status === 'rejected' && verdict.rule, 'patch-in-future');
  });
});

void describe('selectPrototypeNode: rule order', () => {
  void it('reports the first failed rule and lists the later ones in order', () => {
    const node = aNode({
      labels: { ...base.labels, 'node-role.kubernetes.io/control-plane': '' },
      taints: [
        { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
        { key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' },
      ],
      unschedulable: true,
      annotations: { [REBOOT_IN_PROGRESS_ANNOTATION]: secondsBefore(HOUR), 'example.com/skip': 'yes' },
    });
    const verdict = verdictOf(
      select([node], { policy: { excludeNodeNames: [node.name], ignoreAnnotations: ['example.com/skip'] } }),
      node.name,
    );
    assert.deepEqual(verdict.status === 'rejected' && [verdict.rule, ...verdict.alsoFailed], [
      'excluded-by-name',
      'control-plane',
      'autoscaler-deletion',
      'unschedulable',
      'ignore-annotation',
      'pending-reboot',
      'not-ready',
      'missing-patch-annotation',
    ]);
  });

  void it('checks readiness duration before the patch rules', () => {
    const node = aNode({ readySince: secondsBefore(60), lastPatch: secondsBefore(20 * DAY) });
    const verdict = verdictOf(select([node]), node.name);
    assert.deepEqual(verdict.status === 'rejected' && [verdict.rule, ...verdict.alsoFailed], [
      'ready-too-short',
      'patch-not-newer-than-image',
    ]);
  });

  void it('stops at pool membership: a node of another pool is not judged further', () => {
    const node = aNode({ pool: OTHER_POOL, unschedulable: true });
    const verdict = verdictOf(select([node]), node.name);
    assert.deepEqual(verdict.status === 'rejected' && [verdict.rule, ...verdict.alsoFailed], ['not-in-pool']);
  });
});

void describe('selectPrototypeNode: the kured annotation life cycle', () => {
  // kured with --annotate-nodes writes both annotations with the same timestamp when it first sees the
  // reboot sentinel, removes reboot-in-progress after a successful reboot, and never removes
  // most-recent-reboot-needed (kured's `rebootAsRequired`, cmd/kured/main.go).
  const firstReboot = new Date('2026-11-20T03:00:00Z');
  const secondReboot = new Date('2026-11-21T03:00:00Z');
  const at = (from: Date, seconds: number): Date => new Date(from.getTime() + seconds * 1000);
  const stamp = (date: Date): string => date.toISOString().replace('.000Z', 'Z');
  const image: PoolImageFacts = { patchedAt: new Date('2026-11-10T03:00:00Z') };

  const steps: {
    name: string;
    now: Date;
    node: ClusterNode;
    expected: RejectionCode | 'candidate';
    lastPatchedAt?: string;
  }[] = [
    {
      name: '1. new node from the current image: no annotations yet',
      now: at(firstReboot, -HOUR),
      node: aNode({ lastPatch: null, readySince: secondsBefore(2 * DAY, firstReboot) }),
      expected: 'missing-patch-annotation',
    },
    {
      name: '2. reboot needed: both annotations set, node still Ready',
      now: at(firstReboot, 60),
      node: aNode({
        annotations: {
          [LAST_PATCH_ANNOTATION]: stamp(firstReboot),
          [REBOOT_IN_PROGRESS_ANNOTATION]: stamp(firstReboot),
        },
        readySince: secondsBefore(2 * DAY, firstReboot),
      }),
      expected: 'pending-reboot',
    },
    {
      name: '3. draining and rebooting: cordoned, NotReady, both annotations',
      now: at(firstReboot, 10 * 60),
      node: aNode({
        unschedulable: true,
        annotations: {
          [LAST_PATCH_ANNOTATION]: stamp(firstReboot),
          [REBOOT_IN_PROGRESS_ANNOTATION]: stamp(firstReboot),
        },
        conditions: [readyCondition(stamp(at(firstReboot, 9 * 60)), 'Unknown')],
      }),
      expected: 'unschedulable',
    },
    {
      name: '4. back up and uncordoned, in-progress removed, but Ready only for 20 minutes',
      now: at(firstReboot, 35 * 60),
      node: aNode({ lastPatch: stamp(firstReboot), readySince: stamp(at(firstReboot, 15 * 60)) }),
      expected: 'ready-too-short',
    },
    {
      name: '5. done: Ready for over an hour, patched after the image',
      now: at(firstReboot, 3 * HOUR),
      node: aNode({ lastPatch: stamp(firstReboot), readySince: stamp(at(firstReboot, 15 * 60)) }),
      expected: 'candidate',
      lastPatchedAt: firstReboot.toISOString(),
    },
    {
      name: '6. next cycle: both annotations overwritten with the new time',
      now: at(secondReboot, 60),
      node: aNode({
        annotations: {
          [LAST_PATCH_ANNOTATION]: stamp(secondReboot),
          [REBOOT_IN_PROGRESS_ANNOTATION]: stamp(secondReboot),
        },
        readySince: stamp(at(firstReboot, 15 * 60)),
      }),
      expected: 'pending-reboot',
    },
    {
      name: '7. drain failed: kured uncordons but leaves reboot-in-progress, the node stays pending',
      now: at(secondReboot, 2 * HOUR),
      node: aNode({
        annotations: {
          [LAST_PATCH_ANNOTATION]: stamp(secondReboot),
          [REBOOT_IN_PROGRESS_ANNOTATION]: stamp(secondReboot),
        },
        readySince: stamp(at(firstReboot, 15 * 60)),
      }),
      expected: 'pending-reboot',
    },
    {
      name: '8. second reboot done: most-recent-reboot-needed keeps the newer time',
      now: at(secondReboot, 3 * HOUR),
      node: aNode({ lastPatch: stamp(secondReboot), readySince: stamp(at(secondReboot, 12 * 60)) }),
      expected: 'candidate',
      lastPatchedAt: secondReboot.toISOString(),
    },
    {
      name: '9. after the image was captured from that node: not newer any more',
      now: at(secondReboot, 6 * HOUR),
      node: aNode({ lastPatch: stamp(secondReboot), readySince: stamp(at(secondReboot, 12 * 60)) }),
      expected: 'patch-not-newer-than-image',
    },
  ];
  for (const step of steps) {
    void it(step.name, () => {
      const stepImage = step.name.startsWith('9.') ? { patchedAt: secondReboot } : image;
      const selection = select([step.node], { now: step.now, image: stepImage });
      const verdict = verdictOf(selection, step.node.name);
      if (step.expected === 'candidate') {
        assert.equal(verdict.status, 'candidate', verdict.status === 'rejected' ? verdict.reason : '');
        assert.equal(verdict.status === 'candidate' && verdict.lastPatchedAt, step.lastPatchedAt);
      } else {
        assert.equal(verdict.status === 'rejected' && verdict.rule, step.expected);
      }
    });
  }
});

void describe('selectPrototypeNode: ordering and ties', () => {
  const oldest = aNode({
    instanceId: 1,
    readySince: secondsBefore(9 * DAY),
    lastPatch: secondsBefore(9 * DAY),
  });
  const middle = aNode({ instanceId: 2, readySince: secondsBefore(5 * DAY), lastPatch: secondsBefore(DAY) });
  const tieOlderPatch = aNode({
    instanceId: 3,
    readySince: secondsBefore(4 * DAY),
    lastPatch: secondsBefore(4 * DAY),
  });
  const tieNewerPatch = aNode({
    instanceId: 4,
    readySince: secondsBefore(4 * DAY),
    lastPatch: secondsBefore(2 * DAY),
  });
  const tieB = aNode({
    name: 'node-b',
    readySince: secondsBefore(2 * DAY),
    lastPatch: secondsBefore(2 * DAY),
  });
  const tieA = aNode({
    name: 'node-a',
    instanceId: 9,
    readySince: secondsBefore(2 * DAY),
    lastPatch: secondsBefore(2 * DAY),
  });
  const all = [tieB, middle, tieOlderPatch, oldest, tieA, tieNewerPatch];

  void it('ranks longest Ready first, then newest patch, then name', () => {
    const selection = select(all);
    assert.deepEqual(
      selection.candidates.map((candidate) => candidate.name),
      [oldest.name, middle.name, tieNewerPatch.name, tieOlderPatch.name, 'node-a', 'node-b'],
    );
    assert.equal(selection.chosen?.name, oldest.name);
  });

  void it('keeps verdicts in input order', () => {
    assert.deepEqual(
      select(all).verdicts.map((verdict) => verdict.name),
      all.map((node) => node.name),
    );
  });

  void it('does not depend on input order', () => {
    const forward = select(all);
    const backward = select([...all].reverse());
    assert.deepEqual(forward.candidates, backward.candidates);
    assert.deepEqual(forward.chosen, backward.chosen);
  });

  void it('is deterministic for the same input', () => {
    assert.deepEqual(select(all), select(all));
  });
});

void describe('selectPrototypeNode: minimumCandidates', () => {
  const nodes = [
    aNode({ instanceId: 1 }),
    aNode({ instanceId: 2 }),
    aNode({ instanceId: 3, unschedulable: true }),
  ];
  const cases: { minimum: number; outcome: PrototypeSelection['outcome'] }[] = [
    { minimum: 0, outcome: 'chosen' },
    { minimum: 1, outcome: 'chosen' },
    { minimum: 2, outcome: 'chosen' },
    { minimum: 3, outcome: 'too-few-candidates' },
  ];
  for (const c of cases) {
    void it(`2 candidates with minimumCandidates ${c.minimum} → ${c.outcome}`, () => {
      const selection = select(nodes, { policy: { minimumCandidates: c.minimum } });
      assert.equal(selection.outcome, c.outcome);
      assert.equal(selection.candidates.length, 2);
      assert.equal(selection.chosen === undefined, c.outcome !== 'chosen');
    });
  }
  void it('an empty pool has no eligible node', () => {
    const selection = select([aNode({ pool: OTHER_POOL })]);
    assert.equal(selection.outcome, 'no-eligible-node');
    assert.equal(selection.poolNodeCount, 0);
    assert.match(selection.reason, /no node of the cluster belongs/);
  });
});

void describe('selectPrototypeNode: maximum image age fallback', () => {
  const notNewer = aNode({
    instanceId: 1,
    readySince: secondsBefore(8 * DAY),
    lastPatch: secondsBefore(45 * DAY),
  });
  const unannotated = aNode({ instanceId: 2, readySince: secondsBefore(9 * DAY), lastPatch: null });
  const malformed = aNode({ instanceId: 3, readySince: secondsBefore(7 * DAY), lastPatch: '2026-11-01' });
  const unhealthy = aNode({
    instanceId: 4,
    readySince: secondsBefore(30 * DAY),
    lastPatch: null,
    unschedulable: true,
  });
  const patchedOnly = [notNewer, unannotated, malformed, unhealthy];
  const oldImage: PoolImageFacts = {
    version: '2026.1001.0000',
    patchedAt: new Date(secondsBefore(40 * DAY)),
  };
  const thirtyDays = { maximumImageAgeSeconds: 30 * DAY };

  void it('without maximumImageAgeSeconds there is no fallback: up to date', () => {
    const selection = select(patchedOnly, { image: oldImage });
    assert.equal(selection.outcome, 'no-newer-patch');
    assert.equal(selection.fallback.used, false);
    assert.match(selection.fallback.reason, /disabled/);
    assert.deepEqual(selection.rejectionCounts, {
      'patch-not-newer-than-image': 1,
      'missing-patch-annotation': 1,
      'malformed-patch-timestamp': 1,
      unschedulable: 1,
    });
  });

  void it('an image younger than the maximum keeps the patch rules', () => {
    const young = { patchedAt: new Date(secondsBefore(25 * DAY)) };
    const selection = select(patchedOnly, { image: young, policy: thirtyDays });
    assert.equal(selection.outcome, 'no-newer-patch');
    assert.equal(selection.fallback.used, false);
    assert.match(selection.fallback.reason, /within maximumImageAge 30d/);
  });

  void it('an image older than the maximum waives the patch rules, never the others', () => {
    const selection = select(patchedOnly, { image: oldImage, policy: thirtyDays });
    assert.equal(selection.outcome, 'chosen');
    assert.equal(selection.fallback.used, true);
    assert.equal(selection.chosen?.name, unannotated.name);
    assert.deepEqual(
      selection.candidates.map((candidate) => [candidate.name, candidate.waived?.rule]),
      [
        [unannotated.name, 'missing-patch-annotation'],
        [notNewer.name, 'patch-not-newer-than-image'],
        [malformed.name, 'malformed-patch-timestamp'],
      ],
    );
    const rejected = verdictOf(selection, unhealthy.name);
    assert.equal(rejected.status === 'rejected' && rejected.rule, 'unschedulable');
    assert.deepEqual(selection.rejectionCounts, { unschedulable: 1 });
    assert.match(selection.reason, /patch rules waived/);
  });

  void it('ages the image from builtAt when patchedAt is unknown', () => {
    const built = { builtAt: new Date(secondsBefore(31 * DAY)) };
    const selection = select([notNewer], { image: built, policy: thirtyDays });
    assert.equal(selection.fallback.used, true);
    assert.match(selection.fallback.reason, /built/);
  });

  void it('treats an image of unknown age (marketplace) as too old', () => {
    const selection = select([unannotated], { image: undefined, policy: thirtyDays });
    assert.equal(selection.outcome, 'chosen');
    assert.equal(selection.fallback.used, true);
    assert.match(selection.fallback.reason, /unknown/);
  });

  void it('is not used when a node qualifies with the patch rules', () => {
    const patched = aNode({ instanceId: 5, readySince: secondsBefore(2 * DAY) });
    const selection = select([...patchedOnly, patched], { image: oldImage, policy: thirtyDays });
    assert.equal(selection.fallback.used, false);
    assert.equal(selection.chosen?.name, patched.name);
    assert.equal(selection.chosen?.waived, undefined);
  });

  void it('is not used when no node passes the non-patch rules', () => {
    const selection = select([unhealthy], { image: oldImage, policy: thirtyDays });
    assert.equal(selection.outcome, 'no-eligible-node');
    assert.equal(selection.fallback.used, false);
  });

  void it('still honours minimumCandidates', () => {
    const selection = select([notNewer], {
      image: oldImage,
      policy: { ...thirtyDays, minimumCandidates: 2 },
    });
    assert.equal(selection.fallback.used, true);
    assert.equal(selection.outcome, 'too-few-candidates');
  });
});

void describe('selectPrototypeNode: current image facts', () => {
  void it('with no image facts (marketplace image), any valid patch qualifies', () => {
    const node = aNode({ lastPatch: secondsBefore(400 * DAY) });
    assert.equal(select([node], { image: undefined }).chosen?.name, node.name);
  });
  void it('compares with builtAt when patchedAt is unknown', () => {
    const node = aNode({ lastPatch: secondsBefore(3 * DAY) });
    const verdict = verdictOf(
      select([node], { image: { builtAt: new Date(secondsBefore(2 * DAY)) } }),
      node.name,
    );
    assert.equal(verdict.status === 'rejected' && verdict.rule, 'patch-not-newer-than-image');
    assert.match(verdict.status === 'rejected' ? verdict.reason : '', /built at/);
  });
  void it('prefers patchedAt over builtAt', () => {
    const node = aNode({ lastPatch: secondsBefore(3 * DAY) });
    const image = { patchedAt: new Date(secondsBefore(4 * DAY)), builtAt: new Date(secondsBefore(2 * DAY)) };
    assert.equal(select([node], { image }).chosen?.name, node.name);
  });
});

void describe('pool membership', () => {
  void it('matches providerIDs whose resource group casing differs from the configured pool', () => {
    const providerId =
      'azure:///subscriptions/6B1F9C2E-3A4D-4E5F-8A9B-0C1D2E3F4A5B/resourceGroups/rg-cluster-prod/providers/' +
      'Microsoft.Compute/virtualMachineScaleSets/K8S-POOL-A/virtualMachines/3';
    const node = aNode({ providerId });
    const selection = select([node], {
      pool: { scaleSet: { ...DEFAULT_POOL, resourceGroup: 'RG-CLUSTER-PROD' } },
    });
    assert.equal(selection.chosen?.name, node.name);
  });

  void it('takes Flexible members from the ARM-resolved member list, case-insensitively', () => {
    const vm = (name: string): string =>
      virtualMachineResourceId({ ...DEFAULT_POOL, resourceGroup: 'rg-cluster-prod', name });
    const member = aNode({
      name: 'flex-a-1',
      providerId: `azure://${vm('flex-a_1a2b3c4d')}`,
      readySince: secondsBefore(5 * DAY),
    });
    const other = aNode({ name: 'flex-a-2', providerId: `azure://${vm('flex-a_5e6f7a8b')}` });
    const standalone = aNode({ name: 'standalone', providerId: `azure://${vm('jumpbox')}` });
    const selection = select([member, other, standalone], {
      pool: {
        scaleSet: DEFAULT_POOL,
        flexibleMemberIds: [
          virtualMachineResourceId({ ...DEFAULT_POOL, name: 'FLEX-A_1A2B3C4D' }),
          virtualMachineResourceId({ ...DEFAULT_POOL, name: 'flex-a_5e6f7a8b' }),
          '/subscriptions/garbage',
        ],
      },
    });
    assert.equal(selection.poolNodeCount, 2);
    assert.deepEqual(
      selection.candidates.map((candidate) => candidate.name),
      ['flex-a-1', 'flex-a-2'],
    );
    const verdict = verdictOf(selection, 'standalone');
    assert.equal(verdict.status === 'rejected' && verdict.rule, 'not-in-pool');
  });
});

void describe('groupNodesByScaleSet + selectPrototypeNodeForPool', () => {
  const pools: ScaleSetRef[] = [DEFAULT_POOL, OTHER_POOL, { ...DEFAULT_POOL, name: 'k8s-pool-c' }];
  const nodes = [
    ...pools.flatMap((pool, p) =>
      [0, 1, 2].map((i) => aNode({ pool, instanceId: i, readySince: secondsBefore((p + i + 2) * DAY) })),
    ),
    aNode({ name: 'no-id', providerId: undefined }),
  ];
  const groups = groupNodesByScaleSet(nodes);

  void it('parses each providerID once and indexes Uniform instances by scale set', () => {
    assert.equal(groups.nodes.length, nodes.length);
    assert.equal(groups.byScaleSet.size, 3);
    assert.deepEqual(
      groups.unresolved.map((entry) => entry.node.name),
      ['no-id'],
    );
  });

  for (const pool of pools) {
    void it(`agrees with selectPrototypeNode for ${pool.name}, with verdicts for members only`, () => {
      const input = { pool: { scaleSet: pool }, policy: DEFAULT_SELECTION_POLICY, image: IMAGE, now: NOW };
      const perPool = selectPrototypeNodeForPool(groups, input);
      const whole = selectPrototypeNode({ ...input, nodes });
      assert.deepEqual(perPool.chosen, whole.chosen);
      assert.deepEqual(perPool.candidates, whole.candidates);
      assert.equal(perPool.verdicts.length, 3);
      assert.equal(perPool.nodesOutsidePool, nodes.length - 3);
      assert.equal(whole.verdicts.length, nodes.length);
      assert.ok(perPool.verdicts.every((verdict) => verdict.name.startsWith(pool.name)));
    });
  }
});
