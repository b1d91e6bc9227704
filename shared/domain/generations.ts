/**
 * Node generations: every node of a managed pool carries the image version its machine was
 * built from, as a label, and — when a pool asks for it — nodes more than K generations behind the
 * version new nodes get carry a taint. Which version an instance was built from, how many generations
 * behind that is, and which label and taint changes bring the nodes there. Pure.
 */
import { compareImageVersions, parseImageVersion } from './image-version.js';
import { definedOnly } from './optional.js';
import { parseGalleryImageId } from './resource-id.js';

export const IMAGE_VERSION_LABEL = 'vmss-prototype.io/image-version';
export const OLDER_GENERATION_TAINT = 'vmss-prototype.io/older-generation';
/** The label value of a node whose machine did not come from one of the pool's versions (marketplace…). */
export const UNKNOWN_GENERATION = 'unknown';

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface GenerationPolicy {
  /** Nodes more than this many generations behind get the taint; undefined: no taint (and any is removed). */
  readonly maxGenerationsBehind?: number;
  readonly taintEffect: TaintEffect;
}

export const DEFAULT_GENERATION_POLICY: GenerationPolicy = { taintEffect: 'PreferNoSchedule' };

/** A label value: ≤ 63 characters of `[A-Za-z0-9._-]`, alphanumeric at both ends. */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)$/;

/**
 * The version an instance was built from, as a label value: the version its model names (pinned), the
 * version ARM resolved `latest` to (`exactVersion`), or the gallery image version its OS disk was created
 * from; `unknown` for anything else (a marketplace image, another tool's image).
 */
export function instanceGeneration(input: {
  readonly imageId?: string;
  readonly exactVersion?: string;
  /** `creationData.galleryImageReference.id` of the instance's OS disk, when read. */
  readonly diskImageVersionId?: string;
  /** The pool's image definition id: versions of other definitions are not this pool's generations. */
  readonly definitionId: string;
}): string {
  const definition = input.definitionId.toLowerCase();
  const ofDefinition = (id: string | undefined): string | undefined => {
    if (id === undefined) return undefined;
    const parsed = parseGalleryImageId(id);
    if (parsed?.versionName === undefined) return undefined;
    return id.toLowerCase().startsWith(`${definition}/versions/`) ? parsed.versionName : undefined;
  };
  const named = ofDefinition(input.imageId);
  const exact =
    input.imageId !== undefined && input.imageId.toLowerCase() === definition
      ? input.exactVersion
      : undefined;
  const version = named ?? exact ?? ofDefinition(input.diskImageVersionId);
  return version !== undefined && LABEL_VALUE.test(version) ? version : UNKNOWN_GENERATION;
}

/**
 * How many versions newer than the node's, up to and including the current one, the pool has retained:
 * 0 for a node on the current version (or a newer one after a rollback); an `unknown` node is behind
 * every retained version up to the current one. Names order the versions, so a pruned version still places.
 */
export function generationsBehind(
  nodeVersion: string,
  currentVersion: string,
  retainedVersions: readonly string[],
): number {
  if (parseImageVersion(currentVersion) === undefined) return 0;
  const known = nodeVersion !== UNKNOWN_GENERATION && parseImageVersion(nodeVersion) !== undefined;
  return retainedVersions.filter(
    (name) =>
      parseImageVersion(name) !== undefined &&
      compareImageVersions(name, currentVersion) <= 0 &&
      (!known || compareImageVersions(name, nodeVersion) > 0),
  ).length;
}

export interface GenerationNode {
  readonly name: string;
  /** The node's image-version label now, if any. */
  readonly label?: string;
  /** The effect of our taint on the node now, if it has it. */
  readonly taint?: TaintEffect;
  /** The version its machine was built from (instanceGeneration). */
  readonly generation: string;
}

export interface GenerationChange {
  readonly node: string;
  /** The label value to write, when it differs. */
  readonly label?: string;
  /** Add (or change the effect of) the taint, or remove it. */
  readonly taint?: { readonly action: 'add'; readonly effect: TaintEffect } | { readonly action: 'remove' };
  readonly behind: number;
}

/**
 * The label and taint writes that bring every node of a pool up to date; nodes already right are not
 * listed. Without a current version of ours (marketplace model), nothing is behind and no taint applies.
 */
export function planGenerations(input: {
  readonly nodes: readonly GenerationNode[];
  readonly currentVersion?: string;
  readonly retainedVersions: readonly string[];
  readonly policy: GenerationPolicy;
}): GenerationChange[] {
  const changes: GenerationChange[] = [];
  const limit = input.policy.maxGenerationsBehind;
  for (const node of input.nodes) {
    const behind =
      input.currentVersion === undefined
        ? 0
        : generationsBehind(node.generation, input.currentVersion, input.retainedVersions);
    const wantTaint = limit !== undefined && input.currentVersion !== undefined && behind > limit;
    const label = node.label === node.generation ? undefined : node.generation;
    let taint: GenerationChange['taint'];
    if (wantTaint && node.taint !== input.policy.taintEffect) {
      taint = { action: 'add', effect: input.policy.taintEffect };
    } else if (!wantTaint && node.taint !== undefined) {
      taint = { action: 'remove' };
    }
    if (label !== undefined || taint !== undefined) {
      changes.push({
        node: node.name,
        ...definedOnly({ label, taint }),
        behind,
      });
    }
  }
  return changes;
}
