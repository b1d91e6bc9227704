/**
 * A pool's parts of planning (its pools, configured or discovered, are pool-lookup.ts's): what is read about one pool before
 * its nodes are judged, and its plan from the selection (plan-cluster.ts lists the nodes once and folds
 * them into every pool's selection). Read-only: a dry run is exactly this and changes nothing.
 */
import { formatDuration } from '../config/duration.js';
import type { FlavourChoice } from '../domain/bootstrap-flavour.js';
import { parseCanaryRecord } from '../domain/canary-record.js';
import { needsCanaryScaleSet } from '../domain/canary-scale-set.js';
import type { FlavourEvidence } from '../domain/capture-mode.js';
import { chooseCaptureMode } from '../domain/capture-mode.js';
import type { ImageVersion } from '../domain/compute.js';
import { extensionTypesOf } from '../domain/compute.js';
import { isNotFound } from '../domain/errors.js';
import { definedOnly } from '../domain/optional.js';
import type { FoldedSelection } from '../domain/pool-selection-fold.js';
import type { NodeVerdict, PoolImageFacts, PoolSelectionInput } from '../domain/prototype-selection.js';
import { applyBootstrapFlavour, planPoolRefresh } from '../domain/refresh-plan.js';
import type { ScaleSetRef } from '../domain/resource-id.js';
import { galleryImageResourceId } from '../domain/resource-id.js';
import { parseRfc3339 } from '../domain/rfc3339.js';
import type { ScaleSet } from '../domain/scale-set.js';
import { checkScaleSetEligibility } from '../domain/scale-set.js';
import type { RejectedBuild } from '../domain/version-verdict.js';
import { type PlannedCapzPool, weighCapzOwnership } from './capz-pool.js';
import { instanceOfNode, newestUsableVersion, provenanceOf } from './image-facts.js';
import { requireKubernetesAccess } from './kubernetes-permissions.js';
import { flexibleMemberIds } from './pool-membership.js';
import type { NodeVerdictView, PoolDecision, PoolPlan } from './pool-plan.js';
import { policyRefusalOf } from './pool-policies.js';
import type { ClusterHandle, ConfiguredPool, PoolConfiguration } from './refresh-dependencies.js';
import { listDefinitionVersions, rejectedBuildsOfVersions } from './rejected-builds.js';

/** Facts about the image the model points at, when it is one of our gallery versions. */
export async function currentImageFacts(
  handle: ClusterHandle,
  scaleSet: Pick<ScaleSet, 'imageReference'>,
  configuration: PoolConfiguration,
  /** The definition's versions as the caller has just listed them: not listed again. */
  listed?: readonly ImageVersion[],
): Promise<{
  facts?: PoolImageFacts;
  version?: ImageVersion;
  versions: ImageVersion[];
  pointsAtOurs: boolean;
  pinned: boolean;
}> {
  const reference = scaleSet.imageReference;
  const definitionId = definitionIdOf(configuration).toLowerCase();
  if (reference === undefined || reference.kind !== 'gallery') {
    return { versions: [], pointsAtOurs: false, pinned: false };
  }
  const id = reference.id.toLowerCase();
  const pinned = id.startsWith(`${definitionId}/versions/`);
  if (id !== definitionId && !pinned) return { versions: [], pointsAtOurs: false, pinned: false };
  let versions: ImageVersion[];
  try {
    versions =
      listed !== undefined
        ? [...listed]
        : await handle.compute.imageVersions.list({
            subscriptionId: configuration.gallery.subscriptionId,
            resourceGroup: configuration.gallery.resourceGroup,
            galleryName: configuration.gallery.galleryName,
            imageName: configuration.gallery.imageDefinitionName,
          });
  } catch (error) {
    if (isNotFound(error)) return { versions: [], pointsAtOurs: true, pinned };
    throw error;
  }
  const version = pinned
    ? versions.find((candidate) => candidate.id.toLowerCase() === id)
    : newestUsableVersion(versions);
  if (version === undefined) return { versions, pointsAtOurs: true, pinned };
  const provenance = provenanceOf(version);
  const patchedAt = provenance === undefined ? undefined : parseRfc3339(provenance.patchRuleAfter);
  const builtAt = version.publishedAt === undefined ? undefined : parseRfc3339(version.publishedAt);
  return {
    facts: {
      version: version.ref.versionName,
      ...(patchedAt === undefined ? {} : { patchedAt: new Date(patchedAt) }),
      ...(builtAt === undefined ? {} : { builtAt: new Date(builtAt) }),
    },
    version,
    versions,
    pointsAtOurs: true,
    pinned,
  };
}

function definitionIdOf(configuration: PoolConfiguration): string {
  const g = configuration.gallery;
  return galleryImageResourceId({ ...g, imageName: g.imageDefinitionName });
}

/** What planning reads about one pool before its nodes are judged. */
export interface PreparedPool {
  readonly pool: ConfiguredPool;
  readonly configuration: PoolConfiguration;
  readonly scaleSet: ScaleSet;
  readonly eligibility: ReturnType<typeof checkScaleSetEligibility>;
  readonly image?: Awaited<ReturnType<typeof currentImageFacts>>;
  readonly flexibleMembers?: readonly string[];
  readonly rejectedBuilds: readonly RejectedBuild[];
  /** A CAPZ pool: its MachinePool and what CAPZ will do with a new image. */
  readonly capz?: PlannedCapzPool;
  /** The definition's versions as planning listed them (`absent`: no definition yet). */
  readonly listedVersions?: readonly ImageVersion[] | 'absent';
}

/**
 * Reads what selection needs of one pool: the permission check, the scale set, the image it points at,
 * Flexible members and rejected builds. `accessChecks` shares one permission check between pools that
 * need the same access (capture mode and namespace).
 */
export async function preparePool(
  handle: ClusterHandle,
  pool: ConfiguredPool,
  accessChecks: Map<string, Promise<void>> = new Map(),
): Promise<PreparedPool> {
  const cluster = handle.configuration;
  const configuration = cluster.poolConfiguration(pool);
  // Before anything else reads or changes the cluster for this pool: a missing permission is reported
  // here, naming it, rather than by the first call it denies (after the node was cordoned).
  const accessKey = `${configuration.run.captureMode}|${configuration.run.prepNamespace}`;
  let accessCheck = accessChecks.get(accessKey);
  if (accessCheck === undefined) {
    accessCheck = requireKubernetesAccess(handle.kube, cluster.name, {
      captureMode: configuration.run.captureMode,
      namespace: configuration.run.prepNamespace,
    });
    accessChecks.set(accessKey, accessCheck);
    // A failed check is not shared: the next pool (or attempt) asks again.
    accessCheck.catch(() => accessChecks.delete(accessKey));
  }
  await accessCheck;
  // The image's generation and architecture: a new image definition must match them.
  const scaleSet = await handle.compute.scaleSets.get(pool.scaleSet, { imageFacts: true });
  // A CAPZ pool is weighed against its management cluster's MachinePool and the rollout setting.
  const { eligibility, capz } = await weighCapzOwnership(
    handle,
    configuration,
    scaleSet,
    checkScaleSetEligibility(scaleSet),
  );
  if (!eligibility.eligible) {
    return { pool, configuration, scaleSet, eligibility, rejectedBuilds: [], ...definedOnly({ capz }) };
  }
  // Listed once: the image's facts and the rejected builds read the same list, and a refresh hands it to
  // its leftovers' read (readPoolHoldings) instead of listing again after the lease.
  const listedVersions = await listDefinitionVersions(handle, configuration);
  const listed = listedVersions === 'absent' ? [] : listedVersions;
  const image = await currentImageFacts(handle, scaleSet, configuration, listed);
  const flexibleMembers = await flexibleMemberIds(handle.compute, scaleSet);
  // Donors and patches whose versions were rejected (canary, rollback) are not built from again.
  const rejectedBuilds = rejectedBuildsOfVersions(listed);
  return {
    pool,
    configuration,
    scaleSet,
    eligibility,
    image,
    ...definedOnly({ flexibleMembers, capz }),
    rejectedBuilds,
    listedVersions,
  };
}

/** The selection input of a prepared pool. */
export function selectionInputOf(prepared: PreparedPool, now: Date): PoolSelectionInput {
  return {
    pool: {
      scaleSet: prepared.pool.scaleSet,
      ...definedOnly({ flexibleMemberIds: prepared.flexibleMembers }),
    },
    policy: prepared.configuration.policy,
    ...definedOnly({ image: prepared.image?.facts }),
    rejectedBuilds: prepared.rejectedBuilds,
    now,
  };
}

/** The pool's plan from its selection: the decision, the donor's flavour, the image definition. */
export async function planFromSelection(
  handle: ClusterHandle,
  prepared: PreparedPool,
  folded: FoldedSelection,
  requestedNode: string | undefined,
  now: Date,
): Promise<PoolPlan> {
  const cluster = handle.configuration;
  const { pool, configuration, scaleSet, eligibility, image } = prepared;
  const { selection } = folded;
  const selected = planPoolRefresh({
    eligibility,
    selection,
    enabled: configuration.enabled,
    ...definedOnly({ requestedNode, disabledReason: configuration.disabledReason }),
    now,
  });
  // The pool's bootstrap flavour: configured, or read off the donor; refused when it cannot be captured.
  const plan = applyBootstrapFlavour(selected, {
    ...definedOnly({ configured: configuration.bootstrapFlavour }),
    ...(selected.kind === 'refresh' ? { donor: folded.nodes.get(selected.node) } : {}),
  });

  let decision: PoolDecision;
  let capture: PoolPlan['capture'];
  switch (plan.kind) {
    case 'refresh': {
      const node = folded.nodes.get(plan.node);
      const instanceId = instanceOfNode(node?.providerId, pool.scaleSet);
      const verdict = selection.verdicts.find((candidate) => candidate.name === plan.node);
      const captureMode = chooseCaptureMode({
        setting: configuration.run.captureMode,
        flavour: flavourEvidence(plan.flavour),
        osType: scaleSet.osType,
        ...definedOnly({
          securityType: scaleSet.securityType,
          osDiskEncryptionSetId: scaleSet.osDiskEncryptionSetId,
        }),
        extensionTypes: extensionTypesOf(scaleSet.extensions ?? []),
        ...definedOnly({ vmSize: scaleSet.vmSize }),
      });
      if (instanceId === undefined) {
        decision = {
          kind: 'skip',
          reason: `node ${plan.node} has no scale set instance id in its providerID`,
        };
      } else if (captureMode.kind === 'refuse') {
        decision = { kind: 'refused', reason: `pool ${pool.name} cannot be captured: ${captureMode.reason}` };
      } else {
        capture = {
          mode: captureMode.mode,
          reason: captureMode.reason,
          scrubbed: captureMode.scrubbed,
          newNodes: captureMode.newNodes,
        };
        decision = {
          kind: 'refresh',
          node: plan.node,
          instanceId,
          // applyBootstrapFlavour decides the flavour of every refresh (configured, or detected: an unknown
          // one is refused); aks-engine is what was always captured.
          flavour: captureMode.flavour,
          ...(plan.flavour === undefined ? {} : { flavourEvidence: plan.flavour.evidence }),
          reason: plan.why,
          warnings: plan.warnings,
          // The node's recorded patch, whether it was chosen or named by the operator.
          ...definedOnly({ patchedAt: verdict?.lastPatchedAt }),
        };
      }
      break;
    }
    case 'up-to-date':
      decision = { kind: 'up-to-date', reason: plan.reason };
      break;
    case 'skip':
      decision = { kind: 'skip', reason: plan.reason };
      break;
    case 'refused':
      decision = { kind: 'refused', reason: plan.reason };
      break;
  }

  // An invalid PoolImagePolicy starts nothing for its pool (docs/pool-policy.md).
  const policyRefusal = policyRefusalOf(configuration);
  if (policyRefusal !== undefined) decision = { kind: 'refused', reason: policyRefusal };

  // A canary recorded on the scale set pins the model to a version under test: nothing is planned on top
  // of it. The run that holds the pool is testing it, or a dead run left it: a refresh gives
  // that back first, and so do `release` and the reaper.
  const canary = parseCanaryRecord(scaleSet.tags);
  if (canary.kind !== 'none') {
    const what =
      canary.kind === 'damaged'
        ? `a damaged canary record (${canary.problem})`
        : `the canary of run ${canary.record.run}, testing version ${canary.record.version}`;
    decision = {
      kind: 'skip',
      reason:
        `scale set ${scaleSet.name} carries ${what}: the run holding pool ${pool.name} tests it; if that run ` +
        `is gone, \`vmss-prototype release --pool ${pool.name}\` (or the reaper) puts the model back`,
    };
  }

  // The model does not carry the Hyper-V generation; the donor's instance view does, and the image
  // definition must match it or the version is refused (docs/design.md#gallery-and-image-definition).
  let hyperVGeneration = scaleSet.hyperVGeneration;
  if (hyperVGeneration === undefined && decision.kind === 'refresh') {
    hyperVGeneration = (await handle.compute.instances.get(pool.scaleSet, decision.instanceId))
      .hyperVGeneration;
  }
  const g = configuration.gallery;
  // The canary boots in a scale set of its own when the pin would keep a bootstrap publication drops.
  const canaryScaleSet =
    decision.kind === 'refresh' &&
    configuration.run.canary.enabled &&
    capture?.newNodes !== undefined &&
    prepared.capz === undefined &&
    needsCanaryScaleSet({
      newNodes: capture.newNodes,
      extensions: scaleSet.extensions ?? [],
      keepExtensionTypes: configuration.run.keepExtensionTypes,
      modelImageId: scaleSet.imageReference?.kind === 'marketplace' ? undefined : scaleSet.imageReference?.id,
      imageDefinitionId: galleryImageResourceId({
        subscriptionId: g.subscriptionId,
        resourceGroup: g.resourceGroup,
        galleryName: g.galleryName,
        imageName: g.imageDefinitionName,
      }),
    });
  return {
    cluster: cluster.name,
    pool: pool.name,
    scaleSet: { ...refOf(pool.scaleSet), id: scaleSet.id, location: scaleSet.location },
    decision,
    verdicts: selection.verdicts.map(verdictView),
    ...(folded.verdictsOmitted === 0 ? {} : { verdictsOmitted: folded.verdictsOmitted }),
    settings: configuration.run,
    ...definedOnly({ capture, capz: prepared.capz }),
    ...(image?.version === undefined ? {} : { currentImageId: image.version.id }),
    ...definedOnly({ modelImage: scaleSet.imageReferenceFields }),
    ...(canaryScaleSet ? { canaryScaleSet: true as const } : {}),
    ...(decision.kind === 'refresh' && prepared.listedVersions !== undefined
      ? { listedVersions: prepared.listedVersions }
      : {}),
    ...(canary.kind === 'none'
      ? {}
      : {
          canaryRecord:
            canary.kind === 'damaged'
              ? ('damaged' as const)
              : { run: canary.record.run, version: canary.record.version },
        }),
    image: {
      definition: {
        subscriptionId: g.subscriptionId,
        resourceGroup: g.resourceGroup,
        galleryName: g.galleryName,
        imageName: g.imageDefinitionName,
      },
      definitionSpec: {
        osType: scaleSet.osType,
        // A scale set with an osProfile can only use Generalized images (docs/design.md#gallery-and-image-definition).
        osState: 'Generalized',
        hyperVGeneration: hyperVGeneration ?? 'V1',
        architecture: scaleSet.architecture ?? 'x64',
        ...(galleryFeatureFor(scaleSet.securityType) === undefined
          ? {}
          : { securityType: galleryFeatureFor(scaleSet.securityType) }),
        identifier: { publisher: 'vmss-prototype', offer: cluster.name, sku: pool.name },
        description: `Prototype images of pool ${pool.name} of cluster ${cluster.name}, built by vmss-prototype`,
        tags: { 'vmss-prototype.cluster': cluster.name, 'vmss-prototype.pool': pool.name },
      },
      galleryTags: { 'vmss-prototype.created-by': 'vmss-prototype' },
    },
  };
}

/** The flavour applyBootstrapFlavour chose, as evidence for the capture mode (auto takes live only for a known one). */
function flavourEvidence(choice: Extract<FlavourChoice, { kind: 'capture' }> | undefined): FlavourEvidence {
  if (choice === undefined) return { kind: 'unknown', reason: 'the donor node was not listed' };
  return choice.source === 'configured'
    ? { kind: 'configured', flavour: choice.flavour }
    : { kind: 'detected', flavour: choice.flavour, evidence: choice.evidence };
}

/** A Trusted Launch scale set needs a definition that declares support for it, or VM creation fails. */
function galleryFeatureFor(securityType: string | undefined): string | undefined {
  switch (securityType?.toLowerCase()) {
    case undefined:
    case 'standard':
      return undefined;
    case 'trustedlaunch':
      return 'TrustedLaunchSupported';
    case 'confidentialvm':
      return 'ConfidentialVmSupported';
    default:
      return securityType;
  }
}

function refOf(ref: ScaleSetRef): ScaleSetRef {
  return { subscriptionId: ref.subscriptionId, resourceGroup: ref.resourceGroup, name: ref.name };
}

function verdictView(verdict: NodeVerdict): NodeVerdictView {
  if (verdict.status === 'candidate') {
    const waived = verdict.waived === undefined ? '' : ` (waived: ${verdict.waived.reason})`;
    return {
      node: verdict.name,
      candidate: true,
      code: 'candidate',
      detail: `candidate (ready for ${formatDuration(verdict.readyForSeconds)})${waived}`,
    };
  }
  return {
    node: verdict.name,
    candidate: false,
    code: verdict.rule,
    detail: verdict.reason,
    ...definedOnly({ eligibleAt: verdict.eligibleAt }),
  };
}
