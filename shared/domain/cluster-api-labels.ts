/**
 * The labels and annotations of Cluster API and CAPZ objects the product reads or writes,
 * in one place for the adapter (shared/adapters/cluster-api), its fake and the use cases.
 */

/**
 * On every object of a canary pool the product creates, naming the MachinePool it is a canary of. The
 * product deletes only objects carrying it: a real pool is never deleted.
 */
export const CANARY_OF_LABEL = 'vmss-prototype.io/canary-of';

/** On every object of a canary pool: the run that made it (a later run or the reaper deletes a dead run's). */
export const CANARY_RUN_LABEL = 'vmss-prototype.io/run-id';

/** Cluster API's cluster-name label (`clusterv1.ClusterNameLabel`), on every object of a cluster. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/**
 * CAPZ's `infrav1exp.MachinePoolNameLabel`: on each AzureMachinePoolMachine, the name of its
 * AzureMachinePool (sigs.k8s.io/cluster-api-provider-azure exp/api/v1beta1/azuremachinepool_types.go).
 */
export const AZURE_MACHINE_POOL_LABEL = 'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool';

/**
 * The cluster-autoscaler's clusterapi provider scales a MachinePool carrying both annotations
 * (kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi/README.md): it owns `replicas`.
 */
export const AUTOSCALER_MIN_SIZE_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
export const AUTOSCALER_MAX_SIZE_ANNOTATION = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';
