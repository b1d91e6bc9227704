/**
 * The temporary canary scale set's use cases (docs/design.md#canary): create it from the pool's model as
 * publication will leave it (shared/domain/canary-scale-set.ts), read what it has built, and delete it —
 * only ever one carrying the run's owner tags. The pool's own model is never written here.
 */
import type { NewNodeBootstrap } from '../domain/bootstrap-flavour.js';
import {
  canaryScaleSetOwnerTags,
  canaryScaleSetPlan,
  isCanaryScaleSetOf,
} from '../domain/canary-scale-set.js';
import { ignoreNotFound } from '../domain/errors.js';
import { sameResourceId, type ScaleSetRef } from '../domain/resource-id.js';
import type { ComputePorts } from '../ports/compute/index.js';
import type { ScaleSetCreated } from '../ports/compute/scale-sets.js';
import type { KubernetesPorts } from '../ports/kubernetes/index.js';
import { resourceIdOfNode } from './node-scan.js';

export interface CanaryScaleSetRequest {
  /** The pool's scale set, whose model the canary's is made from. */
  readonly source: ScaleSetRef;
  readonly versionId: string;
  readonly newNodes: NewNodeBootstrap;
  readonly keepExtensionTypes: readonly string[];
  readonly runId: string;
  readonly canaries: number;
}

export interface CanaryScaleSetCreated {
  readonly name: string;
  readonly created: ScaleSetCreated;
  /** The bootstrap extensions left out, as publication removes them. */
  readonly droppedExtensions: readonly string[];
}

/**
 * Reads the pool's model and PUTs the canary scale set built from it. Idempotent: the name comes from the
 * run, and a second request finds the first's scale set (`found`); a name another scale set holds is
 * terminal (ScaleSetNameTaken).
 */
export async function createCanaryScaleSet(
  compute: ComputePorts,
  request: CanaryScaleSetRequest,
): Promise<CanaryScaleSetCreated> {
  const model = await compute.scaleSets.readModel(request.source);
  const plan = canaryScaleSetPlan({
    source: { name: request.source.name },
    model,
    imageVersionId: request.versionId,
    newNodes: request.newNodes,
    keepExtensionTypes: request.keepExtensionTypes,
    runId: request.runId,
    canaries: request.canaries,
  });
  const created = await compute.scaleSets.requestCreation(
    { ...request.source, name: plan.name },
    { model: plan.model, ownerTags: canaryScaleSetOwnerTags(request.runId) },
  );
  return { name: plan.name, created, droppedExtensions: plan.droppedExtensions };
}

/**
 * What a canary scale set has built: absent, or its instance ids, its provisioning state when it has none
 * yet (or when asked: `state`), and when asked their nodes (`nodes`).
 */
export interface CanaryScaleSetView {
  readonly exists: boolean;
  readonly provisioningState?: string;
  readonly instances: readonly string[];
  /** With `nodes`: the nodes of its instances that exist in the cluster (by name and providerID). */
  readonly nodes?: readonly string[];
}

export async function readCanaryScaleSet(
  handle: { readonly compute: ComputePorts; readonly kube: KubernetesPorts },
  scaleSet: ScaleSetRef,
  options: { readonly nodes?: boolean; readonly state?: boolean } = {},
): Promise<CanaryScaleSetView> {
  // The instances alone while they are being waited for; the scale set's state only when it matters.
  const listed = await handle.compute.instances.list(scaleSet).catch(ignoreNotFound);
  const found =
    listed !== undefined && listed.length > 0 && options.state !== true
      ? undefined
      : await handle.compute.scaleSets.get(scaleSet).catch(ignoreNotFound);
  if (listed === undefined && found === undefined) return { exists: false, instances: [] };
  const instances = listed ?? [];
  const nodes: string[] = [];
  if (options.nodes === true) {
    for (const instance of instances) {
      const name = instance.computerName?.toLowerCase();
      const node = name === undefined ? undefined : await handle.kube.nodes.get(name).catch(ignoreNotFound);
      if (node !== undefined && sameResourceId(resourceIdOfNode(node), instance.resourceId))
        nodes.push(node.name);
    }
  }
  return {
    exists: true,
    ...(found?.provisioningState === undefined ? {} : { provisioningState: found.provisioningState }),
    instances: instances.map((instance) => instance.instanceId),
    ...(options.nodes === true ? { nodes } : {}),
  };
}

/**
 * Asks ARM to delete the canary scale set of `runId` (its instances with it) and says whether it is gone.
 * A scale set of that name that does not carry the run's owner tags is not ours: it is left alone and
 * reported as gone (nothing of the run's is there). One already being deleted is waited for.
 *
 * `created`: the run made it itself (its PUT with If-None-Match, or its own found on a retry) under a name
 * only this run uses (canaryScaleSetNameOf): the deletion is asked for without reading its tags first. It
 * is then reported not gone yet; a refused request falls back to the read.
 */
export async function deleteCanaryScaleSet(
  compute: ComputePorts,
  scaleSet: ScaleSetRef,
  runId: string,
  options: { readonly created?: boolean } = {},
): Promise<{ readonly gone: boolean }> {
  if (options.created === true) {
    try {
      await compute.scaleSets.requestDeletion(scaleSet);
      return { gone: false };
    } catch {
      // Read it and decide as without (a 409 while it is being changed, say).
    }
  }
  const found = await compute.scaleSets.get(scaleSet).catch(ignoreNotFound);
  if (found === undefined || !isCanaryScaleSetOf(found.tags, runId)) return { gone: true };
  if (found.provisioningState !== 'Deleting') await compute.scaleSets.requestDeletion(scaleSet);
  return { gone: false };
}
