import { definedOnly } from './optional.js';
/**
 * ARM resource ids and names, the one home for them: parsing a node's `spec.providerID` (an ARM id with
 * an `azure://` scheme) and the ids ARM hands back (scale set members, VMs, gallery images and
 * versions), building ids, and comparing them the way ARM does (case-insensitively).
 */

/** A scale set as ARM names it. Compare with `sameScaleSet` or `scaleSetKey`, never with `===`. */
export interface ScaleSetRef {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
}

/** A virtual machine as ARM names it (a Flexible scale set member or a standalone VM). */
export interface VirtualMachineRef {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
}

/**
 * What a providerID says about a node.
 * - `scale-set-instance`: a Uniform scale set instance; the scale set is known from the id alone.
 * - `virtual-machine`: a plain `Microsoft.Compute/virtualMachines` id. A Flexible scale set member looks
 *   exactly like a standalone VM here; only ARM (`virtualMachineScaleSet.id` of the VM) can tell them apart.
 */
export type NodeProviderId =
  | {
      readonly kind: 'scale-set-instance';
      readonly scaleSet: ScaleSetRef;
      /** Decimal instance id as a string (ARM treats it as a name, and ids exceed nothing we do math on). */
      readonly instanceId: string;
    }
  | {
      readonly kind: 'virtual-machine';
      readonly virtualMachine: VirtualMachineRef;
    };

/**
 * Why a providerID could not be used:
 * - `missing`: empty or absent (node not yet initialised by the cloud controller manager);
 * - `not-azure`: another cloud or a local provider (`aws://`, `kind://`, `k3s://`…);
 * - `not-a-scale-set`: an Azure id of something that is neither a scale set instance nor a VM;
 * - `malformed`: looks like Azure but does not follow the ARM id grammar.
 */
export type ProviderIdFailureReason = 'missing' | 'not-azure' | 'not-a-scale-set' | 'malformed';

export type ProviderIdParseResult =
  | { readonly ok: true; readonly providerId: NodeProviderId }
  | { readonly ok: false; readonly reason: ProviderIdFailureReason; readonly message: string };

const AZURE_SCHEME = 'azure://';
const COMPUTE_PROVIDER = 'microsoft.compute';
const SCALE_SETS = 'virtualmachinescalesets';
const VIRTUAL_MACHINES = 'virtualmachines';
const GALLERIES = 'galleries';
const IMAGES = 'images';
const VERSIONS = 'versions';
const INSTANCE_ID = /^\d+$/;

/**
 * Parses a node's `spec.providerID`. cloud-provider-azure writes
 * `azure:///subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachineScaleSets/<vmss>/virtualMachines/<n>`
 * for Uniform instances (resource group lowercased) and `.../providers/Microsoft.Compute/virtualMachines/<vm>`
 * for Flexible members and standalone VMs. Segment keywords are matched case-insensitively, as ARM does;
 * names keep the casing they were written with.
 */
export function parseProviderId(raw: string | undefined): ProviderIdParseResult {
  const value = raw?.trim() ?? '';
  if (value === '') {
    return failure(
      'missing',
      'the node has no spec.providerID (not yet initialised by the cloud controller?)',
    );
  }
  const schemeEnd = value.indexOf('://');
  if (schemeEnd < 0) {
    return failure('malformed', `providerID "${value}" has no scheme (expected azure:///subscriptions/…)`);
  }
  if (value.slice(0, schemeEnd + 3).toLowerCase() !== AZURE_SCHEME) {
    return failure(
      'not-azure',
      `providerID "${value}" is not an Azure id (scheme ${value.slice(0, schemeEnd)})`,
    );
  }
  const path = value.slice(AZURE_SCHEME.length);
  if (!path.startsWith('/')) {
    return failure('malformed', `providerID "${value}" must have an empty host: azure:///subscriptions/…`);
  }
  const parsed = parseResourcePath(path);
  if (typeof parsed === 'string') {
    return failure(parsed === 'not-a-scale-set' ? 'not-a-scale-set' : 'malformed', describe(parsed, value));
  }
  return { ok: true, providerId: parsed };
}

/**
 * Parses an ARM resource id of a scale set instance or VM (`/subscriptions/…`, no scheme). Useful for ids
 * that come from ARM itself (e.g. a Flex VM's `id`).
 */
export function parseComputeResourceId(id: string): ProviderIdParseResult {
  const parsed = parseResourcePath(id.trim());
  if (typeof parsed === 'string') {
    return failure(parsed === 'not-a-scale-set' ? 'not-a-scale-set' : 'malformed', describe(parsed, id));
  }
  return { ok: true, providerId: parsed };
}

/** Parses `/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachineScaleSets/<name>`. */
export function parseScaleSetResourceId(id: string): ScaleSetRef | undefined {
  const segments = splitPath(id.trim());
  if (segments === undefined || segments.length !== 8) {
    return undefined;
  }
  const head = parseHead(segments);
  if (head === undefined || lower(segments, 6) !== SCALE_SETS) {
    return undefined;
  }
  const name = segments[7];
  return name === undefined ? undefined : { ...head, name };
}

/**
 * Canonical identity of a scale set for maps and sets: lowercased subscription, resource group and
 * name. ARM resource ids are case-insensitive and cloud-provider-azure lowercases the resource group,
 * so two refs that differ only in casing are the same scale set.
 */
export function scaleSetKey(ref: ScaleSetRef): string {
  return `${ref.subscriptionId}/${ref.resourceGroup}/${ref.name}`.toLowerCase();
}

/** Canonical identity of a virtual machine (see `scaleSetKey`). */
export function virtualMachineKey(ref: VirtualMachineRef): string {
  return `${ref.subscriptionId}/${ref.resourceGroup}/${ref.name}`.toLowerCase();
}

/** True when both refs name the same scale set, ignoring case as ARM does. */
export function sameScaleSet(a: ScaleSetRef, b: ScaleSetRef): boolean {
  return scaleSetKey(a) === scaleSetKey(b);
}

function resourceGroupResourceId(subscriptionId: string, resourceGroup: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`;
}

export function scaleSetResourceId(ref: ScaleSetRef): string {
  return `${resourceGroupResourceId(ref.subscriptionId, ref.resourceGroup)}/providers/Microsoft.Compute/virtualMachineScaleSets/${ref.name}`;
}

export function scaleSetInstanceResourceId(ref: ScaleSetRef, instanceId: string): string {
  return `${scaleSetResourceId(ref)}/virtualMachines/${instanceId}`;
}

export function virtualMachineResourceId(ref: VirtualMachineRef): string {
  return `${resourceGroupResourceId(ref.subscriptionId, ref.resourceGroup)}/providers/Microsoft.Compute/virtualMachines/${ref.name}`;
}

/** The providerID cloud-provider-azure would write for a node (resource group lowercased, as it does). */
/** A managed disk snapshot's ARM id (what the create call names it: known once the call returned). */
export function snapshotResourceId(ref: {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
}): string {
  return `/subscriptions/${ref.subscriptionId}/resourceGroups/${ref.resourceGroup}/providers/Microsoft.Compute/snapshots/${ref.name}`;
}

export function formatProviderId(providerId: NodeProviderId): string {
  if (providerId.kind === 'scale-set-instance') {
    const ref = { ...providerId.scaleSet, resourceGroup: providerId.scaleSet.resourceGroup.toLowerCase() };
    return `azure://${scaleSetInstanceResourceId(ref, providerId.instanceId)}`;
  }
  const vm = providerId.virtualMachine;
  return `azure://${virtualMachineResourceId({ ...vm, resourceGroup: vm.resourceGroup.toLowerCase() })}`;
}

/** An image definition or version of an Azure Compute Gallery, as named by its id. */
export interface GalleryImageId {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly galleryName: string;
  readonly imageName: string;
  /** Present for a version id. */
  readonly versionName?: string;
}

/** `/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/galleries/<g>/images/<i>`. */
export function galleryImageResourceId(ref: Omit<GalleryImageId, 'versionName'>): string {
  return (
    `${resourceGroupResourceId(ref.subscriptionId, ref.resourceGroup)}/providers/Microsoft.Compute/` +
    `galleries/${ref.galleryName}/images/${ref.imageName}`
  );
}

/** Parses a gallery image definition id, or a version id (`…/images/<i>/versions/<v>`). */
export function parseGalleryImageId(id: string): GalleryImageId | undefined {
  const segments = splitPath(id.trim().replace(/\/$/, ''));
  if (segments === undefined || (segments.length !== 10 && segments.length !== 12)) return undefined;
  const head = parseHead(segments);
  if (
    head === undefined ||
    lower(segments, 5) !== COMPUTE_PROVIDER ||
    lower(segments, 6) !== GALLERIES ||
    lower(segments, 8) !== IMAGES ||
    (segments.length === 12 && lower(segments, 10) !== VERSIONS)
  ) {
    return undefined;
  }
  const [galleryName, imageName, versionName] = [segments[7], segments[9], segments[11]];
  if (galleryName === undefined || imageName === undefined) return undefined;
  return { ...head, galleryName, imageName, ...definedOnly({ versionName }) };
}

/** The image definition id of a version id (itself when it already names a definition or is not a gallery id). */
export function galleryDefinitionIdOf(id: string): string {
  const parsed = parseGalleryImageId(id);
  return parsed === undefined ? id : galleryImageResourceId(parsed);
}

/** The resource group an id names (`…/resourceGroups/<rg>/…`), as written. */
export function resourceGroupOfId(id: string): string | undefined {
  const segments = splitPath(id.trim());
  return segments === undefined ? undefined : parseHead(segments)?.resourceGroup;
}

/** True for the id of a Uniform scale set instance (`…/virtualMachineScaleSets/<s>/virtualMachines/<n>`). */
export function isScaleSetInstanceId(id: string): boolean {
  const parsed = parseComputeResourceId(id);
  return parsed.ok && parsed.providerId.kind === 'scale-set-instance';
}

/** ARM ids are case-insensitive. */
export function sameResourceId(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** Human-readable scale set name for messages: `rg/name`. */
export function describeScaleSet(ref: ScaleSetRef): string {
  return `${ref.resourceGroup}/${ref.name}`;
}

type PathProblem = 'not-a-scale-set' | 'bad-shape' | 'bad-instance-id' | 'empty-segment';

function parseResourcePath(path: string): NodeProviderId | PathProblem {
  const segments = splitPath(path);
  if (segments === undefined) {
    return 'empty-segment';
  }
  const head = parseHead(segments);
  if (head === undefined) {
    return 'bad-shape';
  }
  if (lower(segments, 5) !== COMPUTE_PROVIDER) {
    return 'not-a-scale-set';
  }
  const type = lower(segments, 6);
  if (type === SCALE_SETS) {
    if (segments.length !== 10 || lower(segments, 8) !== VIRTUAL_MACHINES) {
      return 'bad-shape';
    }
    const [name, instanceId] = [segments[7], segments[9]];
    if (name === undefined || instanceId === undefined || !INSTANCE_ID.test(instanceId)) {
      return 'bad-instance-id';
    }
    return { kind: 'scale-set-instance', scaleSet: { ...head, name }, instanceId };
  }
  if (type === VIRTUAL_MACHINES) {
    const name = segments[7];
    if (segments.length !== 8 || name === undefined) {
      return 'bad-shape';
    }
    return { kind: 'virtual-machine', virtualMachine: { ...head, name } };
  }
  return 'not-a-scale-set';
}

/** Splits `/a/b/c` into segments; undefined when a segment is empty (`//`, trailing `/`) or no leading `/`. */
function splitPath(path: string): string[] | undefined {
  if (!path.startsWith('/')) {
    return undefined;
  }
  const segments = path.slice(1).split('/');
  return segments.some((segment) => segment === '') ? undefined : segments;
}

/** Checks `subscriptions/<s>/resourceGroups/<rg>/providers/<namespace>/<type>/<name>` (at least 8 segments). */
function parseHead(
  segments: readonly string[],
): { subscriptionId: string; resourceGroup: string } | undefined {
  const [subscriptions, subscriptionId, resourceGroups, resourceGroup, providers] = segments;
  if (
    segments.length < 8 ||
    subscriptions?.toLowerCase() !== 'subscriptions' ||
    resourceGroups?.toLowerCase() !== 'resourcegroups' ||
    providers?.toLowerCase() !== 'providers' ||
    subscriptionId === undefined ||
    resourceGroup === undefined
  ) {
    return undefined;
  }
  return { subscriptionId, resourceGroup };
}

function lower(segments: readonly string[], index: number): string | undefined {
  return segments[index]?.toLowerCase();
}

function describe(problem: PathProblem, value: string): string {
  switch (problem) {
    case 'not-a-scale-set':
      return `providerID "${value}" names neither a scale set instance nor a virtual machine`;
    case 'bad-instance-id':
      return `providerID "${value}" has no decimal scale set instance id after /virtualMachines/`;
    case 'empty-segment':
      return `providerID "${value}" has an empty path segment`;
    case 'bad-shape':
      return `providerID "${value}" does not follow /subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Compute/…`;
  }
}

function failure(reason: ProviderIdFailureReason, message: string): ProviderIdParseResult {
  return { ok: false, reason, message };
}
