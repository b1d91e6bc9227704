/**
 * The ComputeGateway over @azure/arm-compute 25.x: scale sets (Uniform and Flexible), instances,
 * snapshots and Azure Compute Gallery, one SDK client per subscription. Long-running operations are
 * only submitted (`beginX` resolves once ARM accepted the request); callers poll with the `get*` methods.
 */
import {
  ComputeManagementClient,
  type GalleryImage,
  type GalleryImageVersion,
  type ImageReference as ArmImageReference,
  type TargetRegion,
  type VirtualMachineScaleSet,
} from '@azure/arm-compute';
import type { TokenCredential } from '@azure/core-auth';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';

import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
  ImageVersion,
  ImageVersionRef,
  PowerState,
  ScaleSetExtension,
  ScaleSetInstance,
  Snapshot,
} from '../../domain/compute.js';
import {
  ignoreNotFound,
  isTransient,
  NotFoundError,
  TerminalError,
  TransientError,
} from '../../domain/errors.js';
import { describeScaleSet, scaleSetKey, type ScaleSetRef } from '../../domain/resource-id.js';
import type { OrchestrationMode, ScaleSet } from '../../domain/scale-set.js';
import type {
  ComputeGateway,
  ImageVersionRequest,
  ScaleSetImageUpdate,
  SnapshotRequest,
} from '../../ports/compute-gateway.js';
import { retryAfterFromHeaders, toRefreshError, withArmErrors } from './errors.js';
import {
  type ImageFacts,
  imageFactsFromGalleryImage,
  imageFactsFromMarketplaceImage,
  isMemberOf,
  toExtension,
  toFlexibleInstance,
  toImageDefinition,
  toImageReference,
  toImageVersion,
  toPowerState,
  toScaleSet,
  toSnapshot,
  toUniformInstance,
} from './to-domain.js';

export interface ArmRetryOptions {
  /** SDK retries of 408/429/5xx/connection errors inside one call (default 3). */
  readonly maxRetries?: number;
  /** Base of the SDK's exponential backoff (default 1000 ms). */
  readonly retryDelayInMs?: number;
  readonly maxRetryDelayInMs?: number;
  /**
   * Longest `Retry-After` the SDK may sleep through inside one call (default 10 s). A longer one fails
   * the call at once with a TransientError carrying `retryAfterMs`, so a durable timer does the waiting
   * instead of a blocked activity.
   */
  readonly maxInlineThrottleWaitMs?: number;
}

export interface ArmComputeGatewayOptions {
  readonly credential: TokenCredential;
  /** Subscriptions this gateway may touch; refs naming any other are refused. Omitted: any. */
  readonly subscriptionIds?: readonly string[];
  /** ARM base URL (https only), e.g. the simulator's; default `https://management.azure.com`. */
  readonly endpoint?: string;
  /** PEM of the CA that signs the endpoint's certificate (the simulator's private CA). Replaces the system CAs. */
  readonly ca?: string;
  readonly retry?: ArmRetryOptions;
  /** Poll interval for the few operations this gateway waits for (gallery, image definition). */
  readonly pollIntervalMs?: number;
  /** Per-request timeout (default 60 s): a hung connection must not hold an activity until its own timeout. */
  readonly requestTimeoutMs?: number;
}

/** What is explicitly nulled in the image reference: marketplace fields stay otherwise (PATCH merges). */
const MARKETPLACE_FIELDS_NULLED = { publisher: null, offer: null, sku: null, version: null } as const;

const DEFAULT_MAX_INLINE_THROTTLE_WAIT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Snapshot and image version deletions take seconds to a minute (research/azure.md, kamino's log). */
const DELETING_RETRY_AFTER_MS = 15_000;
const STOPPED_OR_STOPPING: ReadonlySet<PowerState> = new Set([
  'stopping',
  'stopped',
  'deallocating',
  'deallocated',
]);
const RUNNING_OR_STARTING: ReadonlySet<PowerState> = new Set(['starting', 'running']);

export class ArmComputeGateway implements ComputeGateway {
  readonly #options: ArmComputeGatewayOptions;
  readonly #allowed: ReadonlySet<string> | undefined;
  readonly #clients = new Map<string, ComputeManagementClient>();
  /** Orchestration mode is fixed at creation, so it is safe to remember per scale set. */
  readonly #modes = new Map<string, OrchestrationMode>();

  constructor(options: ArmComputeGatewayOptions) {
    if (options.endpoint !== undefined) {
      let protocol: string;
      try {
        protocol = new URL(options.endpoint).protocol;
      } catch {
        throw new TerminalError(
          'InvalidEndpoint',
          `configuring the compute gateway: "${options.endpoint}" is not a URL`,
        );
      }
      if (protocol !== 'https:') {
        // The SDK would refuse to send the bearer token anyway; fail at configuration, not first call.
        throw new TerminalError(
          'InsecureEndpoint',
          `configuring the compute gateway: the ARM endpoint must use https (got ${protocol})`,
        );
      }
    }
    this.#options = options;
    this.#allowed =
      options.subscriptionIds === undefined || options.subscriptionIds.length === 0
        ? undefined
        : new Set(options.subscriptionIds.map((id) => id.toLowerCase()));
  }

  async getScaleSet(ref: ScaleSetRef): Promise<ScaleSet> {
    const action = `reading scale set ${describeScaleSet(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    const model = await withArmErrors(action, () =>
      client.virtualMachineScaleSets.get(ref.resourceGroup, ref.name),
    );
    const facts = await this.#imageFacts(model, ref, action);
    const scaleSet = toScaleSet(model, ref, facts);
    this.#modes.set(scaleSetKey(ref), scaleSet.orchestrationMode);
    return scaleSet;
  }

  async getInstance(scaleSetOrRef: ScaleSetRef, instanceId: string): Promise<ScaleSetInstance> {
    const action = `reading instance ${instanceId} of scale set ${describeScaleSet(scaleSetOrRef)}`;
    const client = this.#client(scaleSetOrRef.subscriptionId, action);
    const mode = await this.#orchestrationMode(scaleSetOrRef, action);
    // A full ScaleSet is accepted (it saves a read) but only the ref travels on with the instance.
    const { subscriptionId, resourceGroup, name } = scaleSetOrRef;
    const scaleSet: ScaleSetRef = { subscriptionId, resourceGroup, name };
    if (mode === 'Uniform') {
      const vm = await withArmErrors(action, () =>
        client.virtualMachineScaleSetVMs.get(scaleSet.resourceGroup, scaleSet.name, instanceId, {
          expand: 'instanceView',
        }),
      );
      return toUniformInstance(scaleSet, vm);
    }
    const vm = await withArmErrors(action, () =>
      client.virtualMachines.get(scaleSet.resourceGroup, instanceId, { expand: 'instanceView' }),
    );
    if (!isMemberOf(vm, scaleSet)) {
      // The VM exists but is not this scale set's instance: for the caller, the instance is missing.
      throw new NotFoundError(
        'InstanceNotFound',
        `${action}: virtual machine ${instanceId} is not a member of the scale set (it belongs to ${vm.virtualMachineScaleSet?.id ?? 'no scale set'})`,
      );
    }
    return toFlexibleInstance(scaleSet, vm);
  }

  async requestPowerOff(instance: ScaleSetInstance): Promise<void> {
    const action = `requesting power off of instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    const client = this.#client(instance.scaleSet.subscriptionId, action);
    const current = await this.#currentPowerState(instance, action);
    if (STOPPED_OR_STOPPING.has(current)) {
      return;
    }
    const { resourceGroup, name } = instance.scaleSet;
    await withArmErrors(action, async () => {
      // skipShutdown false: a graceful ACPI shutdown, so the file systems are clean for the snapshot.
      if (isUniform(instance)) {
        await client.virtualMachineScaleSetVMs.beginPowerOff(resourceGroup, name, instance.instanceId, {
          skipShutdown: false,
        });
      } else {
        await client.virtualMachines.beginPowerOff(vmResourceGroup(instance), instance.instanceId, {
          skipShutdown: false,
        });
      }
    });
  }

  async requestStart(instance: ScaleSetInstance): Promise<void> {
    const action = `requesting start of instance ${instance.instanceId} of scale set ${describeScaleSet(instance.scaleSet)}`;
    const client = this.#client(instance.scaleSet.subscriptionId, action);
    const current = await this.#currentPowerState(instance, action);
    if (RUNNING_OR_STARTING.has(current)) {
      return;
    }
    const { resourceGroup, name } = instance.scaleSet;
    await withArmErrors(action, async () => {
      if (isUniform(instance)) {
        await client.virtualMachineScaleSetVMs.beginStart(resourceGroup, name, instance.instanceId);
      } else {
        await client.virtualMachines.beginStart(vmResourceGroup(instance), instance.instanceId);
      }
    });
  }

  async getSnapshot(subscriptionId: string, resourceGroup: string, name: string): Promise<Snapshot> {
    const action = `reading snapshot ${resourceGroup}/${name}`;
    const client = this.#client(subscriptionId, action);
    const snapshot = await withArmErrors(action, () => client.snapshots.get(resourceGroup, name));
    return toSnapshot(snapshot, resourceGroup);
  }

  async requestSnapshot(request: SnapshotRequest): Promise<void> {
    const action = `requesting snapshot ${request.resourceGroup}/${request.name}`;
    const client = this.#client(request.subscriptionId, action);
    const existing = await withArmErrors(action, () =>
      client.snapshots.get(request.resourceGroup, request.name),
    ).catch(ignoreNotFound);
    if (existing !== undefined) {
      throwIfDeleting(existing.provisioningState, action, 'snapshot');
      const source = existing.creationData?.sourceResourceId;
      if (source !== undefined && source.toLowerCase() !== request.sourceDiskId.toLowerCase()) {
        throw new TerminalError(
          'SnapshotNameTaken',
          `${action}: a snapshot with this name already exists, copied from ${source}, not ${request.sourceDiskId}`,
        );
      }
      return;
    }
    await withArmErrors(action, () =>
      client.snapshots.beginCreateOrUpdate(request.resourceGroup, request.name, {
        location: request.location,
        tags: { ...request.tags },
        incremental: request.incremental,
        creationData: { createOption: 'Copy', sourceResourceId: request.sourceDiskId },
      }),
    );
  }

  async requestSnapshotDeletion(subscriptionId: string, resourceGroup: string, name: string): Promise<void> {
    const action = `requesting deletion of snapshot ${resourceGroup}/${name}`;
    const client = this.#client(subscriptionId, action);
    await withArmErrors(action, () => client.snapshots.beginDelete(resourceGroup, name)).catch(
      ignoreNotFound,
    );
  }

  async ensureGallery(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
  ): Promise<void> {
    const action = `ensuring gallery ${ref.resourceGroup}/${ref.galleryName}`;
    const client = this.#client(ref.subscriptionId, action);
    const existing = await withArmErrors(action, () =>
      client.galleries.get(ref.resourceGroup, ref.galleryName),
    ).catch(ignoreNotFound);
    if (existing !== undefined) {
      return;
    }
    await withArmErrors(action, () =>
      client.galleries.beginCreateOrUpdateAndWait(
        ref.resourceGroup,
        ref.galleryName,
        { location, tags: { ...tags } },
        this.#pollOptions(),
      ),
    );
  }

  async getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition> {
    const action = `reading image definition ${describeDefinition(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    const image = await withArmErrors(action, () =>
      client.galleryImages.get(ref.resourceGroup, ref.galleryName, ref.imageName),
    );
    return toImageDefinition(image, ref);
  }

  async ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
  ): Promise<ImageDefinition> {
    const action = `ensuring image definition ${describeDefinition(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    const existing = await withArmErrors(action, () =>
      client.galleryImages.get(ref.resourceGroup, ref.galleryName, ref.imageName),
    ).catch(ignoreNotFound);
    if (existing !== undefined) {
      // OS type, state, generation and identifier are immutable: a PUT over them fails, and a PUT of
      // the mutable rest would silently rewrite someone's definition. The caller compares the spec.
      return toImageDefinition(existing, ref);
    }
    const body: GalleryImage = {
      location,
      tags: { ...spec.tags },
      osType: spec.osType,
      osState: spec.osState,
      hyperVGeneration: spec.hyperVGeneration,
      architecture: spec.architecture,
      identifier: { ...spec.identifier },
      ...(spec.description === undefined ? {} : { description: spec.description }),
      ...(spec.securityType === undefined
        ? {}
        : { features: [{ name: 'SecurityType', value: spec.securityType }] }),
    };
    const created = await withArmErrors(action, () =>
      client.galleryImages.beginCreateOrUpdateAndWait(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        body,
        this.#pollOptions(),
      ),
    );
    return toImageDefinition(created, ref);
  }

  async listImageVersions(ref: ImageDefinitionRef): Promise<ImageVersion[]> {
    const action = `listing image versions of ${describeDefinition(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    return withArmErrors(action, async () => {
      const versions: ImageVersion[] = [];
      for await (const version of client.galleryImageVersions.listByGalleryImage(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
      )) {
        if (version.name !== undefined) {
          versions.push(toImageVersion(version, { ...ref, versionName: version.name }));
        }
      }
      return versions;
    });
  }

  async getImageVersion(ref: ImageVersionRef): Promise<ImageVersion> {
    const action = `reading image version ${describeVersion(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    const version = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName, {
        expand: 'ReplicationStatus',
      }),
    );
    return toImageVersion(version, ref);
  }

  async requestImageVersion(request: ImageVersionRequest): Promise<void> {
    const { ref } = request;
    const action = `requesting image version ${describeVersion(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    const existing = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName),
    ).catch(ignoreNotFound);
    if (existing !== undefined) {
      // A Failed version is left as is: the caller sees it with getImageVersion and deletes it; one
      // still being deleted (that retry under the same name) must be waited out, not mistaken for done.
      throwIfDeleting(existing.provisioningState, action, 'image version');
      const source = existing.storageProfile?.osDiskImage?.source?.id ?? existing.storageProfile?.source?.id;
      if (source !== undefined && source.toLowerCase() !== request.snapshotId.toLowerCase()) {
        throw new TerminalError(
          'ImageVersionNameTaken',
          `${action}: the version already exists with source ${source}, not ${request.snapshotId}`,
        );
      }
      return;
    }
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginCreateOrUpdate(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
        imageVersionBody(request),
      ),
    );
  }

  async requestImageVersionExclusion(ref: ImageVersionRef, excludeFromLatest: boolean): Promise<void> {
    const action = `requesting ${excludeFromLatest ? 'exclusion from' : 'inclusion in'} latest of image version ${describeVersion(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    const version = await withArmErrors(action, () =>
      client.galleryImageVersions.get(ref.resourceGroup, ref.galleryName, ref.imageName, ref.versionName),
    );
    const regions = version.publishingProfile?.targetRegions ?? [];
    const settled =
      (version.publishingProfile?.excludeFromLatest === true) === excludeFromLatest &&
      regions.every(
        (region) => region.excludeFromLatest === undefined || region.excludeFromLatest === excludeFromLatest,
      );
    if (settled) {
      return;
    }
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginUpdate(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
        {
          publishingProfile: {
            excludeFromLatest,
            // A regional flag overrides the global one; keep both saying the same thing.
            ...(regions.length === 0
              ? {}
              : { targetRegions: regions.map((region): TargetRegion => ({ ...region, excludeFromLatest })) }),
          },
        },
      ),
    );
  }

  async requestImageVersionDeletion(ref: ImageVersionRef): Promise<void> {
    const action = `requesting deletion of image version ${describeVersion(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    await withArmErrors(action, () =>
      client.galleryImageVersions.beginDelete(
        ref.resourceGroup,
        ref.galleryName,
        ref.imageName,
        ref.versionName,
      ),
    ).catch(ignoreNotFound);
  }

  async requestScaleSetImageUpdate(ref: ScaleSetRef, update: ScaleSetImageUpdate): Promise<void> {
    const action = `requesting image update of scale set ${describeScaleSet(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    // PATCH merges objects, so a marketplace publisher/offer/sku/version left in the model would sit
    // next to the new id and ARM would refuse the ambiguous reference: null them explicitly. The SDK's
    // serializer copies these fields as given, and JSON keeps nulls (tested on the wire).
    const imageReference = {
      id: update.imageId,
      ...MARKETPLACE_FIELDS_NULLED,
    } as unknown as ArmImageReference;
    await withArmErrors(action, () =>
      client.virtualMachineScaleSets.beginUpdate(ref.resourceGroup, ref.name, {
        virtualMachineProfile: {
          storageProfile: { imageReference },
          // customData is write-only and replaced as a whole; it only applies to new or reimaged instances.
          osProfile: { customData: update.customDataBase64 },
        },
      }),
    );
  }

  async listExtensions(ref: ScaleSetRef): Promise<ScaleSetExtension[]> {
    const action = `listing extensions of scale set ${describeScaleSet(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    return withArmErrors(action, async () => {
      const extensions: ScaleSetExtension[] = [];
      for await (const extension of client.virtualMachineScaleSetExtensions.list(
        ref.resourceGroup,
        ref.name,
      )) {
        extensions.push(toExtension(extension));
      }
      return extensions;
    });
  }

  async requestExtensionDeletion(ref: ScaleSetRef, extensionName: string): Promise<void> {
    const action = `requesting deletion of extension ${extensionName} of scale set ${describeScaleSet(ref)}`;
    const client = this.#client(ref.subscriptionId, action);
    await withArmErrors(action, () =>
      client.virtualMachineScaleSetExtensions.beginDelete(ref.resourceGroup, ref.name, extensionName),
    ).catch(ignoreNotFound);
  }

  #client(subscriptionId: string, action: string): ComputeManagementClient {
    const key = subscriptionId.toLowerCase();
    if (this.#allowed !== undefined && !this.#allowed.has(key)) {
      throw new TerminalError(
        'SubscriptionNotConfigured',
        `${action}: subscription ${subscriptionId} is not among the configured subscriptions`,
      );
    }
    let client = this.#clients.get(key);
    if (client === undefined) {
      client = this.#createClient(subscriptionId);
      this.#clients.set(key, client);
    }
    return client;
  }

  #createClient(subscriptionId: string): ComputeManagementClient {
    const { endpoint, ca, retry } = this.#options;
    return new ComputeManagementClient(this.#options.credential, subscriptionId, {
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(ca === undefined ? {} : { tlsOptions: { ca } }),
      retryOptions: {
        ...(retry?.maxRetries === undefined ? {} : { maxRetries: retry.maxRetries }),
        ...(retry?.retryDelayInMs === undefined ? {} : { retryDelayInMs: retry.retryDelayInMs }),
        ...(retry?.maxRetryDelayInMs === undefined ? {} : { maxRetryDelayInMs: retry.maxRetryDelayInMs }),
      },
      additionalPolicies: [
        {
          policy: requestTimeoutPolicy(this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
          position: 'perRetry',
        },
        {
          policy: throttleWaitCapPolicy(
            retry?.maxInlineThrottleWaitMs ?? DEFAULT_MAX_INLINE_THROTTLE_WAIT_MS,
          ),
          position: 'perRetry',
        },
      ],
      userAgentOptions: { userAgentPrefix: 'vmss-prototype' },
    });
  }

  #pollOptions(): { updateIntervalInMs?: number } {
    const interval = this.#options.pollIntervalMs;
    return interval === undefined ? {} : { updateIntervalInMs: interval };
  }

  async #orchestrationMode(ref: ScaleSetRef, action: string): Promise<OrchestrationMode> {
    if (isScaleSet(ref)) {
      return ref.orchestrationMode;
    }
    const known = this.#modes.get(scaleSetKey(ref));
    if (known !== undefined) {
      return known;
    }
    const client = this.#client(ref.subscriptionId, action);
    const model = await withArmErrors(action, () =>
      client.virtualMachineScaleSets.get(ref.resourceGroup, ref.name),
    );
    const mode = toScaleSet(model, ref).orchestrationMode;
    this.#modes.set(scaleSetKey(ref), mode);
    return mode;
  }

  async #currentPowerState(instance: ScaleSetInstance, action: string): Promise<PowerState> {
    const client = this.#client(instance.scaleSet.subscriptionId, action);
    const { resourceGroup, name } = instance.scaleSet;
    const view = await withArmErrors(action, () =>
      isUniform(instance)
        ? client.virtualMachineScaleSetVMs.getInstanceView(resourceGroup, name, instance.instanceId)
        : client.virtualMachines.instanceView(vmResourceGroup(instance), instance.instanceId),
    );
    return toPowerState(view.statuses);
  }

  /**
   * Hyper-V generation and architecture live on the image, not the scale set model: read them from the
   * gallery image definition or the marketplace image. Best effort: an image we cannot read (another
   * tenant's gallery, a retired marketplace version) leaves them unknown; throttling still propagates.
   */
  async #imageFacts(model: VirtualMachineScaleSet, ref: ScaleSetRef, action: string): Promise<ImageFacts> {
    const reference = toImageReference(model.virtualMachineProfile?.storageProfile?.imageReference);
    try {
      if (reference?.kind === 'gallery') {
        const image = parseGalleryImageId(reference.id);
        if (
          image === undefined ||
          (this.#allowed !== undefined && !this.#allowed.has(image.subscriptionId.toLowerCase()))
        ) {
          return {};
        }
        const client = this.#client(image.subscriptionId, action);
        const definition = await client.galleryImages.get(
          image.resourceGroup,
          image.galleryName,
          image.imageName,
        );
        return imageFactsFromGalleryImage(definition);
      }
      // Marketplace image metadata needs its own read permission and one more request: only ask when
      // the model does not already imply the generation (Trusted Launch and confidential VMs are gen 2).
      if (reference?.kind === 'marketplace' && toScaleSet(model, ref).hyperVGeneration === undefined) {
        const client = this.#client(ref.subscriptionId, action);
        const { publisher, offer, sku } = reference;
        let version = reference.version;
        if (version.toLowerCase() === 'latest') {
          // Generation and architecture are properties of the SKU; any published version tells them.
          const [newest] = await client.virtualMachineImages.list(model.location, publisher, offer, sku, {
            top: 1,
            orderby: 'name desc',
          });
          if (newest === undefined) {
            return {};
          }
          version = newest.name;
        }
        const image = await client.virtualMachineImages.get(model.location, publisher, offer, sku, version);
        return imageFactsFromMarketplaceImage(image);
      }
      return {};
    } catch (error: unknown) {
      const mapped = toRefreshError(error, `${action}: reading its image`);
      if (isTransient(mapped)) {
        throw mapped;
      }
      return {};
    }
  }
}

function imageVersionBody(request: ImageVersionRequest): GalleryImageVersion {
  const regions = [request.location, ...request.extraRegions].filter(
    (region, index, all) =>
      all.findIndex((other) => normaliseRegion(other) === normaliseRegion(region)) === index,
  );
  return {
    location: request.location,
    tags: { ...request.tags },
    storageProfile: { osDiskImage: { source: { id: request.snapshotId } } },
    publishingProfile: {
      // The version's own region must be a target; the regional storage type must be given per region
      // or ARM falls back to Standard_LRS there.
      targetRegions: regions.map((name) => ({
        name,
        regionalReplicaCount: 1,
        storageAccountType: request.storageAccountType,
      })),
      replicaCount: 1,
      storageAccountType: request.storageAccountType,
      excludeFromLatest: request.excludeFromLatest,
    },
  };
}

/**
 * A throttling answer whose `Retry-After` exceeds `maxWaitMs` ends the call with a TransientError
 * (not a RestError, so the SDK's retry policy rethrows it instead of sleeping). Placed per retry: it
 * sees every attempt's response before the retry policy does.
 */
export function throttleWaitCapPolicy(maxWaitMs: number): PipelinePolicy {
  return {
    name: 'vmssPrototypeThrottleWaitCap',
    async sendRequest(request, next) {
      const response = await next(request);
      if (response.status === 429 || response.status === 503) {
        const waitMs = retryAfterFromHeaders((name) => response.headers.get(name), Date.now());
        if (waitMs !== undefined && waitMs > maxWaitMs) {
          const code = response.status === 429 ? 'ArmThrottled' : 'ServiceUnavailable';
          throw new TransientError(
            code,
            `Azure Resource Manager asked to retry in ${Math.ceil(waitMs / 1000)} s (HTTP ${response.status})`,
            { retryAfterMs: waitMs },
          );
        }
      }
      return response;
    },
  };
}

/** Sets a timeout on every attempt that has none (the SDK sets none by default). */
export function requestTimeoutPolicy(timeoutMs: number): PipelinePolicy {
  return {
    name: 'vmssPrototypeRequestTimeout',
    sendRequest(request, next) {
      if (request.timeout === 0) {
        request.timeout = timeoutMs;
      }
      return next(request);
    },
  };
}

function isUniform(instance: ScaleSetInstance): boolean {
  return /\/virtualMachineScaleSets\/[^/]+\/virtualMachines\//i.test(instance.resourceId);
}

/** Deletion is asynchronous: a request for the same name must wait until the old resource is gone. */
function throwIfDeleting(provisioningState: string | undefined, action: string, what: string): void {
  if (provisioningState?.toLowerCase() === 'deleting') {
    throw new TransientError(
      'ResourceDeleting',
      `${action}: the previous ${what} of this name is still being deleted`,
      { retryAfterMs: DELETING_RETRY_AFTER_MS },
    );
  }
}

/** A Flexible member's own resource group (taken from its id: it need not be the scale set's). */
function vmResourceGroup(instance: ScaleSetInstance): string {
  return /\/resourceGroups\/([^/]+)\//i.exec(instance.resourceId)?.[1] ?? instance.scaleSet.resourceGroup;
}

function isScaleSet(ref: ScaleSetRef): ref is ScaleSet {
  const mode = (ref as Partial<ScaleSet>).orchestrationMode;
  return mode === 'Uniform' || mode === 'Flexible';
}

interface GalleryImageLocation {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly galleryName: string;
  readonly imageName: string;
}

/** `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/i[/versions/v]`. */
function parseGalleryImageId(id: string): GalleryImageLocation | undefined {
  const match =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/galleries\/([^/]+)\/images\/([^/]+)(?:\/versions\/[^/]+)?\/?$/i.exec(
      id,
    );
  if (match === null) {
    return undefined;
  }
  const [, subscriptionId, resourceGroup, galleryName, imageName] = match;
  return subscriptionId === undefined ||
    resourceGroup === undefined ||
    galleryName === undefined ||
    imageName === undefined
    ? undefined
    : { subscriptionId, resourceGroup, galleryName, imageName };
}

function normaliseRegion(region: string): string {
  return region.replaceAll(' ', '').toLowerCase();
}

function describeDefinition(ref: ImageDefinitionRef): string {
  return `${ref.resourceGroup}/${ref.galleryName}/${ref.imageName}`;
}

function describeVersion(ref: ImageVersionRef): string {
  return `${describeDefinition(ref)}/${ref.versionName}`;
}
