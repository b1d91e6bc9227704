/** Activities on the Compute Gallery: the pool's image definition, its versions, and their pruning. */
import { z } from 'zod';

import type {
  ImageDefinition,
  ImageVersion,
  ProvisioningState,
  ReplicationState,
} from '../../domain/compute.js';
import { isNotFound, isRefreshError, TerminalError } from '../../domain/errors.js';
import { RUN_TIMELINE_TAG_KEYS } from '../../domain/image-version.js';
import { definedOnly } from '../../domain/optional.js';
import type { PrunableImageVersion } from '../../domain/pruning.js';
import { selectVersionsToPrune } from '../../domain/pruning.js';
import { parseGalleryImageId } from '../../domain/resource-id.js';
import { defaultRollbackTarget } from '../../domain/rollback.js';
import { versionVerdictOf } from '../../domain/version-verdict.js';
import { newestUsableVersion } from '../image-facts.js';
import { checkFence } from '../pool-lease.js';
import { defineActivity } from './activity.js';
import {
  ClusterInput,
  DefinitionRefInput,
  FenceInput,
  ImageVersionInput,
  Name,
  NewNameInput,
  StorageAccountTypeInput,
  Tags,
  VersionRefInput,
} from './inputs.js';

export interface ImageVersionView {
  readonly exists: boolean;
  readonly id?: string;
  readonly provisioningState?: ProvisioningState;
  readonly excludeFromLatest?: boolean;
  readonly replicationState?: ReplicationState;
  /** While replicating: the least regional progress (0–100), when ARM reported it. */
  readonly replicationProgress?: number;
  /**
   * The version is absent because its image definition (or its gallery) is: deleted from under the run.
   * Nothing will ever appear there: a wait for it fails at once (ImageDefinitionMissing).
   */
  readonly definitionMissing?: true;
  /**
   * Its tags, when no target region carries an `excludeFromLatest` of its own: its publication is then
   * asked for without reading it again (requestImageVersionExclusion `knownTags`).
   */
  readonly tags?: Readonly<Record<string, string>>;
}

/** A version's state as the publication's (or hiding's) own answer gave it; empty when it gave none. */
export interface ImageVersionVisibilityView {
  readonly provisioningState?: ProvisioningState;
  readonly excludeFromLatest?: boolean;
}

export type ImageVersionRequestResult =
  { readonly kind: 'accepted' } | { readonly kind: 'zrs-unsupported'; readonly message: string };

const VersionInput = ClusterInput.extend({ ref: VersionRefInput });

/** Ensures the gallery and the definition; returns the names of the versions it already has. */
const ensureImageDefinition = defineActivity(
  'ensureImageDefinition',
  ClusterInput.extend({
    definition: DefinitionRefInput,
    location: z.string().min(1),
    spec: z.object({
      osType: z.enum(['Linux', 'Windows']),
      osState: z.enum(['Generalized', 'Specialized']),
      hyperVGeneration: z.enum(['V1', 'V2']),
      architecture: z.enum(['x64', 'Arm64']),
      securityType: z.string().optional(),
      identifier: z.object({ publisher: z.string(), offer: z.string(), sku: z.string() }),
      description: z.string().optional(),
      tags: Tags,
    }),
    galleryTags: Tags,
    /** The run just saw the definition missing (its versions could not be listed): it is not read again. */
    definitionAbsent: z.literal(true).optional(),
    /**
     * The run just listed the definition's versions under its lease (so it exists) and planned from a
     * model pointing at one of them (so the plan read the definition: the spec's generation is its own,
     * the model's osProfile needs it Generalized, a Windows pool is refused): nothing to read or create.
     */
    definitionPresent: z.literal(true).optional(),
  }),
  async (deps, input): Promise<void> => {
    // A check before a create, not a fence: a definition deleted since makes the version's request fail,
    // and the next run's listing sees it absent and creates it.
    if (input.definitionPresent === true && input.definitionAbsent !== true) return;
    const { compute } = await deps.cluster(input.cluster);
    // The definition is read first: once it exists (every run but the first), the gallery does too.
    let definition: ImageDefinition | undefined;
    let galleryAbsent = false;
    if (input.definitionAbsent !== true) {
      try {
        definition = await compute.gallery.getImageDefinition(input.definition);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        // ARM says ParentResourceNotFound when the gallery is missing as well: it is created unread.
        galleryAbsent = isRefreshError(error) && error.code === 'ParentResourceNotFound';
      }
    }
    if (definition === undefined) {
      await compute.gallery.ensure(input.definition, input.location, input.galleryTags, galleryAbsent);
      definition = await compute.gallery.ensureImageDefinition(
        input.definition,
        input.location,
        input.spec,
        true,
      );
    }
    const have = definition.spec;
    const want = input.spec;
    if (
      have.osType !== want.osType ||
      have.hyperVGeneration !== want.hyperVGeneration ||
      have.osState !== want.osState
    ) {
      throw new TerminalError(
        'ImageDefinitionMismatch',
        `ensuring image definition ${input.definition.imageName}: it exists with osType ${have.osType}, ` +
          `hyperVGeneration ${have.hyperVGeneration}, osState ${have.osState}, but the scale set needs ` +
          `${want.osType}/${want.hyperVGeneration}/${want.osState}; these are immutable`,
        { advice: 'delete the definition or configure another image definition name' },
      );
    }
  },
);

const requestImageVersion = defineActivity(
  'requestImageVersion',
  VersionInput.extend({
    location: Name,
    /** A snapshot's or a managed disk's id. */
    sourceId: z.string().min(1),
    storageAccountType: StorageAccountTypeInput,
    extraRegions: z.array(Name),
    tags: Tags,
    newName: NewNameInput,
    /** Building a version is fenced: a run that lost its lease makes none. */
    fence: FenceInput,
  }),
  async (deps, input): Promise<ImageVersionRequestResult> => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(kube, input.fence, `building image version ${input.ref.versionName}`, deps.now());
    try {
      await compute.imageVersions.request({
        ref: input.ref,
        location: input.location,
        sourceId: input.sourceId,
        storageAccountType: input.storageAccountType,
        extraRegions: input.extraRegions,
        excludeFromLatest: true,
        tags: input.tags,
        ...(input.newName === true ? { newName: true } : {}),
      });
      return { kind: 'accepted' };
    } catch (error) {
      // Not a failure of the step: the orchestrator falls back to the next storage type.
      if (isRefreshError(error) && error.code === 'ZrsUnsupported') {
        return { kind: 'zrs-unsupported', message: error.message };
      }
      throw error;
    }
  },
);

const readImageVersion = defineActivity(
  'readImageVersion',
  VersionInput,
  async (deps, input): Promise<ImageVersionView> => {
    const { compute } = await deps.cluster(input.cluster);
    try {
      const version = await compute.imageVersions.get(input.ref);
      return {
        exists: true,
        id: version.id,
        provisioningState: version.provisioningState,
        excludeFromLatest: version.excludeFromLatest,
        replicationState: version.replicationState,
        ...(version.replicationProgress === undefined
          ? {}
          : { replicationProgress: version.replicationProgress }),
        ...(version.regionalExclusion === false ? { tags: { ...version.tags } } : {}),
      };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // Absent: is its definition (or gallery) still there? Without it the version can never appear.
      const { versionName: _name, ...definition } = input.ref;
      const definitionMissing = await compute.gallery.getImageDefinition(definition).then(
        () => false,
        (lookup: unknown) => {
          if (isNotFound(lookup)) return true;
          throw lookup;
        },
      );
      return definitionMissing ? { exists: false, definitionMissing: true } : { exists: false };
    }
  },
);

const requestImageVersionExclusion = defineActivity(
  'requestImageVersionExclusion',
  VersionInput.extend({
    excludeFromLatest: z.boolean(),
    /** Publication time, recorded in the version's tags with the change (pool-history.ts). */
    inLatestAt: z.string().min(1).optional(),
    /** The version's tags as the run's last read gave them (ImageVersionView `tags`): not read again. */
    knownTags: Tags.optional(),
    /** Publishing or hiding is fenced: a run that lost its lease changes no version's visibility. */
    fence: FenceInput,
  }),
  async (deps, input) => {
    const { compute, kube } = await deps.cluster(input.cluster);
    await checkFence(
      kube,
      input.fence,
      `${input.excludeFromLatest ? 'hiding' : 'publishing'} image version ${input.ref.versionName}`,
      deps.now(),
    );
    const answered = await compute.imageVersions.requestExclusion(
      input.ref,
      input.excludeFromLatest,
      input.inLatestAt === undefined ? {} : { [RUN_TIMELINE_TAG_KEYS.inLatestAt]: input.inLatestAt },
      input.knownTags,
    );
    // What ARM answered: a wait for the change need not read the version when it is already done.
    const view: ImageVersionVisibilityView =
      answered === undefined
        ? {}
        : { provisioningState: answered.provisioningState, excludeFromLatest: answered.excludeFromLatest };
    return view;
  },
);

const requestImageVersionDeletion = defineActivity(
  'requestImageVersionDeletion',
  VersionInput,
  async (deps, input) => {
    const { compute } = await deps.cluster(input.cluster);
    await compute.imageVersions.requestDeletion(input.ref);
  },
);

/** What the pruning did, and the versions it left: the generations step labels with them (no second list). */
interface PruneOutcome {
  readonly pruned: readonly string[];
  readonly versions: readonly ImageVersion[];
}

/** Deletes the versions beyond the history (never the pinned one, never one in flight). */
const pruneImageVersions = defineActivity(
  'pruneImageVersions',
  ClusterInput.extend({
    definition: DefinitionRefInput,
    history: z.number().int().min(1).max(50),
    keep: z.array(Name),
    modelImageId: z.string().min(1),
    /** The versions as the run listed them moments ago under the same lease: not listed again. */
    listed: z.array(ImageVersionInput).optional(),
  }),
  async (deps, input): Promise<PruneOutcome> => {
    const { compute } = await deps.cluster(input.cluster);
    const versions = input.listed ?? (await compute.imageVersions.list(input.definition));
    const pinnedVersion = parseGalleryImageId(input.modelImageId)?.versionName;
    // The one-step undo: what `rollback` would go back to from the version new nodes get now.
    const current = pinnedVersion ?? newestUsableVersion(versions)?.ref.versionName;
    const rollbackTarget = defaultRollbackTarget(
      versions.map((version) => ({
        name: version.ref.versionName,
        id: version.id,
        provisioningState: version.provisioningState,
        excludeFromLatest: version.excludeFromLatest,
        tags: version.tags,
      })),
      current,
    )?.name;
    const plan = selectVersionsToPrune({
      versions: versions.map(toPrunable),
      history: input.history,
      pinnedVersion,
      protectedVersions: input.keep,
      ...definedOnly({ rollbackTarget }),
    });
    for (const decision of plan.delete) {
      await compute.imageVersions.requestDeletion({ ...input.definition, versionName: decision.name });
    }
    const pruned = plan.delete.map((decision) => decision.name);
    // Those asked to go would read back as Deleting: neither usable nor current, as if absent.
    return { pruned, versions: versions.filter((version) => !pruned.includes(version.ref.versionName)) };
  },
);

export const IMAGE_ACTIVITIES = {
  ensureImageDefinition,
  requestImageVersion,
  readImageVersion,
  requestImageVersionExclusion,
  requestImageVersionDeletion,
  pruneImageVersions,
} as const;

function toPrunable(version: ImageVersion): PrunableImageVersion {
  const state = version.provisioningState;
  const known = ['Creating', 'Updating', 'Failed', 'Succeeded', 'Deleting', 'Migrating'] as const;
  const provisioningState = (known as readonly string[]).includes(state)
    ? (state as PrunableImageVersion['provisioningState'])
    : 'Updating'; // unknown states are treated as in flight: never deleted
  const verdict = versionVerdictOf(version.tags).kind;
  return {
    name: version.ref.versionName,
    provisioningState,
    excludeFromLatest: version.excludeFromLatest,
    ...definedOnly({ publishedAt: version.publishedAt }),
    ...(verdict === 'none' ? {} : { verdict }),
  };
}
