/**
 * A canary scale set made by PUT (the product's temporary canary scale set, docs/design.md#canary): a scale
 * set the scenario did not seed, tagged with the pool it was cloned from. Its instances boot a version
 * captured from one of that pool's nodes, so they join the same cluster as the pool's nodes do, with the
 * pool's labels and taints (a clone's kubelet configuration is on its disk). The world couples it to the
 * cluster of its source pool when its first instance is created.
 */
import type { ComputeState } from '../arm/compute-state.js';
import type { ScaleSet } from './scenario.js';

/** The tag the product writes on a canary scale set naming its source pool's scale set (in the same resource group). */
export const CANARY_SOURCE_TAG = 'vmss-prototype.source-scale-set';

/**
 * The spec a canary scale set joins the cluster with: its source pool's (flavour, role, labels, taints,
 * behaviour), under its own name and computer-name prefix, with the source's pool name so that its nodes
 * carry the source pool's label. Undefined when `scaleSetId` is no canary of one of `pools`.
 */
export function canaryScaleSetSpecOf(
  compute: ComputeState,
  scaleSetId: string,
  pools: ReadonlyMap<string, { readonly spec: ScaleSet; readonly scaleSetId: string }>,
  poolNameOf: (pool: ScaleSet) => string,
): ScaleSet | undefined {
  const scaleSet = compute.getScaleSet(scaleSetId);
  const source = scaleSet?.tags[CANARY_SOURCE_TAG];
  if (scaleSet === undefined || source === undefined) return undefined;
  const sourceId = scaleSetId.replace(/[^/]+$/, source).toLowerCase();
  const pool = pools.get(sourceId);
  if (pool === undefined) return undefined;
  const model = compute.getScaleSetModel(scaleSetId);
  const osProfile = (model?.['virtualMachineProfile'] as { osProfile?: { computerNamePrefix?: unknown } })
    ?.osProfile;
  const prefix = typeof osProfile?.computerNamePrefix === 'string' ? osProfile.computerNamePrefix : undefined;
  return {
    ...pool.spec,
    name: scaleSet.name,
    ...(prefix === undefined ? {} : { computerNamePrefix: prefix }),
    capacity: scaleSet.capacity,
    nodes: [],
    tags: { ...pool.spec.tags, poolName: poolNameOf(pool.spec) },
  };
}
