/**
 * Activities of live capture (shared/domain/live-capture.ts): the donor's disks, the copy of its OS disk
 * (a managed disk made from the snapshot, attached to the donor, deleted after the image version), and
 * the short-lived freeze and scrub pods on the donor.
 */
import { z } from 'zod';

import type { DataDiskTarget, PowerState, ProvisioningState } from '../../domain/compute.js';
import { isNotFound, isTransient } from '../../domain/errors.js';
import { LIVE_POD_COMPONENT_LABEL } from '../../domain/live-leftovers.js';
import { definedOnly } from '../../domain/optional.js';
import { runPodLabels } from '../../domain/ownership.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';
import type { ComputePorts } from '../../ports/compute/index.js';
import { checkFence } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, InstanceInput, Name, NewNameInput, Tags } from './inputs.js';

/** What live capture needs to know of the donor's instance. */
export interface DonorDisksView {
  /** False when the instance no longer exists (scaled in mid-run). */
  readonly exists: boolean;
  readonly powerState: PowerState;
  readonly provisioningState: ProvisioningState;
  readonly osDiskId?: string;
  readonly vmId?: string;
  /** Its ARM id (a Uniform instance's or a Flexible member's): an attach or detach names it. */
  readonly resourceId?: string;
  readonly location: string;
  /** The instance's zone: the copy must be created in it to be attachable. */
  readonly zone?: string;
  readonly dataDisks: readonly {
    readonly lun: number;
    readonly diskId?: string;
    readonly detaching: boolean;
  }[];
}

export interface CopyDiskView {
  readonly exists: boolean;
  readonly id?: string;
  readonly provisioningState?: ProvisioningState;
  /** The instance (resource id) it is attached to, if any. */
  readonly attachedTo?: string;
}

const DiskInput = ClusterInput.extend({ subscriptionId: Name, resourceGroup: Name, name: Name });
const DiskIdInput = z.string().regex(/\/providers\/Microsoft\.Compute\/disks\/[^/]+$/i, 'a managed disk id');

const readDonorDisks = defineActivity(
  'readDonorDisks',
  InstanceInput,
  async (deps, input): Promise<DonorDisksView> => {
    const { compute } = await deps.cluster(input.cluster);
    try {
      const instance = await compute.instances.get(input.scaleSet, input.instanceId);
      const [zone] = instance.zones;
      return {
        exists: true,
        powerState: instance.powerState,
        provisioningState: instance.provisioningState,
        ...definedOnly({ osDiskId: instance.osDiskId, vmId: instance.vmId }),
        resourceId: instance.resourceId,
        location: instance.location,
        ...definedOnly({ zone }),
        dataDisks: (instance.dataDisks ?? []).map((disk) => ({
          lun: disk.lun,
          ...definedOnly({ diskId: disk.diskId }),
          detaching: disk.toBeDetached === true,
        })),
      };
    } catch (error) {
      if (isNotFound(error)) {
        return {
          exists: false,
          powerState: 'unknown',
          provisioningState: 'Deleted',
          location: '',
          dataDisks: [],
        };
      }
      throw error;
    }
  },
);

const requestCopyDisk = defineActivity(
  'requestCopyDisk',
  DiskInput.extend({
    location: Name,
    zone: Name.optional(),
    sourceSnapshotId: z.string().min(1),
    tags: Tags,
    newName: NewNameInput,
    fence: FenceInput,
  }),
  async (deps, input) => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `copying snapshot ${input.sourceSnapshotId} to a disk`, deps.now());
    await compute.disks.requestFromSnapshot({
      subscriptionId: input.subscriptionId,
      resourceGroup: input.resourceGroup,
      name: input.name,
      location: input.location,
      ...definedOnly({ zone: input.zone }),
      sourceSnapshotId: input.sourceSnapshotId,
      // Standard SSD attaches to every VM size; the copy lives minutes and is read once by the gallery.
      skuName: 'StandardSSD_LRS',
      tags: input.tags,
      ...(input.newName === true ? { newName: true } : {}),
    });
  },
);

const readCopyDisk = defineActivity('readCopyDisk', DiskInput, async (deps, input): Promise<CopyDiskView> => {
  const { compute } = await deps.cluster(input.cluster);
  try {
    const disk = await compute.disks.get(input.subscriptionId, input.resourceGroup, input.name);
    return {
      exists: true,
      id: disk.id,
      provisioningState: disk.provisioningState,
      ...definedOnly({ attachedTo: disk.managedBy }),
    };
  } catch (error) {
    if (isNotFound(error)) return { exists: false };
    throw error;
  }
});

const requestCopyDiskDeletion = defineActivity('requestCopyDiskDeletion', DiskInput, async (deps, input) => {
  const { compute } = await deps.cluster(input.cluster);
  await compute.disks.requestDeletion(input.subscriptionId, input.resourceGroup, input.name);
});

/**
 * The donor as the run's last readDonorDisks saw it: an attach or detach judged on it is asked for without
 * reading the instance again. Being a past view, a refusal of the request (a retry whose first attempt went
 * through, a disk detached meanwhile) is judged again on a fresh read (attachOrDetach).
 */
const SeenDisksInput = z.object({
  resourceId: z.string().min(1),
  dataDisks: z.array(
    z.object({ lun: z.number().int(), diskId: z.string().optional(), detaching: z.boolean() }),
  ),
});

type SeenDisks = z.infer<typeof SeenDisksInput>;

function seenInstance(
  input: { readonly scaleSet: ScaleSetRef; readonly instanceId: string },
  seen: SeenDisks,
): DataDiskTarget {
  return {
    scaleSet: input.scaleSet,
    instanceId: input.instanceId,
    resourceId: seen.resourceId,
    dataDisks: seen.dataDisks.map((disk) => ({
      lun: disk.lun,
      name: disk.diskId?.split('/').at(-1) ?? `lun-${disk.lun}`,
      ...definedOnly({ diskId: disk.diskId }),
      ...(disk.detaching ? { toBeDetached: true } : {}),
    })),
  };
}

/**
 * Asks for a data disk change judged on `seen` when given, else on a fresh read. A change refused on a
 * seen view is judged again on a read: an earlier attempt may have made it already (then nothing is asked),
 * or it is asked once more and a refusal then is the step's. Transient failures are the retry's to handle.
 */
async function attachOrDetach(
  compute: ComputePorts,
  input: {
    readonly scaleSet: ScaleSetRef;
    readonly instanceId: string;
    readonly seen?: SeenDisks | undefined;
  },
  change: (instance: DataDiskTarget) => Promise<void>,
): Promise<void> {
  if (input.seen !== undefined) {
    try {
      await change(seenInstance(input, input.seen));
      return;
    } catch (error) {
      if (isTransient(error)) throw error;
    }
  }
  await change(await compute.instances.get(input.scaleSet, input.instanceId));
}

const requestCopyAttach = defineActivity(
  'requestCopyAttach',
  InstanceInput.extend({
    diskId: DiskIdInput,
    lun: z.number().int().min(0).max(63),
    fence: FenceInput,
    seen: SeenDisksInput.optional(),
  }),
  async (deps, input) => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `attaching a disk to instance ${input.instanceId}`, deps.now());
    await attachOrDetach(compute, input, (instance) =>
      compute.instances.requestDataDiskAttach(instance, input.diskId, input.lun),
    );
  },
);

const requestCopyDetach = defineActivity(
  'requestCopyDetach',
  InstanceInput.extend({ diskId: DiskIdInput, seen: SeenDisksInput.optional() }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    try {
      await attachOrDetach(compute, input, (instance) =>
        compute.instances.requestDataDiskDetach(instance, input.diskId),
      );
    } catch (error) {
      // Scaled in with the copy attached: the copy was detached with it (deleteOption Detach).
      if (!isNotFound(error)) throw error;
    }
  },
);

/**
 * When the node last turned Ready: a change across the attach window means the donor rebooted while its
 * copy was attached (and may have mounted the copy as its root).
 */
const readNodeReadySince = defineActivity(
  'readNodeReadySince',
  ClusterInput.extend({ node: Name }),
  async (deps, input): Promise<{ readonly exists: boolean; readonly readySince?: string }> => {
    const { kube } = await deps.cluster(input.cluster);
    try {
      const node = await kube.nodes.get(input.node);
      const ready = node.conditions.find((condition) => condition.type === 'Ready');
      return {
        exists: true,
        ...(ready?.status === 'True' && ready.lastTransitionTime !== undefined
          ? { readySince: ready.lastTransitionTime }
          : {}),
      };
    } catch (error) {
      if (isNotFound(error)) return { exists: false };
      throw error;
    }
  },
);

/** Which live pod it is (`freeze`, `guard` or `scrub`), besides the prep pods' labels. */

const startLivePod = defineActivity(
  'startLivePod',
  ClusterInput.extend({
    node: Name,
    namespace: Name,
    podName: Name,
    image: z.string().min(1),
    script: z.string().min(1),
    role: z.enum(['freeze', 'guard', 'scrub']),
    gracePeriodSeconds: z.number().int().min(1).max(300),
    fence: FenceInput,
  }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `creating ${input.role} pod ${input.podName}`, deps.now());
    await kube.pods.createPrepPod({
      namespace: input.namespace,
      name: input.podName,
      nodeName: input.node,
      image: input.image,
      script: input.script,
      // The prep pods' labels (the reaper finds the pods of runs that are gone by app, run and lease).
      labels: { ...runPodLabels(input.fence), [LIVE_POD_COMPONENT_LABEL]: input.role },
      // The shell is the container's PID 1: the kubelet's TERM reaches its trap (thaw, unmount).
      hostNamespaces: 'mount',
      terminationGracePeriodSeconds: input.gracePeriodSeconds,
    });
  },
);

/** Deletes a live pod gracefully: TERM first, so its trap thaws the filesystem or unmounts the copy. */
const deleteLivePod = defineActivity(
  'deleteLivePod',
  ClusterInput.extend({ namespace: Name, name: Name, gracePeriodSeconds: z.number().int().min(1).max(300) }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await kube.pods.delete(input.namespace, input.name, input.gracePeriodSeconds);
  },
);

export const LIVE_ACTIVITIES = {
  readDonorDisks,
  requestCopyDisk,
  readCopyDisk,
  requestCopyDiskDeletion,
  requestCopyAttach,
  requestCopyDetach,
  startLivePod,
  deleteLivePod,
  readNodeReadySince,
} as const;
