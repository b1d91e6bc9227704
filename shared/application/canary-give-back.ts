/**
 * Giving back the canary of a run that died for good, from Azure state alone (the scale set's canary
 * record, the version, the instances): for the reaper, which knows which runs are dead. The
 * decision is the domain's (decideCanaryGiveBack); this carries it out, each write idempotent, so the
 * reaper may call it again until it reports nothing left to do.
 */
import { decideCanaryGiveBack, parseCanaryRecord, restoringImageReference } from '../domain/canary-record.js';
import { isBeingDeleted } from '../domain/compute.js';
import {
  CONCURRENT_CHANGE,
  isConcurrentChange,
  isNotFound,
  messageOf,
  TerminalError,
  TransientError,
} from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import { clearCanaryRecord, markVersion } from './canary.js';
import { findPoolModel } from './pool-lookup.js';
import type { ClusterHandle } from './refresh-dependencies.js';

export interface CanaryGiveBackResult {
  readonly outcome: 'nothing-to-do' | 'given-back';
  readonly summary: string;
  readonly deletedInstances: readonly string[];
}

/**
 * `liveRun` is the run that holds the pool's lease (the caller): a canary recorded by any other run is a
 * dead run's, since only the holder of the lease runs a canary.
 */
export async function giveBackDeadCanary(
  handle: ClusterHandle,
  poolName: string,
  liveRun: string,
  now: Date,
): Promise<CanaryGiveBackResult> {
  const { pool, model } = await findPoolModel(handle, poolName);
  const configuration = handle.configuration.poolConfiguration(pool);
  const parsed = parseCanaryRecord(model.tags);
  if (parsed.kind === 'none') {
    return {
      outcome: 'nothing-to-do',
      summary: 'no canary is recorded on the scale set',
      deletedInstances: [],
    };
  }
  if (parsed.kind === 'damaged') {
    throw new TerminalError(
      'CanaryRecordDamaged',
      `giving back the canary of pool ${poolName}: ${parsed.problem}`,
      {
        advice:
          'restore the model and delete the canary instances by hand, then remove the vmss-prototype.canary-* tags',
      },
    );
  }
  const record = parsed.record;
  if (record.run === liveRun) {
    return { outcome: 'nothing-to-do', summary: "the canary is this run's own", deletedInstances: [] };
  }
  const deadRun = record.run;
  const g = configuration.gallery;
  const ref = {
    subscriptionId: g.subscriptionId,
    resourceGroup: g.resourceGroup,
    galleryName: g.galleryName,
    imageName: g.imageDefinitionName,
    versionName: record.version,
  };
  let version;
  try {
    version = await handle.compute.imageVersions.get(ref);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  // A canary ARM is deleting already (asked before the run died) is given back: not asked again.
  const instances = (await handle.compute.instances.list(pool.scaleSet)).filter(
    (instance) => !isBeingDeleted(instance),
  );
  const decision = decideCanaryGiveBack({
    record,
    deadRun,
    modelImage: model.imageReferenceFields ?? {},
    ...(version === undefined
      ? {}
      : {
          version: {
            id: version.id,
            published: !version.excludeFromLatest,
            succeeded: version.provisioningState === 'Succeeded',
          },
        }),
    instances: instances.map((instance) => ({
      instanceId: instance.instanceId,
      ...definedOnly({ imageVersionId: instance.imageId }),
    })),
  });
  if (decision.kind === 'nothing') {
    return { outcome: 'nothing-to-do', summary: decision.reason, deletedInstances: [] };
  }
  if (decision.restoreImage !== undefined) {
    try {
      await handle.compute.scaleSets.requestChange(pool.scaleSet, {
        imageReference: restoringImageReference(decision.restoreImage),
        ...definedOnly({ ifMatch: model.etag }),
      });
    } catch (error) {
      if (isConcurrentChange(error)) {
        throw new TransientError(CONCURRENT_CHANGE, `giving back the canary: ${messageOf(error)}`, {
          cause: error,
        });
      }
      throw error;
    }
  }
  for (const instanceId of decision.deleteInstances) {
    await handle.compute.instances.requestDeletion(pool.scaleSet, instanceId);
  }
  if (decision.abandonVersion) {
    await markVersion(handle.compute, ref, {
      kind: 'abandoned',
      reason: `run ${deadRun} died during the canary`,
      at: now,
    });
  }
  await clearCanaryRecord(handle.compute, pool.scaleSet, record.run);
  return { outcome: 'given-back', summary: decision.summary, deletedInstances: decision.deleteInstances };
}
