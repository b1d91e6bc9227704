/**
 * Instances an outsider (the cluster-autoscaler, an admin's `az vmss scale`) added to a pool's scale set
 * while its model was pinned to a canary's version: they boot the version under test, untested. Found once
 * the model is back, from ARM alone — each names the version as its image and is not a canary — so a
 * retried activity, a resumed run or a later one finds the same ones; named by the node each registered
 * as (its computer name until it joined), and told on the node itself with an Event.
 */
import { isBeingDeleted } from '../domain/compute.js';
import { ignoreNotFound } from '../domain/errors.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { sameResourceId } from '../domain/resource-id.js';
import type { ComputePorts } from '../ports/compute/index.js';
import type { KubernetesPorts } from '../ports/kubernetes/index.js';
import { resourceIdOfNode } from './node-scan.js';

/** The Event reason on a node built from a version its canary did not pass. */
export const BUILT_FROM_REJECTED_REASON = 'BuiltFromRejectedVersion';

/** An instance built from the version under test that is not a canary. */
export interface OtherFromVersion {
  readonly instanceId: string;
  /** Its node's name, or its computer name (lower case) while it has not registered. */
  readonly node: string;
  /** A node of that name registered for this instance. */
  readonly joined: boolean;
}

/**
 * The scale set's instances built from `versionId` that are neither canaries nor in the baseline (the
 * instances before the pin), in instance order.
 */
export async function findOthersFromVersion(
  handle: { readonly compute: ComputePorts; readonly kube: KubernetesPorts },
  scaleSet: ScaleSetRef,
  input: {
    readonly versionId: string;
    readonly canaries: readonly string[];
    readonly baseline: readonly string[];
  },
): Promise<OtherFromVersion[]> {
  const skip = new Set([...input.canaries, ...input.baseline].map((id) => id.toLowerCase()));
  const instances = (await handle.compute.instances.list(scaleSet)).filter(
    (instance) =>
      !skip.has(instance.instanceId.toLowerCase()) &&
      // One being deleted (the autoscaler's scale-in, an earlier attempt's replacement) is going already.
      !isBeingDeleted(instance) &&
      instance.imageId !== undefined &&
      sameResourceId(instance.imageId, input.versionId),
  );
  const others: OtherFromVersion[] = [];
  for (const instance of instances) {
    const name = (instance.computerName ?? instance.instanceId).toLowerCase();
    const node =
      instance.computerName === undefined
        ? undefined
        : await handle.kube.nodes.get(name).catch(ignoreNotFound);
    const joined = node !== undefined && sameResourceId(resourceIdOfNode(node), instance.resourceId);
    others.push({ instanceId: instance.instanceId, node: name, joined });
  }
  return others;
}

/** A node named `node` registered for the instance (its provider id names it); false when either is gone. */
export async function hasJoinedAs(
  handle: { readonly compute: ComputePorts; readonly kube: KubernetesPorts },
  scaleSet: ScaleSetRef,
  instanceId: string,
  node: string,
): Promise<boolean> {
  const instance = await handle.compute.instances.get(scaleSet, instanceId).catch(ignoreNotFound);
  if (instance === undefined) return false;
  const registered = await handle.kube.nodes.get(node).catch(ignoreNotFound);
  return registered !== undefined && sameResourceId(resourceIdOfNode(registered), instance.resourceId);
}

/**
 * A Warning Event on each joined node, naming the version and why it was not published (once per node and
 * version, however often asked).
 */
export async function tellOthersFromVersion(
  kube: KubernetesPorts,
  input: {
    readonly others: readonly OtherFromVersion[];
    readonly version: string;
    readonly verdict: string;
    readonly then: string;
    readonly at: string;
  },
): Promise<void> {
  for (const other of input.others) {
    if (!other.joined) continue;
    await kube.nodes.recordEvent({
      node: other.node,
      type: 'Warning',
      reason: BUILT_FROM_REJECTED_REASON,
      message:
        `node ${other.node} was built from image version ${input.version} while its canary ran (an outside ` +
        `scale-out: the cluster-autoscaler or an admin); the version was ${input.verdict}; ${input.then}`,
      key: `${BUILT_FROM_REJECTED_REASON}/${input.version}/${other.instanceId}`,
      at: input.at,
    });
  }
}
