/** Activities on the donor's VM and its OS disk snapshot (the Azure side of a capture). */
import { z } from 'zod';

import type { PowerState, ProvisioningState } from '../../domain/compute.js';
import { POWER_STATES } from '../../domain/compute.js';
import { isNotFound } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import { snapshotResourceId } from '../../domain/resource-id.js';
import { checkFence } from '../pool-lease.js';
import {
  clearLeaseStopRecord,
  clearStopRecord,
  recordStop,
  recordStopOnLease,
  type WrittenTags,
} from '../stop-record.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, InstanceInput, LeaseInput, Name, NewNameInput, Tags } from './inputs.js';

/** Where a stopped-VM record is kept (domain/stop-record.ts StopRecordPlace). */
const StopRecordPlaceInput = z.enum(['scale-set', 'pool-lease']);

/**
 * The scale set's tags as a run's write left them, the etag then and, when known, the model's image then
 * (stop-record.ts WrittenTags): the next write starts from them, conditional on the etag.
 */
const WrittenInput = z.object({
  tags: Tags,
  etag: z.string().min(1),
  image: z.record(z.string(), z.string()).optional(),
});

interface WrittenOutput {
  tags: Record<string, string>;
  etag?: string;
  image?: Record<string, string>;
}

function writtenOutput(written: WrittenTags): WrittenOutput {
  return {
    tags: { ...written.tags },
    ...definedOnly({ etag: written.etag }),
    ...(written.image === undefined ? {} : { image: { ...written.image } }),
  };
}

/** Powering a held donor off or on again: only while the pool lease names the run. */
const FencedInstanceInput = InstanceInput.extend({ fence: FenceInput });

export interface InstanceView {
  /** False when the instance no longer exists (scaled in by the autoscaler or an operator mid-run). */
  readonly exists: boolean;
  readonly powerState: PowerState;
  readonly provisioningState: ProvisioningState;
  readonly osDiskId?: string;
  /** The OS disk's type: whether its snapshot needs a background copy (domain/snapshot-readiness.ts). */
  readonly osDiskType?: string;
  readonly vmId?: string;
  readonly location: string;
  /** Its ARM resource id (absent when it no longer exists): a start can be asked without a read. */
  readonly resourceId?: string;
}

export interface SnapshotView {
  readonly exists: boolean;
  readonly provisioningState?: ProvisioningState;
  readonly id?: string;
}

const SnapshotInput = ClusterInput.extend({ subscriptionId: Name, resourceGroup: Name, name: Name });

const readInstance = defineActivity(
  'readInstance',
  InstanceInput,
  async (deps, input): Promise<InstanceView> => {
    const { compute } = await deps.cluster(input.cluster);
    try {
      const instance = await compute.instances.get(input.scaleSet, input.instanceId);
      return {
        exists: true,
        powerState: instance.powerState,
        provisioningState: instance.provisioningState,
        ...definedOnly({ osDiskId: instance.osDiskId, osDiskType: instance.osDiskType, vmId: instance.vmId }),
        location: instance.location,
        resourceId: instance.resourceId,
      };
    } catch (error) {
      if (isNotFound(error)) {
        return { exists: false, powerState: 'unknown', provisioningState: 'Deleted', location: '' };
      }
      throw error;
    }
  },
);

const requestInstancePowerOff = defineActivity(
  'requestInstancePowerOff',
  FencedInstanceInput,
  async (deps, input) => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `powering off instance ${input.instanceId}`, deps.now());
    await compute.instances.requestPowerOff(await compute.instances.get(input.scaleSet, input.instanceId));
  },
);

const requestInstanceStart = defineActivity(
  'requestInstanceStart',
  FencedInstanceInput.extend({
    /** The instance as the orchestration just read it (readInstance): started without reading it again. */
    seen: z.object({ resourceId: z.string().min(1), powerState: z.enum(POWER_STATES) }).optional(),
  }),
  async (deps, input) => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `starting instance ${input.instanceId}`, deps.now());
    // A retry may find the VM starting already: ARM answers a start of a running VM as done, and one
    // still starting as another operation in progress (transient: the next attempt finds it running).
    await compute.instances.requestStart(
      input.seen === undefined
        ? await compute.instances.get(input.scaleSet, input.instanceId)
        : { scaleSet: input.scaleSet, instanceId: input.instanceId, ...input.seen },
    );
  },
);

const requestSnapshot = defineActivity(
  'requestSnapshot',
  SnapshotInput.extend({
    location: Name,
    sourceDiskId: z.string().min(1),
    tags: Tags,
    newName: NewNameInput,
    fence: FenceInput,
  }),
  async (deps, input): Promise<{ id: string }> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `snapshotting disk ${input.sourceDiskId}`, deps.now());
    // A full snapshot: the image version copies it once and we delete it right after, so
    // incremental snapshots would save nothing and add the 7-per-5-minutes limit.
    await compute.snapshots.request({
      subscriptionId: input.subscriptionId,
      resourceGroup: input.resourceGroup,
      name: input.name,
      location: input.location,
      sourceDiskId: input.sourceDiskId,
      incremental: false,
      tags: input.tags,
      ...(input.newName === true ? { newName: true } : {}),
    });
    // Accepted: the point-in-time copy exists under this id (it may still end Failed: read it).
    return { id: snapshotResourceId(input) };
  },
);

const readSnapshot = defineActivity(
  'readSnapshot',
  SnapshotInput,
  async (deps, input): Promise<SnapshotView> => {
    const { compute } = await deps.cluster(input.cluster);
    try {
      const snapshot = await compute.snapshots.get(input.subscriptionId, input.resourceGroup, input.name);
      return { exists: true, provisioningState: snapshot.provisioningState, id: snapshot.id };
    } catch (error) {
      if (isNotFound(error)) return { exists: false };
      throw error;
    }
  },
);

const requestSnapshotDeletion = defineActivity(
  'requestSnapshotDeletion',
  SnapshotInput,
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await compute.snapshots.requestDeletion(input.subscriptionId, input.resourceGroup, input.name);
  },
);

/**
 * Records that the run stops the donor (domain/stop-record.ts), before the power-off is asked for: the
 * reaper finds the VM by it even when its Node object is deleted. On the scale set's tags, or on the pool
 * lease for a pool whose scale set the product does not write (`place: 'pool-lease'`, a CAPZ pool).
 * Fenced like the power-off. With `known` (the tags and etag the leftovers' read saw), the write is
 * conditional on that etag and the tags are read only when ARM refuses it (412). Returns the tags it left and the scale set's etag then (the removal starts
 * from them, no read); nothing for the lease.
 */
const recordInstanceStop = defineActivity(
  'recordInstanceStop',
  FencedInstanceInput.extend({
    runId: Name,
    place: StopRecordPlaceInput.optional(),
    /**
     * The scale set's tags and etag as the run last read them (and its image then): the record is written
     * from them, unread.
     */
    known: WrittenInput.optional(),
  }),
  async (deps, input): Promise<WrittenOutput | undefined> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    const record = { instanceId: input.instanceId, runId: input.runId };
    if (input.place === 'pool-lease') {
      await recordStopOnLease(kube, input.fence, record, deps.now());
      return undefined;
    }
    await checkFence(kube, input.fence, `recording the stop of instance ${input.instanceId}`, deps.now());
    return writtenOutput(await recordStop(compute, input.scaleSet, record, input.known));
  },
);

/**
 * Removes the record once the VM runs again. Not fenced: it only takes our own record away from a VM
 * seen running (`runId`: only that run's), which is harmless whoever holds the lease. `written`: what
 * recordInstanceStop returned (a write conditional on its etag; the model is read when that fails).
 * `lease`: the record is on that pool lease (a CAPZ pool), not on the scale set.
 */
const clearInstanceStop = defineActivity(
  'clearInstanceStop',
  InstanceInput.extend({
    runId: Name.optional(),
    written: WrittenInput.optional(),
    lease: LeaseInput.optional(),
  }),
  async (deps, input): Promise<WrittenOutput | undefined> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    if (input.lease !== undefined) {
      await clearLeaseStopRecord(kube, input.lease, input.instanceId, deps.now(), input.runId);
      return undefined;
    }
    // What it wrote: the model's image update starts from it (model.phase.ts), unread.
    return writtenOutput(
      await clearStopRecord(compute, input.scaleSet, input.instanceId, input.runId, input.written),
    );
  },
);

export const CAPTURE_ACTIVITIES = {
  readInstance,
  requestInstancePowerOff,
  requestInstanceStart,
  recordInstanceStop,
  clearInstanceStop,
  requestSnapshot,
  readSnapshot,
  requestSnapshotDeletion,
} as const;
