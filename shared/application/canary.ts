/**
 * The canary gate's use cases, one idempotent step each: read the model as it is, pin it to
 * the version under test (with If-Match, recording what it was in the scale set's tags), add the canary
 * instances, observe them, restore the model exactly, delete or keep the canaries, mark the version.
 * Every write re-reads first, so a retried activity finds its own earlier write done; a change by another
 * tool between our read and our write is refused by ARM (412) and reported, never overwritten.
 */
import type { CanaryObservation, DaemonSetTarget } from '../domain/canary.js';
import { daemonSetTargetsNode } from '../domain/canary.js';
import type { CanaryRecord, ImageReferenceFields } from '../domain/canary-record.js';
import {
  canaryRecordTags,
  parseCanaryRecord,
  restoringImageReference,
  sameImageReference,
  withoutCanaryRecord,
} from '../domain/canary-record.js';
import type { ClusterNode } from '../domain/cluster-node.js';
import type { ImageVersionRef, ScaleSetInstance } from '../domain/compute.js';
import {
  CONCURRENT_CHANGE,
  ignoreNotFound,
  isConcurrentChange,
  isNotFound,
  messageOf,
  TerminalError,
  TransientError,
} from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { sameResourceId } from '../domain/resource-id.js';
import { abandonmentTags, rejectionTags } from '../domain/version-verdict.js';
import type { ComputePorts } from '../ports/compute/index.js';
import type { KubernetesPorts } from '../ports/kubernetes/index.js';
import { keptNodes, poolLabelOf, poolLabelOfNode, resourceIdOfNode } from './node-scan.js';

/** The label and annotation of a rejected canary kept for inspection (`afterFail: keep-cordoned`). */
export const CANARY_REJECTED_LABEL = 'vmss-prototype.io/canary-rejected';
export const CANARY_REJECTED_REASON_ANNOTATION = 'vmss-prototype.io/canary-rejected-reason';

/** The model as the canary needs it: what to restore, the etag to write against, who is there. */
export interface CanaryBaseline {
  readonly etag?: string;
  readonly image: ImageReferenceFields;
  readonly capacity: number;
  readonly provisioningState: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly instanceIds: readonly string[];
  /** A canary record already on the scale set (this run's own after a retry, or another run's). */
  readonly record?: CanaryRecord;
  readonly damagedRecord?: string;
}

export async function readCanaryBaseline(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
): Promise<CanaryBaseline> {
  const model = await compute.scaleSets.get(scaleSet);
  const instances = await compute.instances.list(scaleSet);
  const parsed = parseCanaryRecord(model.tags);
  return {
    ...definedOnly({ etag: model.etag }),
    image: model.imageReferenceFields ?? {},
    capacity: model.capacity ?? instances.length,
    provisioningState: model.provisioningState ?? 'Succeeded',
    tags: model.tags,
    instanceIds: instances.map((instance) => instance.instanceId),
    ...(parsed.kind === 'record' ? { record: parsed.record } : {}),
    ...(parsed.kind === 'damaged' ? { damagedRecord: parsed.problem } : {}),
  };
}

/** The image reference that names a gallery image version, marketplace fields nulled. */
function galleryReference(imageId: string): Record<string, string | null> {
  return { ...restoringImageReference({}), id: imageId };
}

/**
 * Points the model at the version under test, records the canary in the scale set's tags and adds the
 * canary instances (capacity: the prior one plus the canaries), in one PATCH conditional on the
 * baseline's etag: nothing can come between the pin and the scale-out, and a crash leaves both or
 * neither. The capacity is absolute (from the record), so writing it again adds nothing. A retry that
 * finds its own pin done succeeds. Returns the tags it left and the etag then (the instances' record is
 * written from them, unread: recordCanaryInstances).
 */
export async function pinCanaryVersion(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  input: {
    readonly versionId: string;
    readonly record: CanaryRecord;
    readonly baseline: Pick<CanaryBaseline, 'etag' | 'tags'>;
  },
): Promise<WrittenTags> {
  const tags = { ...withoutCanaryRecord(input.baseline.tags), ...canaryRecordTags(input.record) };
  try {
    const written = await compute.scaleSets.requestChange(scaleSet, {
      imageReference: galleryReference(input.versionId),
      tags,
      capacity: input.record.priorCapacity + input.record.count,
      ...definedOnly({ ifMatch: input.baseline.etag }),
    });
    return { tags, ...definedOnly({ etag: written.etag }) };
  } catch (error) {
    if (!isConcurrentChange(error)) throw error;
    const now = await compute.scaleSets.get(scaleSet);
    const record = parseCanaryRecord(now.tags);
    const ours =
      record.kind === 'record' &&
      record.record.run === input.record.run &&
      record.record.version === input.record.version &&
      sameResourceId(now.imageReferenceFields?.['id'], input.versionId);
    if (!ours) throw error;
    return { tags: now.tags, ...definedOnly({ etag: now.etag }) };
  }
}

/** Instances not in the baseline that were built from the version: the canaries (and any the autoscaler added meanwhile). */
function newInstances(
  instances: readonly ScaleSetInstance[],
  baseline: readonly string[],
  versionId: string,
): ScaleSetInstance[] {
  const before = new Set(baseline.map((id) => id.toLowerCase()));
  return instances.filter(
    (instance) =>
      !before.has(instance.instanceId.toLowerCase()) &&
      (instance.imageId === undefined || sameResourceId(instance.imageId, versionId)),
  );
}

/**
 * The canaries once the scale-out made them, recorded in the scale set's tags (so that a dead run's canary
 * can be given back from Azure alone). The first `count` new instances are ours; an extra one the
 * autoscaler added in the same moment is not a canary (it is reported by the run).
 */
export async function recordCanaryInstances(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  input: {
    readonly baseline: readonly string[];
    readonly versionId: string;
    readonly count: number;
    readonly record: CanaryRecord;
    /** What the pin's write left (pinCanaryVersion): the record is written from it, unread. */
    readonly pinned?: WrittenTags;
  },
): Promise<{
  readonly instances: readonly string[];
  readonly others: readonly string[];
  /** The tags the record left and the etag then (the model's update is written from them, unread). */
  readonly written?: WrittenTags;
}> {
  const instances = await compute.instances.list(scaleSet);
  const added = newInstances(instances, input.baseline, input.versionId).map(
    (instance) => instance.instanceId,
  );
  const ours = added.slice(0, input.count);
  const others = added.slice(input.count);
  if (ours.length < input.count) return { instances: ours, others };
  const written = await writeTags(
    compute,
    scaleSet,
    (tags) => ({
      ...withoutCanaryRecord(tags),
      ...canaryRecordTags({ ...input.record, instances: ours }),
    }),
    input.pinned,
  );
  return { instances: ours, others, ...(written.etag === undefined ? {} : { written }) };
}

/** The tags a write left on a scale set, and its etag then when ARM said it (else none). */
export interface WrittenTags {
  readonly tags: Readonly<Record<string, string>>;
  readonly etag?: string;
  /**
   * The model's image reference fields as of `etag`, when known: read with it, or carried from the `known`
   * a conditional write started from (an If-Match write changes the tags only).
   */
  readonly image?: Readonly<Record<string, string>>;
}

/**
 * Rewrites the scale set's tags from a fresh read, conditional on its etag; retried on a race. With
 * `known` (what an earlier read or write of this run left: tags and etag), the first write starts from
 * it instead of a read — one request instead of two when nobody wrote the scale set since; ARM refuses
 * a stale etag (412) and the tags are then read as without it.
 */
export async function writeTags(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  change: (tags: Readonly<Record<string, string>>) => Record<string, string>,
  known?: WrittenTags,
): Promise<WrittenTags> {
  if (known?.etag !== undefined) {
    const next = change(known.tags);
    // Nothing to change from what is known: whether that is still so takes the read below.
    if (!sameTags(known.tags, next)) {
      try {
        const written = await compute.scaleSets.requestChange(scaleSet, { tags: next, ifMatch: known.etag });
        return { tags: next, ...definedOnly({ etag: written.etag, image: known.image }) };
      } catch (error) {
        if (!isConcurrentChange(error)) throw error;
      }
    }
  }
  for (let attempt = 1; ; attempt++) {
    const model = await compute.scaleSets.get(scaleSet);
    const next = change(model.tags);
    const image = model.imageReferenceFields ?? {};
    if (sameTags(model.tags, next)) return { tags: model.tags, image, ...definedOnly({ etag: model.etag }) };
    try {
      const written = await compute.scaleSets.requestChange(scaleSet, {
        tags: next,
        ...definedOnly({ ifMatch: model.etag }),
      });
      return { tags: next, image, ...definedOnly({ etag: written.etag }) };
    } catch (error) {
      if (!isConcurrentChange(error) || attempt >= 3) throw error;
    }
  }
}

function sameTags(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * A canary instance ARM reported provisioned and running, with the name it registers under: between two
 * ARM reads its node is looked for in the cluster alone (what the judge waits for there is all in the
 * cluster; a deleted or stopped machine shows there as a NotReady or missing node).
 */
export interface KnownCanaryInstance {
  readonly resourceId: string;
  readonly computerName: string;
  /** The pool label the scale set's nodes carry (observation.instance.poolLabels), when one was found. */
  readonly poolLabels?: Readonly<Record<string, string>>;
}

/**
 * What the canary phase's judge needs to see of each canary, from ARM and the cluster in one read. ARM is
 * read unless every canary is `known` (the orchestration passes what an earlier read found, and reads
 * ARM again at least every few minutes); each canary's node is read by its name (canaryNodes).
 */
export async function observeCanaries(
  handle: { readonly compute: ComputePorts; readonly kube: KubernetesPorts },
  scaleSet: ScaleSetRef,
  input: {
    readonly instanceIds: readonly string[];
    readonly namespace: string;
    readonly checkPods: Readonly<Record<string, string>>;
    readonly known?: Readonly<Record<string, KnownCanaryInstance>>;
    /**
     * A node of the pool whose label the canaries' nodes carry (the donor, for a canary scale set of its
     * own: none of its members has a node yet, so no member tells the label): read by name when no
     * canary's node does.
     */
    readonly poolNode?: string;
  },
): Promise<CanaryObservation[]> {
  const known = input.known ?? {};
  const instances = input.instanceIds.every((id) => known[id] !== undefined)
    ? undefined
    : await handle.compute.instances.list(scaleSet);
  const canaries: readonly CanaryMachine[] =
    instances === undefined
      ? input.instanceIds.flatMap((instanceId) => {
          const facts = known[instanceId];
          return facts === undefined ? [] : [knownInstance(instanceId, facts)];
        })
      : instances.filter((instance) => input.instanceIds.includes(instance.instanceId));
  const knownLabels = Object.values(known).find((facts) => facts.poolLabels !== undefined)?.poolLabels;
  const { nodes, poolLabels } = await canaryNodes(handle.kube, canaries, instances, {
    known: knownLabels,
    ...definedOnly({ poolNode: input.poolNode }),
  });
  let daemonSets: DaemonSetTarget[] | undefined;
  const observations: CanaryObservation[] = [];
  for (const instanceId of input.instanceIds) {
    const instance = canaries.find((candidate) => candidate.instanceId === instanceId);
    const computerName = instance?.computerName?.toLowerCase();
    const node = instance === undefined ? undefined : nodeOfInstance(nodes, instance, computerName);
    const expected: string[] = [];
    const missing: string[] = [];
    const notReady: string[] = [];
    if (node !== undefined && node.ownsName && nodeReady(node.node) === 'True') {
      daemonSets ??= await handle.kube.daemonSets.list();
      const targeting = daemonSets.filter((daemonSet) =>
        daemonSetTargetsNode(daemonSet, { labels: node.node.labels, taints: node.node.taints }),
      );
      const pods = await handle.kube.pods.listOnNode(node.node.name);
      expected.push(...targeting.map((daemonSet) => `${daemonSet.namespace}/${daemonSet.name}`));
      for (const daemonSet of targeting) {
        const pod = pods.find(
          (candidate) =>
            candidate.namespace === daemonSet.namespace &&
            candidate.controller?.kind === 'DaemonSet' &&
            candidate.controller.name === daemonSet.name &&
            !candidate.terminating,
        );
        const name = `${daemonSet.namespace}/${daemonSet.name}`;
        if (pod === undefined) missing.push(name);
        else if (pod.phase !== 'Running' || pod.ready === false) notReady.push(name);
      }
    }
    const checkPodName = input.checkPods[instanceId];
    const checkPod =
      checkPodName === undefined
        ? undefined
        : await handle.kube.pods.getOutcome(input.namespace, checkPodName);
    const ready = node === undefined ? undefined : nodeReady(node.node);
    const readyCondition = node?.node.conditions.find((condition) => condition.type === 'Ready');
    observations.push({
      instanceId,
      instance: {
        exists: instance !== undefined,
        ...(instance === undefined ? {} : { provisioningState: instance.provisioningState }),
        ...(instance === undefined ? {} : { powerState: instance.powerState }),
        ...definedOnly({ computerName }),
        ...(instance === undefined ? {} : { resourceId: instance.resourceId }),
        ...(instance === undefined || poolLabels === undefined ? {} : { poolLabels }),
      },
      ...(node === undefined || ready === undefined
        ? {}
        : {
            node: {
              name: node.node.name,
              ownsName: node.ownsName,
              ready,
              ...definedOnly({
                readySince: readyCondition?.lastTransitionTime,
                notReadyReason: readyCondition?.reason,
              }),
            },
          }),
      daemonSets: { expected, missing, notReady },
      checkPod: checkPod?.phase ?? 'Absent',
      ...definedOnly({ checkPodMessage: checkPod?.message }),
    });
  }
  return observations;
}

/**
 * The canaries' nodes: each read by its own name (one GET, not a listing of the cluster's nodes every
 * round of the watch). Only while a running canary has no node of its own under its name is it looked
 * for by providerID (registered under another name: a clone, which takes over its donor's node): among
 * the nodes carrying the pool's label (POOL_LABELS; read off a member when ARM was read this round, else
 * what an earlier round found, `labels.known`; when no member has a node yet, as in a canary scale set of
 * its own, off `labels.poolNode`), or, when the pool's nodes carry none, among every node.
 * A clone whose node does not carry the pool's label is then not seen as one: the canary is judged as
 * never registered (its registration deadline fails it).
 */
async function canaryNodes(
  kube: KubernetesPorts,
  canaries: readonly CanaryMachine[],
  instances: readonly ScaleSetInstance[] | undefined,
  labels: { readonly known?: Readonly<Record<string, string>> | undefined; readonly poolNode?: string },
): Promise<{ nodes: ClusterNode[]; poolLabels?: Readonly<Record<string, string>> }> {
  const nodes: ClusterNode[] = [];
  let unresolved = false;
  for (const instance of canaries) {
    const name = instance.computerName?.toLowerCase();
    const node = name === undefined ? undefined : await kube.nodes.get(name).catch(ignoreNotFound);
    if (node !== undefined) nodes.push(node);
    const running = instance.provisioningState === 'Succeeded' && instance.powerState === 'running';
    if (running && (node === undefined || !isNodeOf(node, instance))) unresolved = true;
  }
  if (!unresolved) return { nodes };
  const poolLabels =
    (instances === undefined ? labels.known : await poolLabelOf(kube, instances)) ??
    (labels.poolNode === undefined ? undefined : await poolLabelOfNode(kube, labels.poolNode));
  const byProvider = await keptNodes(
    kube,
    (node) => canaries.some((instance) => isNodeOf(node, instance)),
    poolLabels === undefined ? {} : { labels: poolLabels },
  );
  return {
    nodes: [...nodes, ...byProvider.filter((node) => !nodes.some((named) => named.name === node.name))],
    ...definedOnly({ poolLabels }),
  };
}

function nodeReady(node: ClusterNode): 'True' | 'False' | 'Unknown' {
  return node.conditions.find((condition) => condition.type === 'Ready')?.status ?? 'Unknown';
}

/**
 * The node of a canary instance: the node named after its computer name (owning the name only when its
 * providerID is this instance), else any node whose providerID is this instance (registered under
 * another name).
 */
function nodeOfInstance(
  nodes: readonly ClusterNode[],
  instance: CanaryMachine,
  computerName: string | undefined,
): { readonly node: ClusterNode; readonly ownsName: boolean } | undefined {
  const isThisInstance = (node: ClusterNode): boolean => isNodeOf(node, instance);
  const named = computerName === undefined ? undefined : nodes.find((node) => node.name === computerName);
  if (named !== undefined && isThisInstance(named)) return { node: named, ownsName: true };
  const byProvider = nodes.find(isThisInstance);
  if (byProvider !== undefined) return { node: byProvider, ownsName: false };
  return undefined;
}

/** The node's providerID names this instance. */
function isNodeOf(node: ClusterNode, instance: Pick<ScaleSetInstance, 'resourceId'>): boolean {
  return sameResourceId(resourceIdOfNode(node), instance.resourceId);
}

/** A known canary as the judge sees it: provisioned and running, as ARM said at the last read. */
function knownInstance(instanceId: string, facts: KnownCanaryInstance): CanaryMachine {
  return {
    instanceId,
    resourceId: facts.resourceId,
    computerName: facts.computerName,
    powerState: 'running',
    provisioningState: 'Succeeded',
  };
}

/** What the canary's judge uses of an instance. */
type CanaryMachine = Pick<
  ScaleSetInstance,
  'instanceId' | 'resourceId' | 'computerName' | 'powerState' | 'provisioningState'
>;

/** The outcome of restoring the model after a failed canary. */
export interface ModelRestore {
  /** `restored`: the image is back (now or before); `changed-elsewhere`: another tool moved it since. */
  readonly kind: 'restored' | 'changed-elsewhere';
  readonly image: ImageReferenceFields;
}

/**
 * Puts the model's image reference back exactly as the baseline had it, if it still names the version
 * under test; conditional on the etag just read (a race is transient: read again). The canary record
 * stays until the canaries are gone (clearCanaryRecord).
 */
export async function restoreCanaryModel(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  input: { readonly versionId: string; readonly prior: ImageReferenceFields },
): Promise<ModelRestore> {
  const model = await compute.scaleSets.get(scaleSet);
  const image = model.imageReferenceFields ?? {};
  if (sameImageReference(image, input.prior)) return { kind: 'restored', image };
  if (!sameResourceId(image['id'], input.versionId)) return { kind: 'changed-elsewhere', image };
  try {
    await compute.scaleSets.requestChange(scaleSet, {
      imageReference: restoringImageReference(input.prior),
      ...definedOnly({ ifMatch: model.etag }),
    });
  } catch (error) {
    if (isConcurrentChange(error)) {
      throw new TransientError(CONCURRENT_CHANGE, `restoring the model: ${messageOf(error)}`, {
        cause: error,
      });
    }
    throw error;
  }
  return { kind: 'restored', image: input.prior };
}

/** Removes the canary record from the scale set's tags (nothing else), if it is this run's. */
export async function clearCanaryRecord(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  run: string,
): Promise<void> {
  await writeTags(compute, scaleSet, (tags) => {
    const parsed = parseCanaryRecord(tags);
    if (parsed.kind === 'record' && parsed.record.run !== run) return { ...tags };
    return withoutCanaryRecord(tags);
  });
}

/** Merges a verdict (rejected or abandoned) into a version's tags; a gone version needs none. */
export async function markVersion(
  compute: ComputePorts,
  ref: ImageVersionRef,
  verdict: { readonly kind: 'rejected' | 'abandoned'; readonly reason: string; readonly at: Date },
): Promise<void> {
  let version;
  try {
    version = await compute.imageVersions.get(ref);
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  const added =
    verdict.kind === 'rejected' ? rejectionTags(verdict.reason, verdict.at) : abandonmentTags(verdict.reason);
  await compute.imageVersions.requestTags(ref, { ...version.tags, ...added });
}

/** A rejected canary kept for inspection: cordoned, labelled with the version, annotated with the reason. */
export async function keepCanaryCordoned(
  kube: KubernetesPorts,
  node: string,
  input: { readonly version: string; readonly reason: string },
): Promise<void> {
  try {
    await kube.nodes.patchLabels(node, { [CANARY_REJECTED_LABEL]: input.version });
    await kube.nodes.patchAnnotations(node, {
      [CANARY_REJECTED_REASON_ANNOTATION]: input.reason.slice(0, 1000),
    });
    await kube.nodes.setUnschedulable(node, true);
  } catch (error) {
    // A canary that never registered has no node to cordon: the instance is kept all the same.
    if (!isNotFound(error)) throw error;
  }
}

/**
 * A refusal when another canary (or a damaged record) is on the scale set: another run's, or a version
 * other than this run's (a leftover of an earlier run under the same id that died for good).
 */
export function refuseForeignCanary(baseline: CanaryBaseline, run: string, version: string): void {
  if (baseline.damagedRecord !== undefined) {
    throw new TerminalError('CanaryRecordDamaged', `starting the canary: ${baseline.damagedRecord}`, {
      advice: 'remove the vmss-prototype.canary-* tags from the scale set once no canary is running',
    });
  }
  if (baseline.record !== undefined && (baseline.record.run !== run || baseline.record.version !== version)) {
    throw new TerminalError(
      'CanaryInProgress',
      `starting the canary: run ${baseline.record.run} has a canary of version ${baseline.record.version} on this scale set (since ${baseline.record.startedAt})`,
      {
        advice:
          'wait for it to end; if that run is gone, give its canary back (the reaper does, or remove the tags by hand after restoring the model)',
      },
    );
  }
}
