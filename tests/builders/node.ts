/**
 * Builders for ClusterNode test data: a healthy, kured-patched worker of the default pool unless told
 * otherwise. Times are relative to the fixed `NOW` so tests never depend on the wall clock.
 */

import type { ClusterNode, NodeCondition } from '../../shared/domain/cluster-node.js';
import { formatProviderId, type ScaleSetRef } from '../../shared/domain/resource-id.js';

/** The instant every builder-based test treats as "now". */
export const NOW = new Date('2026-11-22T12:00:00Z');

export const LAST_PATCH_ANNOTATION = 'weave.works/kured-most-recent-reboot-needed';
export const REBOOT_IN_PROGRESS_ANNOTATION = 'weave.works/kured-reboot-in-progress';

/** The pool most tests select in, as an operator would configure it (resource group in original casing). */
export const DEFAULT_POOL: ScaleSetRef = {
  subscriptionId: '6b1f9c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
  resourceGroup: 'RG-Cluster-Prod',
  name: 'k8s-pool-a',
};

/** ISO 8601 (RFC 3339, `Z`) time `seconds` before `from`. Negative values are in the future. */
export function secondsBefore(seconds: number, from: Date = NOW): string {
  return new Date(from.getTime() - seconds * 1000).toISOString().replace('.000Z', 'Z');
}

export const HOUR = 3600;
export const DAY = 86_400;

/** The providerID cloud-provider-azure writes for a Uniform instance (resource group lowercased). */
export function uniformProviderId(pool: ScaleSetRef, instanceId: number): string {
  return formatProviderId({ kind: 'scale-set-instance', scaleSet: pool, instanceId: String(instanceId) });
}

export function readyCondition(since: string, status: NodeCondition['status'] = 'True'): NodeCondition {
  return {
    type: 'Ready',
    status,
    lastTransitionTime: since,
    lastHeartbeatTime: secondsBefore(30),
    reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
  };
}

export interface NodeOverrides extends Partial<ClusterNode> {
  /** Pool to derive the providerID from (ignored when `providerId` is given). */
  readonly pool?: ScaleSetRef;
  readonly instanceId?: number;
  /** Ready=True since this time; ignored when `conditions` is given. */
  readonly readySince?: string;
  /** Value of the kured last-patch annotation; `null` removes it. Ignored when `annotations` is given. */
  readonly lastPatch?: string | null;
}

/** A healthy worker: Ready for 3 days, patched by kured 2 days ago, in `DEFAULT_POOL`. */
export function aNode(overrides: NodeOverrides = {}): ClusterNode {
  const { pool, instanceId, readySince, lastPatch, ...fields } = overrides;
  const id = instanceId ?? 0;
  const name = fields.name ?? `${(pool ?? DEFAULT_POOL).name}-vmss${id.toString(36).padStart(6, '0')}`;
  const patch = lastPatch === undefined ? secondsBefore(2 * DAY) : lastPatch;
  return {
    name,
    providerId: uniformProviderId(pool ?? DEFAULT_POOL, id),
    labels: {
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'node.kubernetes.io/instance-type': 'Standard_D4s_v5',
      'topology.kubernetes.io/region': 'westeurope',
      'topology.kubernetes.io/zone': 'westeurope-1',
    },
    annotations: patch === null ? {} : { [LAST_PATCH_ANNOTATION]: patch },
    unschedulable: false,
    taints: [],
    conditions: [
      { type: 'MemoryPressure', status: 'False', lastTransitionTime: secondsBefore(3 * DAY) },
      { type: 'DiskPressure', status: 'False', lastTransitionTime: secondsBefore(3 * DAY) },
      { type: 'PIDPressure', status: 'False', lastTransitionTime: secondsBefore(3 * DAY) },
      readyCondition(readySince ?? secondsBefore(3 * DAY)),
    ],
    createdAt: secondsBefore(30 * DAY),
    ...fields,
  };
}
