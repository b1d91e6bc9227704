/**
 * The domain's view of a Kubernetes node: only the fields the product decides on.
 * Adapters convert API objects into this shape; nothing here knows about the SDK.
 */

/** One entry of `status.conditions`. Timestamps are RFC 3339 strings exactly as the API server sent them. */
export interface NodeCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly lastTransitionTime?: string;
  readonly lastHeartbeatTime?: string;
  readonly reason?: string;
}

/** One entry of `spec.taints`. */
export interface NodeTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** A node as the product sees it. */
export interface ClusterNode {
  readonly name: string;
  /** `spec.providerID`, e.g. `azure:///subscriptions/…/virtualMachineScaleSets/<vmss>/virtualMachines/3`. */
  readonly providerId?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** `spec.unschedulable` (cordoned). */
  readonly unschedulable: boolean;
  readonly taints: readonly NodeTaint[];
  readonly conditions: readonly NodeCondition[];
  /** `metadata.creationTimestamp`. */
  readonly createdAt?: string;
}

/** Annotation that stops cluster-autoscaler from removing a node; cordoning alone does not (docs/design.md#capture). */
export const SCALE_DOWN_DISABLED_ANNOTATION = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';

/** Marks the node a refresh holds: which run cordoned it (visible to operators, and the proof we own the cordon). */
export const CAPTURE_RUN_ANNOTATION = 'vmss-prototype.io/capture-run';

/** Taints cluster-autoscaler puts on nodes it is removing or about to remove. */
export const AUTOSCALER_DELETION_TAINTS: readonly string[] = [
  'ToBeDeletedByClusterAutoscaler',
  'DeletionCandidateOfClusterAutoscaler',
];

/** Labels that mark control-plane nodes (current and legacy spellings). */
export const CONTROL_PLANE_LABELS: readonly string[] = [
  'node-role.kubernetes.io/control-plane',
  'node-role.kubernetes.io/master',
];
