/**
 * The rollback use cases: read everything the domain's `planRollback` needs (the model, the
 * pool's versions, a canary in progress) and point the model at the target with If-Match. The rollback
 * orchestration runs them step by step; `planPoolRollback` alone is the dry run.
 */
import { parseCanaryRecord, restoringImageReference } from '../domain/canary-record.js';
import type { ImageDefinitionRef } from '../domain/compute.js';
import { isConcurrentChange } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { galleryImageResourceId, sameResourceId } from '../domain/resource-id.js';
import type { RollbackPlan } from '../domain/rollback.js';
import { planRollback } from '../domain/rollback.js';
import { checkScaleSetEligibility } from '../domain/scale-set.js';
import { weighCapzOwnership } from './capz-pool.js';
import { newestUsableVersion } from './image-facts.js';
import { currentImageFacts } from './plan-pool.js';
import { leaseRefOf } from './pool-holdings.js';
import type { LeaseRef } from './pool-lease.js';
import { findPoolModel } from './pool-lookup.js';
import type { ClusterHandle } from './refresh-dependencies.js';

export interface PoolRollbackPlan {
  readonly cluster: string;
  readonly pool: string;
  readonly scaleSet: ScaleSetRef;
  readonly definition: ImageDefinitionRef;
  /** The pool's lease: a rollback holds the pool like a refresh does. */
  readonly lease: LeaseRef;
  /** The model's etag when read: the change is made only if nobody wrote the scale set since. */
  readonly etag?: string;
  /** The model's image id now (definition or version), when it has one. */
  readonly modelImageId?: string;
  readonly plan: RollbackPlan;
  /**
   * A CAPZ pool (docs/capz.md): the rollback goes into its AzureMachinePool's template (CAPZ then replaces
   * every machine), conditional on the template image read here.
   */
  readonly capz?: {
    readonly namespace: string;
    readonly azureMachinePool: string;
    readonly currentImage: Readonly<Record<string, unknown>> | null;
    readonly description: string;
  };
}

export async function planPoolRollback(
  handle: ClusterHandle,
  poolName: string,
  to: string | undefined,
): Promise<PoolRollbackPlan> {
  const { pool, model: scaleSet } = await findPoolModel(handle, poolName);
  const configuration = handle.configuration.poolConfiguration(pool);
  const g = configuration.gallery;
  const definition = {
    subscriptionId: g.subscriptionId,
    resourceGroup: g.resourceGroup,
    galleryName: g.galleryName,
    imageName: g.imageDefinitionName,
  };
  const base = {
    cluster: handle.configuration.name,
    pool: pool.name,
    scaleSet: pool.scaleSet,
    definition,
    lease: leaseRefOf(pool.scaleSet, configuration.run.prepNamespace),
    ...definedOnly({ etag: scaleSet.etag }),
    ...(scaleSet.imageReferenceFields?.['id'] === undefined
      ? {}
      : { modelImageId: scaleSet.imageReferenceFields['id'] }),
  };
  const record = parseCanaryRecord(scaleSet.tags);
  if (record.kind !== 'none') {
    return {
      ...base,
      plan: {
        kind: 'refused',
        reason:
          record.kind === 'record'
            ? `a canary of version ${record.record.version} (run ${record.record.run}) is in progress on this scale set; wait for it to end`
            : record.problem,
      },
    };
  }
  // A CAPZ pool is rolled back through its template, and only when its settings accept CAPZ's rollout.
  const weighed = await weighCapzOwnership(
    handle,
    configuration,
    scaleSet,
    checkScaleSetEligibility(scaleSet),
  );
  const capzRefusal = weighed.eligibility.eligible
    ? undefined
    : weighed.eligibility.reasons.find((reason) => reason.code.startsWith('capz-'));
  if (capzRefusal !== undefined) {
    return { ...base, plan: { kind: 'refused', reason: `${capzRefusal.reason}; ${capzRefusal.remedy}` } };
  }
  const capz =
    weighed.capz === undefined
      ? {}
      : {
          capz: {
            namespace: weighed.capz.namespace,
            azureMachinePool: weighed.capz.azureMachinePool,
            currentImage: weighed.capz.priorImage ?? null,
            description: weighed.capz.description,
          },
        };
  const image = await currentImageFacts(handle, scaleSet, configuration);
  const versions = image.pointsAtOurs ? image.versions : [];
  const plan = planRollback({
    versions: versions.map((version) => ({
      name: version.ref.versionName,
      id: version.id,
      provisioningState: version.provisioningState,
      excludeFromLatest: version.excludeFromLatest,
      tags: version.tags,
    })),
    ...(image.version === undefined ? {} : { currentVersion: image.version.ref.versionName }),
    pinned: image.pinned,
    definitionId: galleryImageResourceId(definition),
    ...definedOnly({ to }),
  });
  return { ...base, plan, ...capz };
}

/**
 * Points the model's image reference at `imageId` (a version when pinned), if it is not there yet,
 * conditional on `etag`. Returns `changed-elsewhere` when another tool wrote the scale set since the plan.
 */
export async function pointModelAt(
  handle: ClusterHandle,
  scaleSet: ScaleSetRef,
  input: { readonly imageId: string; readonly etag?: string },
): Promise<'done' | 'changed-elsewhere'> {
  const model = await handle.compute.scaleSets.get(scaleSet);
  if (sameResourceId(model.imageReferenceFields?.['id'], input.imageId)) return 'done';
  try {
    await handle.compute.scaleSets.requestChange(scaleSet, {
      imageReference: { ...restoringImageReference({}), id: input.imageId },
      ...definedOnly({ ifMatch: input.etag }),
    });
    return 'done';
  } catch (error) {
    if (isConcurrentChange(error)) return 'changed-elsewhere';
    throw error;
  }
}

/** What a read-back of a rollback found: done, or what is not there yet. */
export interface RollbackCheck {
  readonly done: boolean;
  readonly detail: string;
}

/**
 * Reads the rollback back from Azure: the model's image is the planned one and settled, the target is
 * in `latest` and, for a model on the definition, the newest version there (what new instances get); every
 * version rolled back from is hidden.
 */
export async function verifyPoolRollback(
  handle: ClusterHandle,
  input: {
    readonly scaleSet: ScaleSetRef;
    readonly definition: ImageDefinitionRef;
    readonly modelImageId: string;
    readonly to: string;
    readonly hide: readonly string[];
  },
): Promise<RollbackCheck> {
  const model = await handle.compute.scaleSets.get(input.scaleSet);
  const modelImage = model.imageReferenceFields?.['id'];
  if (!sameResourceId(modelImage, input.modelImageId)) {
    return {
      done: false,
      detail: `model image ${modelImage ?? 'marketplace'}, expected ${input.modelImageId}`,
    };
  }
  if (model.provisioningState === 'Updating') return { done: false, detail: 'model update in progress' };
  const versions = await handle.compute.imageVersions.list(input.definition);
  const target = versions.find((version) => version.ref.versionName === input.to);
  if (target === undefined) return { done: false, detail: `version ${input.to} is gone` };
  if (target.excludeFromLatest)
    return { done: false, detail: `version ${input.to} still hidden from latest` };
  const visible = input.hide.filter((name) =>
    versions.some((version) => version.ref.versionName === name && !version.excludeFromLatest),
  );
  if (visible.length > 0) return { done: false, detail: `still in latest: ${visible.join(', ')}` };
  const latest = newestUsableVersion(versions)?.ref.versionName;
  const pinned = !sameResourceId(input.modelImageId, galleryImageResourceId(input.definition));
  if (!pinned && latest !== input.to) {
    return { done: false, detail: `latest resolves to ${latest ?? 'nothing'}, expected ${input.to}` };
  }
  return { done: true, detail: `new instances get ${input.to}` };
}
