/**
 * The temporary canary scale set of a boot-from-image pool's first refresh (issue #48): a scale set made by
 * PUT from the pool's readable model as publication will leave it, so that the canary boots exactly what
 * later nodes will (the version's image, the no-op customData, the bootstrap extensions gone). Pure: the
 * caller reads the model (as ARM returns it) and sends what this returns (canary-scale-set.phase.ts).
 */

import type { NewNodeBootstrap } from './bootstrap-flavour.js';
import { removableExtensions, type ScaleSetExtension } from './compute.js';
import { fnv1a32Hex } from './gallery-naming.js';
import { galleryDefinitionIdOf, sameResourceId } from './resource-id.js';

/** A JSON subtree copied as ARM returned it. */
export type ModelSubtree = Readonly<Record<string, unknown>>;

/**
 * One extension of the model (`extensionProfile.extensions[]`) in the SDK's flattened form: the extension
 * type (`properties.type`, e.g. `CustomScript`) is `typePropertiesType`; `type` is the resource type.
 */
export interface ModelExtension extends ModelSubtree {
  readonly name?: string;
  readonly publisher?: string;
  readonly typePropertiesType?: string;
}

/**
 * A scale set's model as ARM (and the SDK, which flattens `properties`) returns it: only the fields the
 * canary changes are typed; the rest is copied as it is.
 */
export interface ScaleSetModelDocument {
  readonly location: string;
  readonly sku?: { readonly name?: string; readonly tier?: string; readonly capacity?: number };
  readonly zones?: readonly string[];
  readonly identity?: {
    readonly type?: string;
    readonly userAssignedIdentities?: Readonly<Record<string, unknown>>;
  } & ModelSubtree;
  readonly tags?: Readonly<Record<string, string>>;
  readonly virtualMachineProfile?: {
    readonly osProfile?: ModelSubtree;
    readonly storageProfile?: ModelSubtree;
    readonly networkProfile?: ModelSubtree;
    readonly extensionProfile?: { readonly extensions?: readonly ModelExtension[] } & ModelSubtree;
  } & ModelSubtree;
  readonly [field: string]: unknown;
}

/**
 * The tags that mark a canary scale set: from them alone the reaper and `release` know it and its run.
 * None starts with the canary record's prefix (`vmss-prototype.canary-`, canary-record.ts): a canary scale
 * set carries no canary record, and nothing that reads its tags as a pool's must see one.
 */
export const CANARY_SCALE_SET_TAGS = {
  purpose: 'vmss-prototype.purpose',
  run: 'vmss-prototype.run-id',
  source: 'vmss-prototype.source-scale-set',
} as const;
export const CANARY_SCALE_SET_PURPOSE = 'canary-scale-set';

/**
 * A Flexible scale set names its VMs `<scale set>_<8 characters>` and a VM name has at most 64 characters
 * (learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-instance-ids), so the
 * scale set's name keeps 9 characters for them (its own limit, 64, is then never reached).
 */
export const CANARY_SCALE_SET_NAME_MAX = 64 - 9;
/**
 * A Linux computer name has 1 to 64 characters (alphanumerics, periods, hyphens; Azure naming rules for
 * Microsoft.Compute), and a Uniform scale set appends 6 base-36 characters of the instance id to the prefix
 * (learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-instance-ids): the
 * prefix has at most 58. (The SDK's reference still says 1 to 15: that is the Windows limit.)
 */
export const LINUX_COMPUTER_NAME_PREFIX_MAX = 64 - 6;

/** Base64 of NO_OP_CLOUD_CONFIG (the domain does not import Node's Buffer; a test checks they agree). */
export const NO_OP_CLOUD_CONFIG_BASE64 = 'I2Nsb3VkLWNvbmZpZwo=';

/** Fields ARM returns and computes itself: never sent back in a PUT. */
const READ_ONLY_FIELDS = ['id', 'name', 'type', 'etag', 'provisioningState', 'uniqueId', 'timeCreated'];

export interface CanaryScaleSetInput {
  /** The pool's scale set (name, for the canary's name and tag). */
  readonly source: { readonly name: string };
  /** Its model as ARM returned it. */
  readonly model: ScaleSetModelDocument;
  /** The built version's image id. */
  readonly imageVersionId: string;
  /** Only `boot-from-image` (a pool that runs its bootstrap needs no canary scale set). */
  readonly newNodes: NewNodeBootstrap;
  /** Extensions publication keeps (the settings' `keepExtensionTypes`). */
  readonly keepExtensionTypes: readonly string[];
  readonly runId: string;
  /** How many canaries. */
  readonly canaries: number;
}

export interface CanaryScaleSetPlan {
  readonly name: string;
  readonly computerNamePrefix: string;
  /** The body of the PUT. */
  readonly model: ScaleSetModelDocument;
  /** The extensions dropped, by name, as publication drops them. */
  readonly droppedExtensions: readonly string[];
}

/** The canary scale set's name: the pool's, a marker and the run's hash; idempotent per run. */
export function canaryScaleSetNameOf(source: string, runId: string): string {
  const suffix = `-cnry-${fnv1a32Hex(runId)}`;
  return `${trimEnd(source.slice(0, CANARY_SCALE_SET_NAME_MAX - suffix.length))}${suffix}`.toLowerCase();
}

/**
 * Its computer-name prefix: the pool's (or the scale set's name), `c` and the run's hash. It differs from
 * the pool's prefix, so no canary's computer (node) name can be a pool node's: names of equal length differ
 * in the prefix, others in length; the run's hash keeps two runs' canaries apart too.
 */
export function canaryComputerNamePrefixOf(sourcePrefix: string, runId: string): string {
  const suffix = `c${fnv1a32Hex(runId)}-`;
  const base = trimEnd(sourcePrefix.toLowerCase().replace(/[^a-z0-9.-]/g, '-'));
  const body = trimEnd(base.slice(0, LINUX_COMPUTER_NAME_PREFIX_MAX - suffix.length - 1));
  return body === '' ? suffix : `${body}-${suffix}`;
}

/** The canary scale set's name and the model to PUT: the pool's model as publication will leave it. */
export function canaryScaleSetPlan(input: CanaryScaleSetInput): CanaryScaleSetPlan {
  if (!Number.isInteger(input.canaries) || input.canaries < 1) {
    throw new RangeError(`canary scale set: ${input.canaries} canaries`);
  }
  // A pool whose new nodes run its bootstrap keeps its customData, which cannot be read to copy it: its
  // pinned model already is what publication leaves, and it needs no canary scale set.
  if (input.newNodes !== 'boot-from-image') {
    throw new RangeError(`canary scale set: new nodes ${input.newNodes} keep the model's bootstrap`);
  }
  const { model } = input;
  const profile = model.virtualMachineProfile ?? {};
  const osProfile = profile.osProfile ?? {};
  const sourcePrefix = stringOr(osProfile['computerNamePrefix'], input.source.name);
  const computerNamePrefix = canaryComputerNamePrefixOf(sourcePrefix, input.runId);
  const name = canaryScaleSetNameOf(input.source.name, input.runId);

  const extensions = profile.extensionProfile?.extensions ?? [];
  const dropped = new Set(
    removableExtensions(extensions.map(toScaleSetExtension), input.keepExtensionTypes).map((e) => e.name),
  );
  const keptExtensions = extensions
    .filter((extension) => !dropped.has(extension.name ?? ''))
    .map((extension) => omit(extension, ['id', 'type', 'provisioningState']));

  // adminPassword and customData are never returned; `secrets` (Key Vault certificates) would need the
  // product's identity to deploy from the vault: left out. customData is the no-op publication puts.
  const canaryOsProfile = {
    ...omit(osProfile, ['adminPassword', 'customData', 'secrets']),
    computerNamePrefix,
    customData: NO_OP_CLOUD_CONFIG_BASE64,
  };

  const body: ScaleSetModelDocument = {
    ...omit(model, READ_ONLY_FIELDS),
    location: model.location,
    sku: { ...model.sku, capacity: input.canaries },
    ...(model.identity === undefined ? {} : { identity: identityForPut(model.identity) }),
    tags: {
      ...copiedPoolTags(model.tags ?? {}),
      [CANARY_SCALE_SET_TAGS.purpose]: CANARY_SCALE_SET_PURPOSE,
      [CANARY_SCALE_SET_TAGS.run]: input.runId,
      [CANARY_SCALE_SET_TAGS.source]: input.source.name,
    },
    virtualMachineProfile: {
      ...profile,
      osProfile: canaryOsProfile,
      storageProfile: { ...profile.storageProfile, imageReference: { id: input.imageVersionId } },
      ...(profile.networkProfile === undefined
        ? {}
        : { networkProfile: withoutNatPools(profile.networkProfile) }),
      extensionProfile: { ...profile.extensionProfile, extensions: keptExtensions },
    },
  };
  return { name, computerNamePrefix, model: body, droppedExtensions: [...dropped] };
}

/**
 * The pool's tags a canary scale set carries: the organisation's (cost centre, owner, policy-required) are
 * copied so that the PUT meets the same tag policies. Left out: our own records about the pool (the canary
 * record, stopped VMs: `vmss-prototype.*`), which describe the pool and not this scale set; and
 * cluster-autoscaler's, so that an autoscaler discovering node groups by tag
 * (`--node-group-auto-discovery=label:cluster-autoscaler-enabled=true,…`, and the `min`/`max` size tags its
 * Azure provider reads: kubernetes/autoscaler cluster-autoscaler/cloudprovider/azure/README.md) never takes
 * the canary scale set for a node group and scales it, nor reads its node-template tags (written
 * `k8s.io_cluster-autoscaler_node-template_…` on Azure, whose tag names take no `/`:
 * cluster-autoscaler/cloudprovider/azure/azure_util.go).
 */
export function copiedPoolTags(tags: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(tags).filter(([key]) => {
      const lower = key.toLowerCase();
      return (
        !lower.startsWith('vmss-prototype.') &&
        !lower.startsWith('cluster-autoscaler') &&
        !lower.startsWith('k8s.io/cluster-autoscaler') &&
        !lower.startsWith('k8s.io_cluster-autoscaler') &&
        lower !== 'min' &&
        lower !== 'max'
      );
    }),
  );
}

/** Whether `tags` carry every owner tag (keys case-insensitive, as Azure compares them; values exact). */
export function carriesOwnerTags(
  tags: Readonly<Record<string, string>> | undefined,
  ownerTags: Readonly<Record<string, string>>,
): boolean {
  const lower = new Map(Object.entries(tags ?? {}).map(([key, value]) => [key.toLowerCase(), value]));
  return Object.entries(ownerTags).every(([key, value]) => lower.get(key.toLowerCase()) === value);
}

/** The owner tags of the canary scale set of `runId` (what `requestCreation` judges an existing one by). */
export function canaryScaleSetOwnerTags(runId: string): Record<string, string> {
  return { [CANARY_SCALE_SET_TAGS.purpose]: CANARY_SCALE_SET_PURPOSE, [CANARY_SCALE_SET_TAGS.run]: runId };
}

/** Whether a scale set's tags mark it as the canary scale set of `runId` (any run when omitted). */
export function isCanaryScaleSetOf(tags: Readonly<Record<string, string>>, runId?: string): boolean {
  return runId === undefined
    ? carriesOwnerTags(tags, { [CANARY_SCALE_SET_TAGS.purpose]: CANARY_SCALE_SET_PURPOSE })
    : carriesOwnerTags(tags, canaryScaleSetOwnerTags(runId));
}

export interface CanaryScaleSetNeed {
  readonly newNodes: NewNodeBootstrap;
  /** The model's extensions. */
  readonly extensions: readonly ScaleSetExtension[];
  readonly keepExtensionTypes: readonly string[];
  /** The model's image id (a gallery id), undefined for a marketplace image. */
  readonly modelImageId: string | undefined;
  /** The pool's image definition in our gallery. */
  readonly imageDefinitionId: string;
}

/**
 * Whether the pinned model would boot something publication will not leave, so the canary needs its own
 * scale set. customData is write-only: whether the model still carries the bootstrap is read from what is
 * readable — bootstrap extensions still there, or an image that is not yet one of our definition's (a model
 * publication pointed at our gallery got the no-op customData in the same write).
 */
export function needsCanaryScaleSet(need: CanaryScaleSetNeed): boolean {
  if (need.newNodes !== 'boot-from-image') return false;
  if (removableExtensions(need.extensions, need.keepExtensionTypes).length > 0) return true;
  return (
    need.modelImageId === undefined ||
    !sameResourceId(galleryDefinitionIdOf(need.modelImageId), need.imageDefinitionId)
  );
}

function toScaleSetExtension(extension: ModelExtension): ScaleSetExtension {
  return {
    name: extension.name ?? '',
    publisher: extension.publisher ?? '',
    type: extension.typePropertiesType ?? '',
  };
}

/** The identity as a PUT takes it: the type and the user-assigned ids (their principal and client ids are ARM's). */
function identityForPut(
  identity: NonNullable<ScaleSetModelDocument['identity']>,
): NonNullable<ScaleSetModelDocument['identity']> {
  const assigned = identity.userAssignedIdentities;
  return {
    ...(identity.type === undefined ? {} : { type: identity.type }),
    ...(assigned === undefined
      ? {}
      : { userAssignedIdentities: Object.fromEntries(Object.keys(assigned).map((id) => [id, {}])) }),
  };
}

/**
 * The network profile without inbound NAT pools: a NAT pool's frontend ports belong to one scale set, and
 * a second one on it is refused. Subnets, load balancer backend pools, NSGs and accelerated networking stay.
 */
function withoutNatPools(networkProfile: ModelSubtree): ModelSubtree {
  const configurations = networkProfile['networkInterfaceConfigurations'];
  if (!Array.isArray(configurations)) return networkProfile;
  return {
    ...networkProfile,
    networkInterfaceConfigurations: configurations.map((nic: ModelSubtree) => {
      const ipConfigurations = nic['ipConfigurations'];
      if (!Array.isArray(ipConfigurations)) return nic;
      return {
        ...nic,
        ipConfigurations: ipConfigurations.map((ip: ModelSubtree) =>
          omit(ip, ['loadBalancerInboundNatPools']),
        ),
      };
    }),
  };
}

function omit<T extends object>(value: T, keys: readonly string[]): T {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key))) as T;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function trimEnd(text: string): string {
  return text.replace(/[-_.]+$/, '');
}
