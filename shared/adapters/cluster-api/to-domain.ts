/**
 * Pure converters from the management cluster's Cluster API objects (plain JSON, checked with the
 * schemas of schema.ts) to the domain's MachinePoolView and MachinePoolMachine, with CAPZ's defaults
 * where a field is absent.
 */
import type { z } from 'zod';

import type { MachinePoolMachine, MachinePoolView, RollingUpdateStrategy } from '../../domain/cluster-api.js';
import { interpretCapzImage } from '../../domain/cluster-api.js';
import {
  AUTOSCALER_MAX_SIZE_ANNOTATION,
  AUTOSCALER_MIN_SIZE_ANNOTATION,
} from '../../domain/cluster-api-labels.js';
import { TerminalError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import type { AzureMachinePool, MachinePool } from './schema.js';
import { AzureMachinePoolMachine } from './schema.js';

/**
 * CAPZ's defaults for an AzureMachinePool without `spec.strategy` (its defaulting webhook,
 * sigs.k8s.io/cluster-api-provider-azure exp/api/v1beta1/azuremachinepool_default.go).
 */
export const CAPZ_DEFAULT_STRATEGY: RollingUpdateStrategy = {
  maxSurge: 1,
  maxUnavailable: 0,
  deletePolicy: 'Oldest',
};
const DELETE_POLICIES: ReadonlySet<string> = new Set<RollingUpdateStrategy['deletePolicy']>([
  'Oldest',
  'Newest',
  'Random',
]);
/** Cluster API's default of `MachinePool.spec.replicas`. */
const DEFAULT_REPLICAS = 1;

/** Parses one object with its schema; a shape the product cannot read is a TerminalError naming it. */
export function parseObject<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.infer<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined ? '' : ` (${issue.path.join('.') || '<root>'}: ${issue.message})`;
  throw new TerminalError(
    'UnexpectedClusterApiObject',
    `reading ${what}: the management cluster answered an object the product cannot read${where} — check that Cluster API serves MachinePools at v1beta1 or v1beta2 and CAPZ at v1beta1`,
  );
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `spec.template.image` interpreted (shared/domain/cluster-api.ts). */
export const toCapzImage = interpretCapzImage;

/** `spec.strategy` with CAPZ's defaults; undefined for a strategy type other than RollingUpdate. */
export function toRollingUpdateStrategy(
  strategy: AzureMachinePool['spec']['strategy'],
): RollingUpdateStrategy | undefined {
  const type = strategy?.type ?? 'RollingUpdate';
  if (type !== 'RollingUpdate') return undefined;
  const rolling = strategy?.rollingUpdate;
  const deletePolicy = rolling?.deletePolicy ?? CAPZ_DEFAULT_STRATEGY.deletePolicy;
  return {
    maxSurge: rolling?.maxSurge ?? CAPZ_DEFAULT_STRATEGY.maxSurge,
    maxUnavailable: rolling?.maxUnavailable ?? CAPZ_DEFAULT_STRATEGY.maxUnavailable,
    deletePolicy: DELETE_POLICIES.has(deletePolicy)
      ? (deletePolicy as RollingUpdateStrategy['deletePolicy'])
      : CAPZ_DEFAULT_STRATEGY.deletePolicy,
  };
}

/** Cluster API's label on objects its topology controller manages from a ClusterClass. */
const TOPOLOGY_OWNED_LABEL = 'topology.cluster.x-k8s.io/owned';

/** Whether the cluster-autoscaler owns the pool's replicas (both of its size annotations are set). */
export function isAutoscaled(machinePool: MachinePool): boolean {
  const annotations = machinePool.metadata.annotations ?? {};
  return (
    annotations[AUTOSCALER_MIN_SIZE_ANNOTATION] !== undefined &&
    annotations[AUTOSCALER_MAX_SIZE_ANNOTATION] !== undefined
  );
}

/** The pool as the domain sees it: the MachinePool and the AzureMachinePool it points at. */
export function toMachinePoolView(
  namespace: string,
  machinePool: MachinePool,
  azureMachinePool: AzureMachinePool,
): MachinePoolView {
  const image = azureMachinePool.spec.template.image ?? undefined;
  const strategy = toRollingUpdateStrategy(azureMachinePool.spec.strategy);
  return {
    namespace,
    name: machinePool.metadata.name,
    azureMachinePool: azureMachinePool.metadata.name,
    clusterName: machinePool.spec.clusterName,
    replicas: machinePool.spec.replicas ?? DEFAULT_REPLICAS,
    autoscaled: isAutoscaled(machinePool),
    ...(machinePool.metadata.labels?.[TOPOLOGY_OWNED_LABEL] === undefined ? {} : { topologyOwned: true }),
    ...(image === undefined ? {} : { image: toCapzImage(image), imageFields: structuredClone(image) }),
    ...definedOnly({ strategy }),
    resourceVersion: azureMachinePool.metadata.resourceVersion ?? '',
  };
}

/** One AzureMachinePoolMachine; one without an instance id yet (just created) has instanceId ''. */
export function toMachinePoolMachine(value: unknown): MachinePoolMachine {
  const machine = parseObject(AzureMachinePoolMachine, value, 'an AzureMachinePoolMachine');
  const deletion = machine.metadata.deletionTimestamp;
  return {
    name: machine.metadata.name,
    instanceId: machine.spec?.instanceID ?? '',
    ...definedOnly({
      providerId: text(machine.spec?.providerID),
      nodeName: text(machine.status?.nodeRef?.name),
      provisioningState: text(machine.status?.provisioningState),
    }),
    ready: machine.status?.ready === true,
    latestModelApplied: machine.status?.latestModelApplied === true,
    createdAt: machine.metadata.creationTimestamp ?? '',
    deleting: deletion !== undefined && deletion !== null && deletion !== '',
  };
}
