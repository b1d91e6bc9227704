/** Shared fixtures for the trigger tests: configured clusters, event builders, a recording context. */
import azureFunctions, { type HttpRequest, type InvocationContext } from '@azure/functions';

import type { TriggerDependencies } from '../../../functions/triggers/trigger-dependencies.js';
import type { PoolPlan } from '../../../shared/application/pool-plan.js';
import { planSummaryOf } from '../../../shared/application/pool-plan.js';
import type { PoolOwnership, PoolStatus } from '../../../shared/application/pool-status.js';
import type {
  FlexibleMembership,
  NoticeClusterScope,
  RebootNotice,
} from '../../../shared/application/reboot-notices.js';
import { NotFoundError } from '../../../shared/domain/errors.js';

export const SUB = '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f';
export const OTHER_SUB = '11111111-2222-3333-4444-555555555555';
export const NOW = new Date('2026-11-22T12:00:00.000Z');
/** The settings' defaults: 8 pools per subscription at once, 4 per cluster. */
export const ADMISSION = { maxPoolsPerSubscription: 8, maxParallelPools: 4 } as const;

export const CLUSTERS: readonly NoticeClusterScope[] = [
  {
    name: 'prod',
    subscriptionId: SUB,
    resourceGroup: 'rg-K8s-Prod',
    pools: [
      { name: 'pool1', scaleSet: 'k8s-pool1-12345678-vmss', resourceGroup: 'rg-K8s-Prod', enabled: true },
      { name: 'flex', scaleSet: 'k8s-flex-vmss', resourceGroup: 'rg-K8s-Prod', enabled: true },
      { name: 'off', scaleSet: 'k8s-off-vmss', resourceGroup: 'rg-K8s-Prod', enabled: false },
    ],
  },
  { name: 'dev', subscriptionId: SUB, resourceGroup: 'rg-dev', pools: 'all' },
];

export function uniformVm(
  scaleSet = 'k8s-pool1-12345678-vmss',
  instance = '3',
  group = 'rg-K8s-Prod',
  sub = SUB,
): string {
  return `/subscriptions/${sub}/resourceGroups/${group}/providers/Microsoft.Compute/virtualMachineScaleSets/${scaleSet}/virtualMachines/${instance}`;
}

/**
 * What ARM records of the Flexible member VMs of rg-K8s-Prod (lowercased name → scale set): one named the
 * platform's way, one whose name says nothing of its scale set, and a standalone VM named like a member.
 */
export const FLEX_MEMBERSHIP: ReadonlyMap<string, string | undefined> = new Map([
  ['k8s-flex-vmss_1a2b3c4d', 'k8s-flex-vmss'],
  ['node-7f3a9c', 'k8s-flex-vmss'],
  ['k8s-flex-vmss_deadbeef', undefined],
  ['k8s-pool1-12345678-vmss_0a0b0c0d', 'k8s-off-vmss'],
]);

/** ARM's recorded membership of the VMs in FLEX_MEMBERSHIP (any other VM: not found, so none). */
export const flexMembership: FlexibleMembership = (_cluster, vm) => {
  const scaleSet = FLEX_MEMBERSHIP.get(vm.name.toLowerCase());
  return Promise.resolve(
    scaleSet === undefined
      ? undefined
      : { subscriptionId: vm.subscriptionId, resourceGroup: 'rg-K8s-Prod', name: scaleSet },
  );
};

export function flexVm(name = 'k8s-flex-vmss_1a2b3c4d', group = 'rg-K8s-Prod', sub = SUB): string {
  return `/subscriptions/${sub}/resourceGroups/${group}/providers/Microsoft.Compute/virtualMachines/${name}`;
}

export function annotatedEvent(
  resourceId: string,
  annotation = 'VirtualMachineRestarted',
  id = 'evt-1',
): Record<string, unknown> {
  return {
    id,
    topic: `/subscriptions/${SUB}`,
    subject: resourceId,
    eventType: 'Microsoft.ResourceNotifications.HealthResources.ResourceAnnotated',
    eventTime: '2026-11-22T11:58:00Z',
    dataVersion: '2023-12-01',
    metadataVersion: '1',
    data: {
      resourceInfo: {
        id: `${resourceId}/providers/Microsoft.ResourceHealth/availabilityStatuses/current`,
        properties: {
          targetResourceId: resourceId,
          targetResourceType: 'Microsoft.Compute/virtualMachines',
          occurredTime: '2026-11-22T11:57:30Z',
          annotationName: annotation,
        },
      },
      apiVersion: '2023-12-01',
    },
  };
}

export function availabilityEvent(
  resourceId: string,
  previous: string,
  current: string,
  id = 'evt-2',
): Record<string, unknown> {
  return {
    id,
    subject: resourceId,
    eventType: 'Microsoft.ResourceNotifications.HealthResources.AvailabilityStatusChanged',
    eventTime: '2026-11-22T11:58:00Z',
    dataVersion: '2023-12-01',
    data: {
      resourceInfo: {
        properties: {
          targetResourceId: resourceId,
          occurredTime: '2026-11-22T11:57:40Z',
          previousAvailabilityState: previous,
          availabilityState: current,
        },
      },
    },
  };
}

export function actionEvent(resourceId: string, operation: string, id = 'evt-3'): Record<string, unknown> {
  return {
    id,
    subject: resourceId,
    eventType: 'Microsoft.Resources.ResourceActionSuccess',
    eventTime: '2026-11-22T11:58:00Z',
    dataVersion: '2',
    data: { operationName: operation, resourceUri: resourceId, status: 'Succeeded', subscriptionId: SUB },
  };
}

export function asCloudEvent(event: Record<string, unknown>): Record<string, unknown> {
  return {
    specversion: '1.0',
    id: event['id'],
    type: event['eventType'],
    source: `/subscriptions/${SUB}`,
    subject: event['subject'],
    time: event['eventTime'],
    data: event['data'],
  };
}

export interface RecordedLog {
  readonly level: string;
  readonly args: unknown[];
}

export function recordingContext(logs: RecordedLog[] = []): InvocationContext & { logs: RecordedLog[] } {
  const context = new azureFunctions.InvocationContext({
    invocationId: 'inv-0001',
    functionName: 'test',
    logHandler: (level, ...args) => logs.push({ level, args }),
  });
  return Object.assign(context, { logs });
}

export function request(init: {
  method?: string;
  url?: string;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}): HttpRequest {
  return new azureFunctions.HttpRequest({
    method: init.method ?? 'POST',
    url: init.url ?? 'https://vmssp.example.net/api/clusters/prod/refresh',
    params: init.params ?? {},
    headers: init.headers ?? {},
    ...(init.body === undefined
      ? {}
      : { body: typeof init.body === 'string' ? { string: init.body } : { bytes: init.body } }),
  });
}

export interface FakeDependencies extends TriggerDependencies {
  readonly sent: RebootNotice[];
  readonly nodes: Map<string, string>;
  failSends: boolean;
  /** What readPoolOwnership answers (per test). */
  ownership: PoolOwnership;
}

export const FREE_POOL: PoolOwnership = { lease: { state: 'free' }, heldNodes: [], leftovers: [], kept: [] };

/** Trigger dependencies over in-memory data: pools per cluster, node → resource id, a recording queue. */
export function fakeDependencies(
  pools: Record<string, string[]> = { prod: ['flex', 'off', 'pool1'], dev: ['k8s-dev-vmss'] },
): FakeDependencies {
  const sent: RebootNotice[] = [];
  const nodes = new Map<string, string>([['prod/k8s-pool1-12345678-vmss000003', uniformVm()]]);
  const deps: FakeDependencies = {
    clusters: CLUSTERS,
    quietPeriodSeconds: 600,
    admission: ADMISSION,
    sent,
    nodes,
    failSends: false,
    ownership: FREE_POOL,
    readPoolOwnership() {
      return Promise.resolve(deps.ownership);
    },
    async readClusterStatus(cluster) {
      const list = await deps.listPools(cluster);
      const pools = await Promise.all(
        list.map(async (pool) => ({
          ...(await deps.readPoolStatus(cluster, pool)),
          plan: planSummaryOf((await deps.planPool(cluster, pool)).decision),
        })),
      );
      return { pools, unreadable: [] };
    },
    notices: {
      send(notice) {
        if (deps.failSends) return Promise.reject(new Error('enqueueing reboot notice: queue unavailable'));
        sent.push(notice);
        return Promise.resolve();
      },
    },
    listPools(cluster) {
      const list = pools[cluster];
      return list === undefined
        ? Promise.reject(
            new NotFoundError('ClusterNotConfigured', `finding cluster ${cluster}: it is not configured`),
          )
        : Promise.resolve([...list]);
    },
    readPoolStatus(cluster, pool) {
      const status: PoolStatus = {
        cluster,
        pool,
        scaleSet: `${pool}-vmss`,
        modelImage: 'gallery',
        pointsAtOurImage: true,
        pinned: false,
        run: { kind: 'idle' },
        currentVersion: {
          name: '2026.11.20',
          id: 'img-id',
          sourceNode: 'node-1',
          builtAt: '2026-11-20T03:00:00Z',
          ageSeconds: 3600,
        },
        versionCount: 2,
        eligible: true,
        freshness: {
          basis: 'donor-patch',
          since: '2026-11-20T02:00:00.000Z',
          ageSeconds: 7200,
          detail: 'the donor of 2026.11.20 was patched then',
        },
        history: { versions: [], runs: [], freshness: [] },
        nodes: [],
        convergence: {
          samples: [],
          now: { at: '2026-11-20T05:00:00.000Z', counts: {} },
          retirement: {
            enabled: false,
            budget: { nodes: 1 },
            budgetAllowed: 1,
            usedInWindow: 0,
            windowed: false,
          },
        },
      };
      return Promise.resolve(status);
    },
    planPool(cluster, pool) {
      return Promise.resolve({
        cluster,
        pool,
        scaleSet: {
          subscriptionId: SUB,
          resourceGroup: 'rg',
          name: `${pool}-vmss`,
          id: 'id',
          location: 'westeurope',
        },
        decision: { kind: 'up-to-date', reason: 'the newest image holds every patch' },
        verdicts: [],
        settings: {} as PoolPlan['settings'],
      } satisfies PoolPlan);
    },
    minimumReadySeconds: () => 3600,
    nodeResourceId(cluster, node) {
      return Promise.resolve(nodes.get(`${cluster}/${node}`));
    },
    scaleSetOfVirtualMachine: flexMembership,
    now: () => NOW,
  };
  return deps;
}
