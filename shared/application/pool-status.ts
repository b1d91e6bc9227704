/**
 * The status of one pool's image: which image new instances get, whether it is ours, who built it and
 * how old it is. Read-only; used by the status orchestration, the CLI and the HTTP API.
 */
import type { Freshness } from '../domain/freshness.js';
import { freshnessOf } from '../domain/freshness.js';
import { parseRfc3339 } from '../domain/rfc3339.js';
import { checkScaleSetEligibility } from '../domain/scale-set.js';
import { provenanceOf } from './image-facts.js';
import { currentImageFacts, findPool } from './plan-pool.js';
import type { ClusterHandle } from './refresh-dependencies.js';

export interface PoolStatus {
  readonly cluster: string;
  readonly pool: string;
  readonly scaleSet: string;
  /** What the model's image reference says, in words. */
  readonly modelImage: string;
  /** The model points at our image definition (latest) or one of its versions (pinned). */
  readonly pointsAtOurImage: boolean;
  readonly pinned: boolean;
  readonly currentVersion?: {
    readonly name: string;
    readonly id: string;
    readonly sourceNode?: string;
    readonly patchedAt?: string;
    readonly builtAt?: string;
    readonly ageSeconds?: number;
    readonly storageAccountType?: string;
  };
  readonly versionCount: number;
  readonly eligible: boolean;
  readonly refusal?: string;
  /** How old the patches are that a node created now would boot with. */
  readonly freshness: Freshness;
}

export async function readPoolStatus(
  handle: ClusterHandle,
  poolName: string,
  now: Date,
): Promise<PoolStatus> {
  const pool = await findPool(handle, poolName);
  const configuration = handle.configuration.poolConfiguration(pool);
  const scaleSet = await handle.compute.getScaleSet(pool.scaleSet);
  const eligibility = checkScaleSetEligibility(scaleSet);
  const image = await currentImageFacts(handle, scaleSet, configuration);
  const reference = scaleSet.imageReference;
  const modelImage =
    reference === undefined
      ? 'none'
      : reference.kind === 'marketplace'
        ? `marketplace ${reference.publisher}:${reference.offer}:${reference.sku}:${reference.version}`
        : reference.id;
  const version = image.version;
  const provenance = version === undefined ? undefined : provenanceOf(version);
  const builtAt = version?.publishedAt ?? version?.tags['vmss-prototype.built-at'];
  return {
    cluster: handle.configuration.name,
    pool: pool.name,
    scaleSet: scaleSet.name,
    modelImage,
    pointsAtOurImage: image.pointsAtOurs,
    pinned: image.pinned,
    ...(version === undefined
      ? {}
      : {
          currentVersion: {
            name: version.ref.versionName,
            id: version.id,
            ...(provenance === undefined
              ? {}
              : { sourceNode: provenance.sourceNode, patchedAt: provenance.patchedAt }),
            ...(builtAt === undefined
              ? {}
              : {
                  builtAt,
                  ageSeconds: Math.max(
                    0,
                    Math.round((now.getTime() - (parseRfc3339(builtAt) ?? now.getTime())) / 1000),
                  ),
                }),
            ...(version.storageAccountType === undefined
              ? {}
              : { storageAccountType: version.storageAccountType }),
          },
        }),
    versionCount: image.versions.length,
    freshness: freshnessOf({
      now,
      ...(provenance === undefined ? {} : { patchedAt: provenance.patchedAt }),
      ...(version === undefined ? {} : { version: version.ref.versionName }),
      ...(reference?.kind === 'marketplace' ? { marketplaceVersion: reference.version } : {}),
    }),
    eligible: eligibility.eligible,
    ...(eligibility.eligible ? {} : { refusal: eligibility.reasons.map((r) => r.reason).join('; ') }),
  };
}
