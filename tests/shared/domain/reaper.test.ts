// Table tests for the reaper's decision: what a pool's dead runs left, and what is given back or kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { NodePriorState } from '../../../shared/domain/ownership.js';
import {
  describeReapAction,
  type HeldNode,
  planReaping,
  type PoolHoldings,
  type ReapPlan,
} from '../../../shared/domain/reaper.js';

const DEAD = 'run-dead';
const LIVE = 'run-live';
const SCHEDULABLE: NodePriorState = { unschedulable: false, scaleDownDisabled: null };
const ADMIN_CORDONED: NodePriorState = { unschedulable: true, scaleDownDisabled: 'true' };

function node(overrides: Partial<HeldNode> = {}): HeldNode {
  return {
    name: 'n0',
    runId: DEAD,
    prior: SCHEDULABLE,
    unschedulable: true,
    instance: { kind: 'present', instanceId: '0', powerState: 'running' },
    ...overrides,
  };
}

const EMPTY: PoolHoldings = { nodes: [], prepPods: [], snapshots: [], versions: [] };

function holdings(overrides: Partial<PoolHoldings>): PoolHoldings {
  return { ...EMPTY, ...overrides };
}

interface Case {
  readonly name: string;
  readonly holdings: PoolHoldings;
  readonly alive?: string;
  /** `kind:target` per action, in order. */
  readonly actions: readonly string[];
  /** `what` of every kept item. */
  readonly kept?: readonly string[];
}

function show(plan: ReapPlan): { actions: string[]; kept: string[] } {
  return {
    actions: plan.actions.map((action) => {
      switch (action.kind) {
        case 'delete-prep-pod':
          return action.gracePeriodSeconds === undefined
            ? `delete-prep-pod:${action.name}`
            : `delete-prep-pod:${action.name}:grace${action.gracePeriodSeconds}`;
        case 'detach-copy-disk':
          return `detach-copy-disk:${action.diskId.split('/').at(-1) ?? ''}`;
        case 'delete-copy-disk':
          return `delete-copy-disk:${action.name}${action.afterDetach ? ':after-detach' : ''}`;
        case 'start-instance':
          return `start-instance:${action.instanceId}${action.node === undefined ? ':no-node' : ''}`;
        case 'clear-stop-record':
          return `clear-stop-record:${action.instanceId}${action.place === 'pool-lease' ? ':lease' : ''}`;
        case 'restore-node':
          return `restore-node:${action.node}`;
        case 'delete-snapshot':
          return `delete-snapshot:${action.name}`;
        case 'delete-image-version':
          return `delete-image-version:${action.versionName}`;
      }
    }),
    kept: plan.kept.map((item) => item.what),
  };
}

const COPY_ID = '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/disks/copy-1';
const DONOR_ID =
  '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss/virtualMachines/3';

const CASES: readonly Case[] = [
  { name: 'nothing left', holdings: EMPTY, actions: [] },
  {
    name: 'a dead live capture: its pods get TERM first, the copy is detached, then deleted, then its snapshot',
    holdings: holdings({
      prepPods: [
        {
          namespace: 'vmss-prototype',
          name: 'vmssp-scrub-1',
          runId: DEAD,
          phase: 'Running',
          gracePeriodSeconds: 10,
        },
      ],
      copyDisks: [
        { id: COPY_ID, name: 'copy-1', runId: DEAD, attachedTo: DONOR_ID, provisioningState: 'Succeeded' },
      ],
      snapshots: [
        {
          subscriptionId: 's',
          resourceGroup: 'rg',
          name: 'snap-1',
          runId: DEAD,
          provisioningState: 'Succeeded',
        },
      ],
    }),
    actions: [
      'delete-prep-pod:vmssp-scrub-1:grace10',
      'detach-copy-disk:copy-1',
      'delete-copy-disk:copy-1:after-detach',
      'delete-snapshot:snap-1',
    ],
  },
  {
    name: "a detached copy of a dead run is deleted; the live run's copy and one without a run are kept",
    alive: LIVE,
    holdings: holdings({
      copyDisks: [
        { id: COPY_ID, name: 'copy-1', runId: DEAD, provisioningState: 'Succeeded' },
        {
          id: `${COPY_ID}-live`,
          name: 'copy-live',
          runId: LIVE,
          attachedTo: DONOR_ID,
          provisioningState: 'Succeeded',
        },
        { id: `${COPY_ID}-x`, name: 'copy-x', provisioningState: 'Succeeded' },
        { id: `${COPY_ID}-gone`, name: 'copy-gone', runId: DEAD, provisioningState: 'Deleting' },
      ],
    }),
    actions: ['delete-copy-disk:copy-1'],
    kept: ['copy disk copy-live', 'copy disk copy-x', 'copy disk copy-gone'],
  },
  {
    name: 'a dead run holding a running node: restore it only',
    holdings: holdings({ nodes: [node()] }),
    actions: ['restore-node:n0'],
  },
  {
    name: 'a dead run stopped the VM: delete its prep pod, start the VM, then restore the node',
    holdings: holdings({
      nodes: [node({ instance: { kind: 'present', instanceId: '3', powerState: 'stopped' } })],
      prepPods: [{ namespace: 'vmss-prototype', name: 'prep-1', runId: DEAD, phase: 'Succeeded' }],
    }),
    actions: ['delete-prep-pod:prep-1', 'start-instance:3', 'restore-node:n0'],
  },
  {
    name: 'a VM a dead run recorded as stopped, its node object deleted: started, then the record removed',
    holdings: holdings({
      stoppedVms: [
        {
          instanceId: '3',
          runId: DEAD,
          instance: { kind: 'present', instanceId: '3', powerState: 'stopped' },
        },
      ],
    }),
    actions: ['start-instance:3:no-node', 'clear-stop-record:3'],
  },
  {
    name: "a CAPZ pool's VM recorded on the pool lease, its node deleted: started once, the lease's record removed",
    holdings: holdings({
      stoppedVms: [
        {
          instanceId: '3',
          runId: DEAD,
          instance: { kind: 'present', instanceId: '3', powerState: 'deallocated' },
          place: 'pool-lease',
        },
        // The same VM recorded in both places (an older run's tag): one start, both records removed.
        {
          instanceId: '3',
          runId: DEAD,
          instance: { kind: 'present', instanceId: '3', powerState: 'deallocated' },
        },
      ],
    }),
    actions: ['start-instance:3:no-node', 'clear-stop-record:3:lease', 'clear-stop-record:3'],
  },
  {
    name: 'a recorded VM whose node is still marked: started once (by its node), restored, record removed',
    holdings: holdings({
      nodes: [node({ instance: { kind: 'present', instanceId: '3', powerState: 'stopped' } })],
      stoppedVms: [
        {
          instanceId: '3',
          runId: DEAD,
          instance: { kind: 'present', instanceId: '3', powerState: 'stopped' },
        },
      ],
    }),
    actions: ['start-instance:3', 'restore-node:n0', 'clear-stop-record:3'],
  },
  {
    name: "a recorded VM running again or gone: only the record goes; the live run's and an unreadable one stay",
    alive: LIVE,
    holdings: holdings({
      stoppedVms: [
        {
          instanceId: '1',
          runId: DEAD,
          instance: { kind: 'present', instanceId: '1', powerState: 'running' },
        },
        { instanceId: '2', runId: DEAD, instance: { kind: 'gone' } },
        {
          instanceId: '3',
          runId: LIVE,
          instance: { kind: 'present', instanceId: '3', powerState: 'stopped' },
        },
        { instanceId: '4', runId: DEAD, instance: { kind: 'unknown', reason: 'ARM answered 503' } },
      ],
    }),
    actions: ['clear-stop-record:1', 'clear-stop-record:2'],
    kept: [
      'the VM of instance 3, recorded as stopped by run run-live',
      'the VM of instance 4, recorded as stopped by run run-dead',
    ],
  },
  {
    name: 'a deallocated VM is started too',
    holdings: holdings({
      nodes: [node({ instance: { kind: 'present', instanceId: '4', powerState: 'deallocated' } })],
    }),
    actions: ['start-instance:4', 'restore-node:n0'],
  },
  {
    name: 'a VM that is gone: the node object is still given back',
    holdings: holdings({ nodes: [node({ instance: { kind: 'gone' } })] }),
    actions: ['restore-node:n0'],
  },
  {
    name: 'a VM whose power state cannot be read: the node stays held until it can (it may be stopped)',
    holdings: holdings({
      nodes: [node({ instance: { kind: 'unknown', reason: 'ARM answered 503' } })],
    }),
    actions: [],
    kept: ['node n0'],
  },
  {
    name: 'everything of the live run is kept',
    alive: LIVE,
    holdings: holdings({
      nodes: [node({ runId: LIVE, instance: { kind: 'present', instanceId: '0', powerState: 'stopped' } })],
      prepPods: [{ namespace: 'ns', name: 'prep-live', runId: LIVE, phase: 'Running' }],
      snapshots: [
        {
          subscriptionId: 's',
          resourceGroup: 'rg',
          name: 'snap-live',
          runId: LIVE,
          provisioningState: 'Creating',
        },
      ],
      versions: [
        {
          versionName: '2026.1122.1',
          runId: LIVE,
          provisioningState: 'Creating',
          excludeFromLatest: true,
          rejected: false,
        },
      ],
    }),
    actions: [],
    kept: ['prep pod ns/prep-live', 'node n0', 'snapshot snap-live', 'image version 2026.1122.1'],
  },
  {
    name: 'a dead run next to the live one: only the dead one is given back',
    alive: LIVE,
    holdings: holdings({
      nodes: [node({ name: 'n1', runId: LIVE }), node({ name: 'n2', runId: DEAD })],
      snapshots: [
        {
          subscriptionId: 's',
          resourceGroup: 'rg',
          name: 'snap-live',
          runId: LIVE,
          provisioningState: 'Succeeded',
        },
        {
          subscriptionId: 's',
          resourceGroup: 'rg',
          name: 'snap-dead',
          runId: DEAD,
          provisioningState: 'Succeeded',
        },
      ],
    }),
    actions: ['restore-node:n2', 'delete-snapshot:snap-dead'],
    kept: ['node n1', 'snapshot snap-live'],
  },
  {
    name: 'a node without a recorded prior state is left for a person',
    holdings: holdings({ nodes: [node({ prior: undefined })] }),
    actions: [],
    kept: ['node n0'],
  },
  {
    name: 'unfinished versions of a dead run are deleted; published, rejected, modelled and foreign ones kept',
    holdings: holdings({
      modelImageId:
        '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/d/versions/2026.1120.5',
      versions: [
        {
          versionName: '2026.1120.1',
          runId: DEAD,
          provisioningState: 'Creating',
          excludeFromLatest: true,
          rejected: false,
        },
        {
          versionName: '2026.1120.2',
          runId: DEAD,
          provisioningState: 'Failed',
          excludeFromLatest: true,
          rejected: false,
        },
        {
          versionName: '2026.1120.3',
          runId: DEAD,
          provisioningState: 'Succeeded',
          excludeFromLatest: true,
          rejected: false,
        },
        {
          versionName: '2026.1120.4',
          runId: DEAD,
          provisioningState: 'Succeeded',
          excludeFromLatest: false,
          rejected: false,
        },
        {
          versionName: '2026.1120.5',
          runId: DEAD,
          provisioningState: 'Succeeded',
          excludeFromLatest: true,
          rejected: false,
        },
        {
          versionName: '2026.1120.6',
          runId: DEAD,
          provisioningState: 'Succeeded',
          excludeFromLatest: true,
          rejected: true,
        },
        { versionName: '2026.1120.7', provisioningState: 'Failed', excludeFromLatest: true, rejected: false },
        {
          versionName: '2026.1120.8',
          runId: DEAD,
          provisioningState: 'Deleting',
          excludeFromLatest: true,
          rejected: false,
        },
      ],
    }),
    actions: [
      'delete-image-version:2026.1120.1',
      'delete-image-version:2026.1120.2',
      'delete-image-version:2026.1120.3',
    ],
    kept: ['image version 2026.1120.5', 'image version 2026.1120.6', 'image version 2026.1120.8'],
  },
  {
    name: 'prep pods and snapshots without a run id are not ours to delete',
    holdings: holdings({
      prepPods: [{ namespace: 'ns', name: 'prep-old', phase: 'Succeeded' }],
      snapshots: [
        { subscriptionId: 's', resourceGroup: 'rg', name: 'snap-old', provisioningState: 'Succeeded' },
      ],
    }),
    actions: [],
    kept: ['prep pod ns/prep-old', 'snapshot snap-old'],
  },
  {
    name: 'order: prep pods, VM starts, nodes, snapshots, versions',
    holdings: holdings({
      versions: [
        {
          versionName: 'v1',
          runId: DEAD,
          provisioningState: 'Creating',
          excludeFromLatest: true,
          rejected: false,
        },
      ],
      snapshots: [
        {
          subscriptionId: 's',
          resourceGroup: 'rg',
          name: 'snap',
          runId: DEAD,
          provisioningState: 'Creating',
        },
      ],
      nodes: [node({ instance: { kind: 'present', instanceId: '7', powerState: 'stopping' } })],
      prepPods: [{ namespace: 'ns', name: 'prep', runId: DEAD, phase: 'Running' }],
    }),
    actions: [
      'delete-prep-pod:prep',
      'start-instance:7',
      'restore-node:n0',
      'delete-snapshot:snap',
      'delete-image-version:v1',
    ],
  },
];

void describe('planReaping', () => {
  for (const testCase of CASES) {
    void it(testCase.name, () => {
      const shown = show(planReaping(testCase.holdings, testCase.alive));
      assert.deepEqual(shown.actions, testCase.actions);
      assert.deepEqual(shown.kept, testCase.kept ?? []);
    });
  }

  void it('restores exactly the recorded prior state (an administrator cordon stays)', () => {
    const plan = planReaping(holdings({ nodes: [node({ prior: ADMIN_CORDONED })] }), undefined);
    const [action] = plan.actions;
    assert.equal(action?.kind, 'restore-node');
    assert.deepEqual(action.kind === 'restore-node' ? action.prior : undefined, ADMIN_CORDONED);
    assert.match(
      describeReapAction(action),
      /keep it cordoned \(it was before\), put scale-down-disabled back to "true"/,
    );
  });

  void it("says where a stop record is removed from: the scale set's tags or the pool lease", () => {
    const record = { kind: 'clear-stop-record', instanceId: '3', runId: DEAD } as const;
    assert.match(describeReapAction(record), /from the scale set's tags/);
    assert.match(describeReapAction({ ...record, place: 'pool-lease' }), /from the pool lease/);
  });

  void it('every action is described with the run that left it', () => {
    const plan = planReaping(
      holdings({
        nodes: [node({ instance: { kind: 'present', instanceId: '0', powerState: 'stopped' } })],
        prepPods: [{ namespace: 'ns', name: 'p', runId: DEAD, phase: 'Running' }],
        snapshots: [
          {
            subscriptionId: 's',
            resourceGroup: 'rg',
            name: 'snap',
            runId: DEAD,
            provisioningState: 'Succeeded',
          },
        ],
        versions: [
          {
            versionName: 'v',
            runId: DEAD,
            provisioningState: 'Failed',
            excludeFromLatest: true,
            rejected: false,
          },
        ],
      }),
      undefined,
    );
    assert.equal(plan.actions.length, 5);
    for (const action of plan.actions)
      assert.match(describeReapAction(action), new RegExp(`left by run ${DEAD}`));
  });
});
