/** Activities of the canary gate and of giving a dead run's canary back. */
import { z } from 'zod';

import type { CanaryObservation } from '../../domain/canary.js';
import type { CanaryRecord } from '../../domain/canary-record.js';
import { definedOnly } from '../../domain/optional.js';
import type { CanaryBaseline, ModelRestore } from '../canary.js';
import {
  clearCanaryRecord,
  keepCanaryCordoned,
  markVersion,
  observeCanaries,
  pinCanaryVersion,
  readCanaryBaseline,
  recordCanaryInstances,
  refuseForeignCanary,
  restoreCanaryModel,
} from '../canary.js';
import { giveBackDeadCanary } from '../canary-give-back.js';
import type { OtherFromVersion } from '../canary-others.js';
import { findOthersFromVersion, hasJoinedAs, tellOthersFromVersion } from '../canary-others.js';
import { checkFence } from '../pool-lease.js';
import { redactText } from '../sensitive-text.js';
import { defineActivity } from './activity.js';
import { ClusterInput, FenceInput, Name, ScaleSetRefInput, Tags, VersionRefInput } from './inputs.js';

const ScaleSetInput = ClusterInput.extend({ scaleSet: ScaleSetRefInput });
const ImageFields = z.record(z.string(), z.string());

const CanaryRecordInput = z.object({
  run: Name,
  version: Name,
  startedAt: z.string().min(1),
  priorImage: ImageFields,
  priorCapacity: z.number().int().min(0),
  count: z.number().int().min(1),
  instances: z.array(Name).optional(),
});

function recordOf(input: z.output<typeof CanaryRecordInput>): CanaryRecord {
  return {
    run: input.run,
    version: input.version,
    startedAt: input.startedAt,
    priorImage: input.priorImage,
    priorCapacity: input.priorCapacity,
    count: input.count,
    ...definedOnly({ instances: input.instances }),
  };
}

/** The model as it is (image, etag, capacity, tags) and who is there; refuses another run's canary. */
const readCanaryBaselineActivity = defineActivity(
  'readCanaryBaseline',
  ScaleSetInput.extend({ run: Name, version: Name }),
  async (deps, input): Promise<CanaryBaseline> => {
    const { compute } = await deps.cluster(input.cluster);
    const baseline = await readCanaryBaseline(compute, input.scaleSet);
    refuseForeignCanary(baseline, input.run, input.version);
    return baseline;
  },
);

const pinCanaryVersionActivity = defineActivity(
  'pinCanaryVersion',
  ScaleSetInput.extend({
    versionId: z.string().min(1),
    record: CanaryRecordInput,
    baseline: z.object({ etag: z.string().optional(), tags: Tags }),
    fence: FenceInput,
  }),
  async (deps, input) => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `pinning the canary version of ${input.scaleSet.name}`, deps.now());
    return pinCanaryVersion(compute, input.scaleSet, {
      versionId: input.versionId,
      record: recordOf(input.record),
      baseline: {
        ...definedOnly({ etag: input.baseline.etag }),
        tags: input.baseline.tags,
      },
    });
  },
);

const recordCanaryInstancesActivity = defineActivity(
  'recordCanaryInstances',
  ScaleSetInput.extend({
    baseline: z.array(Name),
    versionId: z.string().min(1),
    count: z.number().int().min(1),
    record: CanaryRecordInput,
    /** What pinCanaryVersion returned: the record is written from it, conditional on its etag. */
    pinned: z.object({ tags: Tags, etag: z.string().min(1) }).optional(),
  }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    const { pinned, ...rest } = input;
    return recordCanaryInstances(compute, input.scaleSet, {
      ...rest,
      record: recordOf(input.record),
      ...(pinned === undefined ? {} : { pinned }),
    });
  },
);

const observeCanariesActivity = defineActivity(
  'observeCanaries',
  ScaleSetInput.extend({
    instanceIds: z.array(Name),
    namespace: Name,
    checkPods: z.record(z.string(), Name),
    known: z
      .record(
        z.string(),
        z.object({
          resourceId: z.string().min(1),
          computerName: z.string().min(1),
          poolLabels: z.record(z.string(), z.string()).optional(),
        }),
      )
      .optional(),
    poolNode: Name.optional(),
  }),
  async (deps, input): Promise<CanaryObservation[]> => {
    const observations = await observeCanaries(await deps.cluster(input.cluster), input.scaleSet, input);
    // The check pod's message quotes what the pod said: scrubbed before it becomes this activity's
    // output (history), the canary's reason, the run result, custom status and annotations.
    const sensitive = deps.sensitiveValues ?? [];
    return observations.map((observation) =>
      observation.checkPodMessage === undefined
        ? observation
        : { ...observation, checkPodMessage: redactText(observation.checkPodMessage, sensitive) },
    );
  },
);

const startCheckPod = defineActivity(
  'startCheckPod',
  ClusterInput.extend({
    namespace: Name,
    name: Name,
    node: Name,
    image: z.string().min(1),
    command: z.array(z.string()).min(1),
    args: z.array(z.string()),
    env: z.array(z.object({ name: z.string().min(1), value: z.string() })),
    deadlineSeconds: z.number().int().min(1),
    version: Name,
  }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await kube.pods.createCheckPod({
      namespace: input.namespace,
      name: input.name,
      nodeName: input.node,
      image: input.image,
      command: input.command,
      args: input.args,
      env: input.env,
      deadlineSeconds: input.deadlineSeconds,
      labels: {
        'app.kubernetes.io/name': 'vmss-prototype-check',
        'app.kubernetes.io/managed-by': 'vmss-prototype',
        'vmss-prototype.io/version': input.version,
      },
    });
  },
);

const restoreCanaryModelActivity = defineActivity(
  'restoreCanaryModel',
  ScaleSetInput.extend({ versionId: z.string().min(1), prior: ImageFields }),
  async (deps, input): Promise<ModelRestore> => {
    const { compute } = await deps.cluster(input.cluster);
    return restoreCanaryModel(compute, input.scaleSet, input);
  },
);

const clearCanaryRecordActivity = defineActivity(
  'clearCanaryRecord',
  ScaleSetInput.extend({ run: Name }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await clearCanaryRecord(compute, input.scaleSet, input.run);
  },
);

/**
 * `unlessJoinedAs`: the instance had no node (it never registered) and is deleted without a drain, unless a
 * node of that name registered for it since: then nothing is asked (`joined`) and the caller drains it first.
 */
const requestInstanceDeletion = defineActivity(
  'requestInstanceDeletion',
  ScaleSetInput.extend({ instanceId: Name, fence: FenceInput, unlessJoinedAs: Name.optional() }),
  async (deps, input): Promise<'requested' | 'joined'> => {
    const handle = await deps.cluster(input.cluster);
    await checkFence(handle.kube, input.fence, `deleting instance ${input.instanceId}`, deps.now());
    if (
      input.unlessJoinedAs !== undefined &&
      (await hasJoinedAs(handle, input.scaleSet, input.instanceId, input.unlessJoinedAs))
    ) {
      return 'joined';
    }
    await handle.compute.instances.requestDeletion(input.scaleSet, input.instanceId);
    return 'requested';
  },
);

/** Which of the given instances still exist. */
const listRemainingInstances = defineActivity(
  'listRemainingInstances',
  ScaleSetInput.extend({ instanceIds: z.array(Name) }),
  async (deps, input): Promise<string[]> => {
    const { compute } = await deps.cluster(input.cluster);
    const present = new Set(
      (await compute.instances.list(input.scaleSet)).map((instance) => instance.instanceId),
    );
    return input.instanceIds.filter((id) => present.has(id));
  },
);

const markImageVersion = defineActivity(
  'markImageVersion',
  ClusterInput.extend({
    ref: VersionRefInput,
    kind: z.enum(['rejected', 'abandoned']),
    reason: z.string().min(1),
    at: z.string().min(1),
  }),
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await markVersion(compute, input.ref, { kind: input.kind, reason: input.reason, at: new Date(input.at) });
  },
);

const keepCanaryCordonedActivity = defineActivity(
  'keepCanaryCordoned',
  ClusterInput.extend({ node: Name, version: Name, reason: z.string().min(1) }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await keepCanaryCordoned(kube, input.node, input);
  },
);

/** The instances an outside scale-out built from the version while the model was pinned (canary-others.ts). */
const findOthersFromVersionActivity = defineActivity(
  'findOthersFromVersion',
  ScaleSetInput.extend({ versionId: z.string().min(1), canaries: z.array(Name), baseline: z.array(Name) }),
  async (deps, input): Promise<OtherFromVersion[]> =>
    findOthersFromVersion(await deps.cluster(input.cluster), input.scaleSet, input),
);

/** A Warning Event on each of them that joined, naming the version and what becomes of the node. */
const tellOthersFromVersionActivity = defineActivity(
  'tellOthersFromVersion',
  ClusterInput.extend({
    others: z.array(z.object({ instanceId: Name, node: Name, joined: z.boolean() })),
    version: Name,
    verdict: z.string().min(1),
    then: z.string().min(1),
    at: z.string().min(1),
  }),
  async (deps, input) => {
    const { kube } = await deps.cluster(input.cluster);
    await tellOthersFromVersion(kube, input);
  },
);

/**
 * For the reaper (give-back-leftovers.ts): gives back the canary a dead run left on a pool's
 * scale set, from Azure state alone (see canary-give-back.ts), fenced by the pool lease the caller holds.
 * Idempotent; answers `nothing-to-do` once nothing is left.
 */
const giveBackDeadCanaryActivity = defineActivity(
  'giveBackDeadCanary',
  ClusterInput.extend({ pool: Name, fence: FenceInput }),
  async (deps, input) => {
    const handle = await deps.cluster(input.cluster);
    await checkFence(handle.kube, input.fence, `giving back the canary of pool ${input.pool}`, deps.now());
    return giveBackDeadCanary(handle, input.pool, input.fence.runId, deps.now());
  },
);

export const CANARY_ACTIVITIES = {
  readCanaryBaseline: readCanaryBaselineActivity,
  pinCanaryVersion: pinCanaryVersionActivity,
  recordCanaryInstances: recordCanaryInstancesActivity,
  observeCanaries: observeCanariesActivity,
  startCheckPod,
  restoreCanaryModel: restoreCanaryModelActivity,
  clearCanaryRecord: clearCanaryRecordActivity,
  requestInstanceDeletion,
  listRemainingInstances,
  markImageVersion,
  keepCanaryCordoned: keepCanaryCordonedActivity,
  giveBackDeadCanary: giveBackDeadCanaryActivity,
  findOthersFromVersion: findOthersFromVersionActivity,
  tellOthersFromVersion: tellOthersFromVersionActivity,
} as const;
