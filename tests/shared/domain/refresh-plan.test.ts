import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ClusterNode } from '../../../shared/domain/cluster-node.js';
import {
  type PoolImageFacts,
  type PrototypeSelection,
  selectPrototypeNode,
} from '../../../shared/domain/prototype-selection.js';
import {
  applyBootstrapFlavour,
  planPoolRefresh,
  type RefreshPlan,
} from '../../../shared/domain/refresh-plan.js';
import { checkScaleSetEligibility, type ScaleSetEligibility } from '../../../shared/domain/scale-set.js';
import { DEFAULT_SELECTION_POLICY, type SelectionPolicy } from '../../../shared/domain/selection-policy.js';
import { aNode, DAY, DEFAULT_POOL, NOW, readyCondition, secondsBefore } from '../../builders/node.js';
import { aScaleSet } from '../../builders/scale-set.js';

const IMAGE: PoolImageFacts = { patchedAt: new Date(secondsBefore(10 * DAY)) };
const ELIGIBLE: ScaleSetEligibility = { eligible: true };

function selection(
  nodes: ClusterNode[],
  policy: Partial<SelectionPolicy> = {},
  image = IMAGE,
): PrototypeSelection {
  return selectPrototypeNode({
    pool: { scaleSet: DEFAULT_POOL },
    nodes,
    policy: { ...DEFAULT_SELECTION_POLICY, ...policy },
    image,
    now: NOW,
  });
}

const patched = aNode({ instanceId: 1 });
const cordoned = aNode({ instanceId: 2, unschedulable: true, readySince: secondsBefore(9 * DAY) });
const stale = aNode({ instanceId: 3, lastPatch: secondsBefore(30 * DAY) });
const notReadyCordoned = aNode({
  instanceId: 4,
  unschedulable: true,
  conditions: [readyCondition(secondsBefore(60), 'False')],
});
const deleting = aNode({
  instanceId: 5,
  taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }],
});
const young = aNode({ instanceId: 6, readySince: secondsBefore(60) });
const otherPool = aNode({ pool: { ...DEFAULT_POOL, name: 'k8s-pool-b' } });

void describe('planPoolRefresh', () => {
  const cases: {
    name: string;
    eligibility?: ScaleSetEligibility;
    selection: PrototypeSelection;
    enabled?: boolean;
    requestedNode?: string;
    expected: Partial<Record<string, unknown>> & { kind: RefreshPlan['kind'] };
    warnings?: RegExp[];
  }[] = [
    {
      name: 'auto: a patched candidate → refresh',
      selection: selection([patched, stale]),
      expected: { kind: 'refresh', node: patched.name, trigger: 'auto' },
    },
    {
      name: 'auto: fallback → refresh marked fallback',
      selection: selection([stale], { maximumImageAgeSeconds: 5 * DAY }),
      expected: { kind: 'refresh', node: stale.name, trigger: 'fallback' },
    },
    {
      name: 'auto: nothing patched after the image → up-to-date',
      selection: selection([stale, aNode({ instanceId: 7, lastPatch: null })]),
      expected: { kind: 'up-to-date' },
      warnings: [],
    },
    {
      name: 'auto: up-to-date warns about untrusted timestamps',
      selection: selection([
        stale,
        aNode({ instanceId: 7, lastPatch: '2026-11-21' }),
        aNode({ instanceId: 8, lastPatch: secondsBefore(-DAY) }),
      ]),
      expected: { kind: 'up-to-date' },
      warnings: [/1 node\(s\) have a malformed/, /1 node\(s\) .* in the future/],
    },
    {
      name: 'auto: too few candidates → skip',
      selection: selection([patched], { minimumCandidates: 2 }),
      expected: { kind: 'skip', code: 'too-few-candidates' },
    },
    {
      name: 'auto: no healthy node → skip',
      selection: selection([cordoned, deleting]),
      expected: { kind: 'skip', code: 'no-eligible-node' },
    },
    {
      name: 'auto: empty pool → skip',
      selection: selection([otherPool]),
      expected: { kind: 'skip', code: 'no-eligible-node' },
    },
    {
      name: 'disabled pool → skip even when a candidate exists',
      selection: selection([patched]),
      enabled: false,
      expected: { kind: 'skip', code: 'pool-disabled' },
    },
    {
      name: 'ineligible scale set → refused, with every reason',
      eligibility: checkScaleSetEligibility(
        aScaleSet({ ephemeralOsDisk: true, upgradePolicyMode: 'Rolling' }),
      ),
      selection: selection([patched]),
      expected: { kind: 'refused' },
    },
    {
      name: 'ineligible scale set → refused even for a named node',
      eligibility: checkScaleSetEligibility(aScaleSet({ osType: 'Windows' })),
      selection: selection([patched]),
      requestedNode: patched.name,
      expected: { kind: 'refused' },
    },
    {
      name: 'named node passing every rule → refresh, no warnings',
      selection: selection([patched, aNode({ instanceId: 9, readySince: secondsBefore(20 * DAY) })]),
      requestedNode: patched.name,
      expected: { kind: 'refresh', node: patched.name, trigger: 'requested' },
      warnings: [],
    },
    {
      name: 'named node cordoned → refresh with a warning',
      selection: selection([patched, cordoned]),
      requestedNode: cordoned.name,
      expected: { kind: 'refresh', node: cordoned.name, trigger: 'requested' },
      warnings: [/^unschedulable: /],
    },
    {
      name: 'named node failing several advisory rules lists them',
      selection: selection([
        aNode({ instanceId: 10, unschedulable: true, lastPatch: secondsBefore(30 * DAY) }),
      ]),
      requestedNode: 'k8s-pool-a-vmss00000a',
      expected: { kind: 'refresh', node: 'k8s-pool-a-vmss00000a', trigger: 'requested' },
      warnings: [/^unschedulable: /, /also fails advisory rules: patch-not-newer-than-image/],
    },
    {
      name: 'named node Ready for less than the minimum → refresh (advisory)',
      selection: selection([young]),
      requestedNode: young.name,
      expected: { kind: 'refresh', node: young.name, trigger: 'requested' },
      warnings: [/^ready-too-short: /],
    },
    {
      name: 'named node not Ready, even behind an earlier rule → skip',
      selection: selection([patched, notReadyCordoned]),
      requestedNode: notReadyCordoned.name,
      expected: { kind: 'skip', code: 'requested-node-not-ready' },
    },
    {
      name: 'named node being removed by cluster-autoscaler → skip',
      selection: selection([patched, deleting]),
      requestedNode: deleting.name,
      expected: { kind: 'skip', code: 'requested-node-being-deleted' },
    },
    {
      name: 'named node of another pool → skip',
      selection: selection([patched, otherPool]),
      requestedNode: otherPool.name,
      expected: { kind: 'skip', code: 'requested-node-not-in-pool' },
    },
    {
      name: 'named node unknown → skip',
      selection: selection([patched]),
      requestedNode: 'no-such-node',
      expected: { kind: 'skip', code: 'requested-node-not-in-pool' },
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const plan = planPoolRefresh({
        eligibility: c.eligibility ?? ELIGIBLE,
        selection: c.selection,
        now: NOW,
        ...(c.enabled === undefined ? {} : { enabled: c.enabled }),
        ...(c.requestedNode === undefined ? {} : { requestedNode: c.requestedNode }),
      });
      for (const [key, value] of Object.entries(c.expected)) {
        assert.deepEqual(
          (plan as unknown as Record<string, unknown>)[key],
          value,
          `${key} (plan: ${JSON.stringify(plan)})`,
        );
      }
      assert.equal(plan.plannedAt, NOW.toISOString());
      assert.deepEqual(plan.pool, DEFAULT_POOL);
      if (c.warnings !== undefined) {
        const warnings = plan.kind === 'refresh' || plan.kind === 'up-to-date' ? plan.warnings : [];
        assert.equal(warnings.length, c.warnings.length, JSON.stringify(warnings));
        c.warnings.forEach((pattern, i) => assert.match(warnings[i] ?? '', pattern));
      }
      if (plan.kind === 'refused') {
        assert.ok(c.eligibility !== undefined && !c.eligibility.eligible);
        assert.deepEqual(plan.refusals, c.eligibility.reasons);
      }
    });
  }
});

void describe('applyBootstrapFlavour', () => {
  const refresh = planPoolRefresh({ eligibility: ELIGIBLE, selection: selection([patched]), now: NOW });
  const skip = planPoolRefresh({ eligibility: ELIGIBLE, selection: selection([young]), now: NOW });
  const disabled = planPoolRefresh({
    eligibility: ELIGIBLE,
    selection: selection([patched]),
    enabled: false,
    now: NOW,
  });
  const aksEngineDonor = { ...patched, labels: { ...patched.labels, 'kubernetes.azure.com/role': 'agent' } };
  const k3sDonor = { ...patched, annotations: { ...patched.annotations, 'k3s.io/node-args': '["agent"]' } };
  const capzDonor = { ...patched, annotations: { 'cluster.x-k8s.io/cluster-name': 'capz' } };
  const cases: {
    name: string;
    plan: RefreshPlan;
    configured?: 'aks-engine' | 'kubeadm' | 'k3s' | 'rke2';
    donor?: ClusterNode;
    kind: RefreshPlan['kind'];
    flavour?: string;
    reason?: RegExp;
  }[] = [
    {
      name: 'refresh, donor shows aks-engine',
      plan: refresh,
      donor: aksEngineDonor,
      kind: 'refresh',
      flavour: 'aks-engine',
    },
    { name: 'refresh, donor shows k3s', plan: refresh, donor: k3sDonor, kind: 'refresh', flavour: 'k3s' },
    {
      name: 'refresh, configured rke2',
      plan: refresh,
      configured: 'rke2',
      donor: aksEngineDonor,
      kind: 'refresh',
      flavour: 'rke2',
    },
    {
      name: 'refresh, donor shows kubeadm (Cluster API marks) → kubeadm',
      plan: refresh,
      donor: capzDonor,
      kind: 'refresh',
      flavour: 'kubeadm',
    },
    {
      name: 'refresh, nothing to detect → refused with the fix',
      plan: refresh,
      donor: patched,
      kind: 'refused',
      reason: /unknown.*set pools\[\]\.bootstrapFlavour/,
    },
    { name: 'skip, configured kubeadm → still skipped', plan: skip, configured: 'kubeadm', kind: 'skip' },
    { name: 'skip, nothing configured → still skipped', plan: skip, kind: 'skip' },
    { name: 'skip, configured k3s → still skipped', plan: skip, configured: 'k3s', kind: 'skip' },
    { name: 'disabled stays disabled', plan: disabled, configured: 'kubeadm', kind: 'skip' },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const plan = applyBootstrapFlavour(c.plan, {
        ...(c.configured === undefined ? {} : { configured: c.configured }),
        ...(c.donor === undefined ? {} : { donor: c.donor }),
      });

      assert.equal(plan.kind, c.kind, JSON.stringify(plan));
      if (plan.kind === 'refresh') assert.equal(plan.flavour?.flavour, c.flavour);
      if (plan.kind === 'refused') {
        assert.match(plan.reason, c.reason ?? /./);
        assert.equal(plan.refusals[0]?.code, 'bootstrap-flavour');
      }
    });
  }
});
