/**
 * Activities on a CAPZ pool's objects in its management cluster (docs/capz.md): the AzureMachinePool's
 * template image (the only way a CAPZ pool's image changes), its machines (how far CAPZ's rollout got),
 * and the temporary canary pool. Writes are fenced by the pool lease in the workload cluster.
 */
import { z } from 'zod';

import type { MachinePoolMachine } from '../../domain/cluster-api.js';
import { TerminalError, TransientError } from '../../domain/errors.js';
import type { ClusterApiPorts } from '../../ports/cluster-api/machine-pools.js';
import { checkFence } from '../pool-lease.js';
import type { ClusterHandle } from '../refresh-dependencies.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, Name } from './inputs.js';

const ImageObject = z.record(z.string(), z.unknown());
const PoolInput = ClusterInput.extend({ namespace: Name, azureMachinePool: Name });

function managementOf(handle: ClusterHandle, cluster: string): ClusterApiPorts {
  if (handle.clusterApi === undefined) {
    throw new TerminalError(
      'ManagementClusterNotConfigured',
      `cluster ${cluster} has no management cluster in its capz settings: a CAPZ pool cannot be changed`,
    );
  }
  return handle.clusterApi;
}

/** Same image object (key order aside). */
export function sameImageObject(
  left: Readonly<Record<string, unknown>> | undefined,
  right: Readonly<Record<string, unknown>> | undefined,
): boolean {
  return canonical(left) === canonical(right);
}

function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined && entry !== null)
      .sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonical(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export type TemplateImageResult =
  | { readonly kind: 'set' }
  | { readonly kind: 'already' }
  | { readonly kind: 'changed-elsewhere'; readonly image: string };

/**
 * Puts `image` into the AzureMachinePool's template while the template still holds one of
 * `expectedImages` (what the run planned against): an image another tool put there is reported, never
 * overwritten. The write is conditional on the read's resourceVersion; a write in between is transient
 * (the retry reads and decides again).
 */
const setCapzTemplateImage = defineActivity(
  'setCapzTemplateImage',
  PoolInput.extend({
    image: ImageObject,
    expectedImages: z.array(ImageObject.nullable()),
    fence: FenceInput,
  }),
  async (deps, input): Promise<TemplateImageResult> => {
    const handle = await deps.cluster(input.cluster);
    await checkFence(
      handle.kube,
      input.fence,
      `changing AzureMachinePool ${input.azureMachinePool}`,
      deps.now(),
    );
    const pools = managementOf(handle, input.cluster).machinePools;
    const pool = await pools.findByScaleSet(input.namespace, input.azureMachinePool);
    if (sameImageObject(pool.imageFields, input.image)) return { kind: 'already' };
    const expected = input.expectedImages.some((candidate) =>
      sameImageObject(candidate ?? undefined, pool.imageFields),
    );
    if (!expected) return { kind: 'changed-elsewhere', image: JSON.stringify(pool.imageFields ?? null) };
    const written = await pools.setTemplateImage(
      input.namespace,
      input.azureMachinePool,
      input.image,
      pool.resourceVersion,
    );
    if (written === 'conflict') {
      throw new TransientError(
        'AzureMachinePoolChanged',
        `AzureMachinePool ${input.namespace}/${input.azureMachinePool} changed while its image was written`,
      );
    }
    return { kind: 'set' };
  },
);

/** The AzureMachinePoolMachines of one AzureMachinePool: how far CAPZ's rollout (or the canary) got. */
const listCapzMachines = defineActivity(
  'listCapzMachines',
  PoolInput,
  async (deps, input): Promise<MachinePoolMachine[]> =>
    managementOf(await deps.cluster(input.cluster), input.cluster).machinePools.listMachines(
      input.namespace,
      input.azureMachinePool,
    ),
);

/** Creates the canary pool (KubeadmConfig, AzureMachinePool, MachinePool), each skipped when there. */
const createCapzCanary = defineActivity(
  'createCapzCanary',
  ClusterInput.extend({
    namespace: Name,
    source: z.object({ machinePool: Name, azureMachinePool: Name }),
    name: Name,
    replicas: z.number().int().min(1),
    image: ImageObject,
    labels: z.record(z.string(), z.string()),
    fence: FenceInput,
  }),
  async (deps, input) => {
    const handle = await deps.cluster(input.cluster);
    await checkFence(handle.kube, input.fence, `creating canary pool ${input.name}`, deps.now());
    const { cluster: _cluster, fence: _fence, ...spec } = input;
    await managementOf(handle, input.cluster).machinePools.createCanaryPool(spec);
  },
);

/** Deletes a canary pool and reports whether its objects are gone (deleting them is not fenced: giving back). */
const deleteCapzCanary = defineActivity(
  'deleteCapzCanary',
  ClusterInput.extend({ namespace: Name, name: Name }),
  async (deps, input): Promise<{ readonly gone: boolean }> => {
    const pools = managementOf(await deps.cluster(input.cluster), input.cluster).machinePools;
    await pools.deleteCanaryPool(input.namespace, input.name);
    const left = await pools.listMachines(input.namespace, input.name);
    return { gone: left.length === 0 };
  },
);

/**
 * For the reaper (give-back-leftovers.ts): deletes the canary pools dead runs left beside a CAPZ pool
 * (read with the pool's holdings), fenced by the lease the caller holds. The adapter deletes only objects
 * carrying the canary label.
 */
const deleteCapzCanaryPools = defineActivity(
  'deleteCapzCanaryPools',
  ClusterInput.extend({ namespace: Name, names: z.array(Name), fence: FenceInput }),
  async (deps, input) => {
    const handle = await deps.cluster(input.cluster);
    await checkFence(handle.kube, input.fence, `deleting canary pools ${input.names.join(', ')}`, deps.now());
    const pools = managementOf(handle, input.cluster).machinePools;
    for (const name of input.names) await pools.deleteCanaryPool(input.namespace, name);
  },
);

export const CAPZ_ACTIVITIES = {
  deleteCapzCanaryPools,
  setCapzTemplateImage,
  listCapzMachines,
  createCapzCanary,
  deleteCapzCanary,
} as const;
