/** zod schemas of the values several activities take (names, resource refs, tags). */
import { z } from 'zod';

export const Name = z.string().min(1).max(253);

export const ScaleSetRefInput = z.object({
  subscriptionId: z.string().min(1),
  resourceGroup: z.string().min(1),
  name: z.string().min(1),
});

export const DefinitionRefInput = z.object({
  subscriptionId: z.string().min(1),
  resourceGroup: z.string().min(1),
  galleryName: z.string().min(1),
  imageName: z.string().min(1),
});

export const VersionRefInput = DefinitionRefInput.extend({ versionName: z.string().min(1) });

export const Tags = z.record(z.string(), z.string());

export const StorageAccountTypeInput = z.enum(['Standard_ZRS', 'Standard_LRS', 'Premium_LRS']);

/** The run made the resource's name up: it is asked for without a read first (ports/compute/named-by-caller.ts). */
export const NewNameInput = z.boolean().optional();

/** A gallery image version as one step read it (domain/compute.ts `ImageVersion`), handed to the next. */
export const ImageVersionInput = z.object({
  id: z.string().min(1),
  ref: VersionRefInput,
  location: z.string(),
  provisioningState: z.string().min(1),
  excludeFromLatest: z.boolean(),
  storageAccountType: StorageAccountTypeInput.optional(),
  replicationState: z.enum(['Unknown', 'Replicating', 'Completed', 'Failed']),
  replicationProgress: z.number().optional(),
  sourceId: z.string().optional(),
  publishedAt: z.string().optional(),
  tags: Tags,
  regionalExclusion: z.boolean().optional(),
});

/** Every activity names the cluster whose configuration and credentials it runs with. */
export const ClusterInput = z.object({ cluster: Name });

/** An instance of a pool's scale set. */
export const InstanceInput = ClusterInput.extend({ scaleSet: ScaleSetRefInput, instanceId: Name });

/**
 * The pool lease a write to the donor is fenced by: the write happens only while the lease still names
 * `runId` (pool-lease.ts checkFence).
 */
export const FenceInput = z.object({ namespace: Name, name: Name, runId: Name });

/** The pool lease: the product's namespace and the scale set's lease name. */
export const LeaseInput = z.object({ namespace: Name, name: Name });
