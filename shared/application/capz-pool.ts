/**
 * A CAPZ pool at planning (docs/capz.md): its scale set is owned by a Cluster API MachinePool, so its image
 * changes only through `AzureMachinePool.spec.template.image`, and CAPZ then replaces every machine of the
 * pool. Refused unless the cluster names its management cluster and the pool's settings accept that
 * rollout; the plan says what CAPZ will do either way.
 */
import { describeCapzRollout, type ResolvedRollout, resolveRollout } from '../domain/capz-rollout.js';
import type { MachinePoolView } from '../domain/cluster-api.js';
import { isNotFound, NotFoundError } from '../domain/errors.js';
import type { Ineligibility, ScaleSet, ScaleSetEligibility } from '../domain/scale-set.js';
import type { ClusterHandle, PoolConfiguration } from './refresh-dependencies.js';

/** What a refresh of a CAPZ pool carries in its plan (plain JSON). */
export interface PlannedCapzPool {
  readonly namespace: string;
  readonly machinePool: string;
  readonly azureMachinePool: string;
  readonly clusterName: string;
  readonly replicas: number;
  readonly autoscaled: boolean;
  readonly rollout: ResolvedRollout;
  /** The plan's sentence: what CAPZ will do with the new image. */
  readonly description: string;
  /** The template's image as planned: what a rollback (or a failed rollout) puts back. */
  readonly priorImage?: Readonly<Record<string, unknown>>;
}

export function plannedCapzPool(view: MachinePoolView): PlannedCapzPool {
  return {
    namespace: view.namespace,
    machinePool: view.name,
    azureMachinePool: view.azureMachinePool,
    clusterName: view.clusterName,
    replicas: view.replicas,
    autoscaled: view.autoscaled,
    rollout: resolveRollout(view),
    description: describeCapzRollout(view),
    ...(view.imageFields === undefined ? {} : { priorImage: view.imageFields }),
  };
}

/**
 * The scale set's eligibility once its CAPZ ownership is weighed: `capz-managed` stays when no
 * management cluster is configured (or the pool is not found there), becomes `capz-rollout-not-allowed`
 * (with CAPZ's rollout described) when the pool's settings refuse the rollout, and goes when they accept it.
 */
export async function weighCapzOwnership(
  handle: ClusterHandle,
  configuration: PoolConfiguration,
  scaleSet: ScaleSet,
  eligibility: ScaleSetEligibility,
): Promise<{ eligibility: ScaleSetEligibility; capz?: PlannedCapzPool }> {
  if (eligibility.eligible) return { eligibility };
  const owned = eligibility.reasons.find((reason) => reason.code === 'capz-managed');
  if (owned === undefined || configuration.capz === undefined || handle.clusterApi === undefined) {
    return { eligibility };
  }
  const { namespace, rollout } = configuration.capz;
  let view: MachinePoolView;
  try {
    view = await handle.clusterApi.machinePools.findByScaleSet(namespace, scaleSet.name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    // The AzureMachinePool was found but its MachinePool was not (no owner yet, or its owner is gone):
    // the adapter's message names which, not the AzureMachinePool.
    if (error instanceof NotFoundError && error.code === 'MachinePoolNotFound') {
      return {
        eligibility: replaced(eligibility, owned, {
          code: 'capz-managed',
          reason: `${owned.reason}; ${error.message}`,
          remedy: `check the pool's MachinePool with kubectl get machinepools -n ${namespace} on the management cluster (docs/capz.md)`,
        }),
      };
    }
    return {
      eligibility: replaced(eligibility, owned, {
        code: 'capz-managed',
        reason:
          `${owned.reason}; the management cluster has no AzureMachinePool named ${scaleSet.name} in namespace ` +
          `${namespace}`,
        remedy: "set the cluster's capz.namespace to the namespace of the pool's MachinePool (docs/capz.md)",
      }),
    };
  }
  if (view.topologyOwned === true) {
    return {
      eligibility: replaced(eligibility, owned, {
        code: 'capz-managed',
        reason:
          `scale set ${scaleSet.name} belongs to CAPZ MachinePool ${view.namespace}/${view.name}, which a ` +
          "ClusterClass topology manages: Cluster API's topology controller owns its templates and would put " +
          'its own image back; change the image in the ClusterClass instead',
        remedy: "change the image in the ClusterClass's AzureMachinePool template, or exclude this pool",
      }),
    };
  }
  const capz = plannedCapzPool(view);
  if (rollout === 'allow') return { eligibility: replaced(eligibility, owned, undefined), capz };
  return {
    eligibility: replaced(eligibility, owned, {
      code: 'capz-rollout-not-allowed',
      reason:
        `scale set ${scaleSet.name} belongs to CAPZ MachinePool ${view.namespace}/${view.name}: a new image ` +
        'goes into its AzureMachinePool template, and CAPZ rolls a template change out to every machine of ' +
        `the pool (new nodes only is not possible): ${capz.description}; to accept that, set capz.rollout ` +
        'to "allow" (docs/capz.md)',
      remedy:
        'set capz.rollout to "allow" (the cluster\'s, or this pool\'s) to accept that rollout (docs/capz.md); ' +
        'until then the pool keeps its image',
    }),
    capz,
  };
}

function replaced(
  eligibility: Extract<ScaleSetEligibility, { eligible: false }>,
  reason: Ineligibility,
  by: Ineligibility | undefined,
): ScaleSetEligibility {
  const reasons = eligibility.reasons.flatMap((entry) =>
    entry === reason ? (by === undefined ? [] : [by]) : [entry],
  );
  const [first, ...rest] = reasons;
  return first === undefined ? { eligible: true } : { eligible: false, reasons: [first, ...rest] };
}
