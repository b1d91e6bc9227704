/**
 * The domain's view of a VM scale set (only what the product decides on) and the check that refuses
 * pools a prototype refresh would break or that another controller would silently revert.
 */

import { CANARY_SCALE_SET_TAGS, isCanaryScaleSetOf } from './canary-scale-set.js';
import type { ScaleSetExtension } from './compute.js';
import { describeScaleSet, type ScaleSetRef } from './resource-id.js';

export type OrchestrationMode = 'Uniform' | 'Flexible';
export type UpgradePolicyMode = 'Manual' | 'Automatic' | 'Rolling';
export type OsType = 'Linux' | 'Windows';
export type HyperVGeneration = 'V1' | 'V2';
export type Architecture = 'x64' | 'Arm64';

/**
 * Where the scale set's instances get their OS image from.
 * - `gallery`: an Azure Compute Gallery image definition (tracks latest) or version (pinned), by ARM id;
 * - `shared-gallery` / `community-gallery`: direct-shared or community gallery ids;
 * - `managed-image`: a legacy `Microsoft.Compute/images` resource;
 * - `marketplace`: publisher/offer/sku/version (version may be `latest`).
 */
export type ImageReference =
  | { readonly kind: 'gallery'; readonly id: string }
  | { readonly kind: 'shared-gallery'; readonly id: string }
  | { readonly kind: 'community-gallery'; readonly id: string }
  | { readonly kind: 'managed-image'; readonly id: string }
  | {
      readonly kind: 'marketplace';
      readonly publisher: string;
      readonly offer: string;
      readonly sku: string;
      readonly version: string;
    };

/** A scale set as the product sees it. Adapters fill it from the ARM model (`virtualMachineProfile`). */
export interface ScaleSet extends ScaleSetRef {
  /** ARM resource id as ARM returned it. */
  readonly id: string;
  readonly location: string;
  readonly orchestrationMode: OrchestrationMode;
  readonly osType: OsType;
  /** `upgradePolicy.mode`; Flexible scale sets may have none. */
  readonly upgradePolicyMode?: UpgradePolicyMode;
  /** `upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOSUpgrade`. */
  readonly automaticOsUpgrade: boolean;
  /** `storageProfile.osDisk.diffDiskSettings` is set: the OS disk lives on the host and cannot be captured. */
  readonly ephemeralOsDisk: boolean;
  /** `diffDiskSettings.placement` (`CacheDisk`, `ResourceDisk`, `NvmeDisk`) when ephemeral, for messages. */
  readonly ephemeralOsDiskPlacement?: string;
  readonly imageReference?: ImageReference;
  readonly tags: Readonly<Record<string, string>>;
  /** From the image definition or VM size; copied onto a new gallery image definition (immutable there). */
  readonly hyperVGeneration?: HyperVGeneration;
  /** `securityProfile.securityType`, e.g. `TrustedLaunch`, `ConfidentialVM`; undefined = Standard. */
  readonly securityType?: string;
  readonly architecture?: Architecture;
  readonly zones: readonly string[];
  /** `sku.name`, e.g. `Standard_D4s_v5` (live capture needs SCSI data disks). */
  readonly vmSize?: string;
  /** `storageProfile.osDisk.managedDisk.diskEncryptionSet.id`: OS disks encrypted with a customer-managed key. */
  readonly osDiskEncryptionSetId?: string;
  /** The model's extensions (`extensionProfile.extensions`, in model order), when the adapter read them. */
  readonly extensions?: readonly ScaleSetExtension[];
  /** ARM `provisioningState` (`Succeeded`, `Updating`, `Failed`…) when the adapter read it; not an eligibility fact. */
  readonly provisioningState?: string;
  /** The model's etag: a change sent with `If-Match` fails (412) when anyone changed the scale set since. */
  readonly etag?: string;
  /** `sku.capacity`: how many instances the scale set has (or is heading to). */
  readonly capacity?: number;
  /**
   * The image reference's fields exactly as ARM returned them (only those present), so that a canary can
   * put back precisely what it found (`imageReference` above is the interpreted view).
   */
  readonly imageReferenceFields?: Readonly<Record<string, string>>;
}

/** Why a scale set cannot be refreshed; stable codes for dashboards and tests. */
export type IneligibilityCode =
  /** A run's temporary canary scale set (canary-scale-set.ts): not a pool, deleted when its canary ends. */
  | 'canary-scale-set'
  | 'aks-managed'
  | 'capz-managed'
  /** Not a scale-set fact: a CAPZ pool whose settings do not accept CAPZ's rollout (shared/application/capz-pool.ts). */
  | 'capz-rollout-not-allowed'
  | 'windows'
  | 'ephemeral-os-disk'
  | 'automatic-os-upgrade'
  | 'upgrade-policy-not-manual'
  /** Not a scale-set fact: the pool's bootstrap flavour cannot be captured safely (refresh-plan.ts). */
  | 'bootstrap-flavour';

export interface Ineligibility {
  readonly code: IneligibilityCode;
  /** What is wrong and why it matters, as one sentence. */
  readonly reason: string;
  /** What the operator can do about it. */
  readonly remedy: string;
}

/**
 * Every reason is reported (not only the first), in the order of `IneligibilityCode`: an operator
 * fixing a pool wants the whole list at once, and "who owns this scale set" comes first because it
 * makes the other remedies moot.
 */
export type ScaleSetEligibility =
  | { readonly eligible: true }
  | { readonly eligible: false; readonly reasons: readonly [Ineligibility, ...Ineligibility[]] };

/** Tag-key prefix AKS puts on every scale set it creates (`aks-managed-poolName`, `aks-managed-createOperationID`…). */
const AKS_MANAGED_TAG_PREFIX = 'aks-managed-';
/** Before the `aks-managed-` prefix (≈2021), AKS wrote `creationSource: vmssclient-aks-<pool>-<n>-vmss`. */
const AKS_LEGACY_CREATION_SOURCE = /^vmssclient-aks-/i;
/** Default AKS node resource group: `MC_<resourceGroup>_<cluster>_<location>` (cloud-provider lowercases it). */
const AKS_NODE_RESOURCE_GROUP = /^mc_.+_.+_.+$/i;
/** CAPZ tags everything it owns with `sigs.k8s.io_cluster-api-provider-azure_cluster_<cluster>: owned`. */
const CAPZ_CLUSTER_TAG_PREFIX = 'sigs.k8s.io_cluster-api-provider-azure_cluster_';

/** Decides whether a prototype refresh may touch this scale set. Pure; reads nothing but its argument. */
export function checkScaleSetEligibility(scaleSet: ScaleSet): ScaleSetEligibility {
  const reasons: Ineligibility[] = [];
  const name = describeScaleSet(scaleSet);

  if (isCanaryScaleSetOf(scaleSet.tags)) {
    const tag = (key: string) =>
      Object.entries(scaleSet.tags).find(([candidate]) => candidate.toLowerCase() === key)?.[1] ?? '?';
    reasons.push({
      code: 'canary-scale-set',
      reason:
        `scale set ${name} is the temporary canary scale set of run ${tag(CANARY_SCALE_SET_TAGS.run)} for pool ` +
        `${tag(CANARY_SCALE_SET_TAGS.source)}: it is not a pool, and it is deleted when that run's canary ends`,
      remedy:
        'nothing to do: the run deletes it after its verdict, and the reaper or `vmss-prototype release` when ' +
        'the run died',
    });
  }

  const aksMarker = findAksMarker(scaleSet);
  if (aksMarker !== undefined) {
    reasons.push({
      code: 'aks-managed',
      reason:
        `scale set ${name} is managed by AKS (${aksMarker}): AKS rewrites the scale set model on node pool ` +
        `operations and its support policy forbids direct edits to agent nodes through IaaS APIs`,
      remedy:
        'use AKS node image upgrades, or the AKS Prepared Image Specification (preview) to pre-bake nodes; ' +
        'exclude this pool from vmss-prototype',
    });
  }

  const capzCluster = findCapzCluster(scaleSet.tags);
  if (capzCluster !== undefined) {
    reasons.push({
      code: 'capz-managed',
      reason:
        `scale set ${name} is owned by Cluster API Provider Azure (cluster ${capzCluster}): CAPZ sends the full ` +
        `model on its next reconcile and would revert the image reference and customData; name the cluster's ` +
        'management cluster in its capz settings to refresh it through its AzureMachinePool (docs/capz.md)',
      remedy:
        "name the cluster's management cluster in its `capz` settings (docs/capz.md): vmss-prototype then " +
        'promotes through AzureMachinePool spec.template.image, never the scale set',
    });
  }

  if (scaleSet.osType === 'Windows') {
    reasons.push({
      code: 'windows',
      reason: `scale set ${name} runs Windows: the disk preparation (identity and cloud-init cleanup) is Linux-only`,
      remedy: 'exclude this pool; Windows pools need a sysprep-based capture that vmss-prototype does not do',
    });
  }

  if (scaleSet.ephemeralOsDisk) {
    const placement =
      scaleSet.ephemeralOsDiskPlacement === undefined ? '' : ` on ${scaleSet.ephemeralOsDiskPlacement}`;
    reasons.push({
      code: 'ephemeral-os-disk',
      reason:
        `scale set ${name} uses an ephemeral OS disk${placement} (diffDiskSettings): Azure cannot snapshot, ` +
        `stop or capture ephemeral OS disks`,
      remedy:
        'create the pool with managed OS disks (no diffDiskSettings); the OS disk type cannot be changed on an ' +
        'existing scale set',
    });
  }

  if (scaleSet.automaticOsUpgrade) {
    reasons.push({
      code: 'automatic-os-upgrade',
      reason:
        `scale set ${name} has automatic OS image upgrade enabled: every new image version would reimage ` +
        `the whole pool`,
      remedy: 'set upgradePolicy.automaticOSUpgradePolicy.enableAutomaticOSUpgrade to false',
    });
  }

  const mode = scaleSet.upgradePolicyMode;
  if (mode === 'Automatic' || mode === 'Rolling') {
    reasons.push({
      code: 'upgrade-policy-not-manual',
      reason:
        `scale set ${name} has upgrade policy ${mode}: a model change would ` +
        (mode === 'Automatic' ? 'update all instances at once' : 'roll the new image over all instances'),
      remedy: 'set upgradePolicy.mode to Manual (new instances still get the new image; existing ones stay)',
    });
  }

  const [first, ...rest] = reasons;
  return first === undefined ? { eligible: true } : { eligible: false, reasons: [first, ...rest] };
}

/** Returns which AKS marker was found, for the message; undefined when none. */
function findAksMarker(scaleSet: ScaleSet): string | undefined {
  const tagKey = Object.keys(scaleSet.tags).find((key) =>
    key.toLowerCase().startsWith(AKS_MANAGED_TAG_PREFIX),
  );
  if (tagKey !== undefined) {
    return `tag ${tagKey}`;
  }
  const creationSource = scaleSet.tags['creationSource'];
  if (creationSource !== undefined && AKS_LEGACY_CREATION_SOURCE.test(creationSource)) {
    return `tag creationSource=${creationSource}`;
  }
  // Weakest marker, checked last: a custom nodeResourceGroup hides it, and a self-managed cluster is
  // unlikely to choose a name in AKS's reserved MC_<rg>_<cluster>_<location> pattern.
  if (AKS_NODE_RESOURCE_GROUP.test(scaleSet.resourceGroup)) {
    return `resource group ${scaleSet.resourceGroup} follows the AKS node resource group pattern MC_*`;
  }
  return undefined;
}

export function findCapzCluster(tags: Readonly<Record<string, string>>): string | undefined {
  for (const key of Object.keys(tags)) {
    if (
      key.toLowerCase().startsWith(CAPZ_CLUSTER_TAG_PREFIX) &&
      key.length > CAPZ_CLUSTER_TAG_PREFIX.length
    ) {
      return key.slice(CAPZ_CLUSTER_TAG_PREFIX.length);
    }
  }
  return undefined;
}
