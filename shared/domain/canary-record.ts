/**
 * What a canary changed, recorded in Azure itself (tags on the scale set), so that a run that died for
 * good can be given back from Azure state alone: the image reference the model had before the canary,
 * the run and version under test, when it started and which instances it added. And the pure decision
 * of what giving a dead run's canary back means. Azure tag names may not contain `/`, so the keys use
 * the `vmss-prototype.` prefix our version tags use; a value has at most 256 characters, so the prior
 * image reference (an ARM id can be longer) is split over numbered keys.
 */
import { tagValueProblem } from './image-version.js';
import { definedOnly } from './optional.js';

/** The fields of an image reference exactly as ARM returned them (only the ones present). */
export type ImageReferenceFields = Readonly<Record<string, string>>;

/** The fields a model's image reference may carry that we write back on a restore (others are read-only). */
export const IMAGE_REFERENCE_FIELDS = [
  'id',
  'publisher',
  'offer',
  'sku',
  'version',
  'sharedGalleryImageId',
  'communityGalleryImageId',
] as const;

export interface CanaryRecord {
  /** The run that started the canary. */
  readonly run: string;
  /** The image version under test (its name). */
  readonly version: string;
  /** RFC 3339 time the model was pinned to the version. */
  readonly startedAt: string;
  /** The model's image reference before the canary. */
  readonly priorImage: ImageReferenceFields;
  /** Capacity before the scale-out. */
  readonly priorCapacity: number;
  /** How many canaries the run adds. */
  readonly count: number;
  /** The canaries, once the scale-out made them (Uniform instance ids or Flexible VM names). */
  readonly instances?: readonly string[];
}

export const CANARY_TAG_PREFIX = 'vmss-prototype.canary-';

const KEYS = {
  run: `${CANARY_TAG_PREFIX}run`,
  version: `${CANARY_TAG_PREFIX}version`,
  startedAt: `${CANARY_TAG_PREFIX}started`,
  priorImage: `${CANARY_TAG_PREFIX}prior-image`,
  priorCapacity: `${CANARY_TAG_PREFIX}prior-capacity`,
  count: `${CANARY_TAG_PREFIX}count`,
  instances: `${CANARY_TAG_PREFIX}instances`,
} as const;

const TAG_VALUE_MAX = 256;
/** A JSON image reference of up to 8 × 256 characters: the longest ARM id is far below that. */
const MAX_CHUNKS = 8;

/** The record as tags (added to the scale set's own tags, which it never replaces). */
export function canaryRecordTags(record: CanaryRecord): Record<string, string> {
  const tags: Record<string, string> = {
    [KEYS.run]: record.run,
    [KEYS.version]: record.version,
    [KEYS.startedAt]: record.startedAt,
    [KEYS.priorCapacity]: String(record.priorCapacity),
    [KEYS.count]: String(record.count),
  };
  const image = JSON.stringify(record.priorImage);
  const chunks = Math.ceil(image.length / TAG_VALUE_MAX);
  if (chunks > MAX_CHUNKS) {
    throw new RangeError(`recording the canary: the prior image reference has ${image.length} characters`);
  }
  for (let index = 0; index < chunks; index++) {
    const key = index === 0 ? KEYS.priorImage : `${KEYS.priorImage}.${index}`;
    tags[key] = image.slice(index * TAG_VALUE_MAX, (index + 1) * TAG_VALUE_MAX);
  }
  if (record.instances !== undefined) tags[KEYS.instances] = record.instances.join(',');
  for (const [key, value] of Object.entries(tags)) {
    const problem = tagValueProblem(value);
    if (problem !== undefined) throw new RangeError(`recording the canary: tag ${key}: ${problem}`);
  }
  return tags;
}

export type ParsedCanaryRecord =
  | { readonly kind: 'none' }
  | { readonly kind: 'record'; readonly record: CanaryRecord }
  | { readonly kind: 'damaged'; readonly problem: string };

/** Reads the record back from a scale set's tags (keys compared case-insensitively, as Azure does). */
export function parseCanaryRecord(tags: Readonly<Record<string, string>>): ParsedCanaryRecord {
  const lower = new Map(Object.entries(tags).map(([key, value]) => [key.toLowerCase(), value]));
  const read = (key: string): string | undefined => lower.get(key.toLowerCase());
  if (![...lower.keys()].some((key) => key.startsWith(CANARY_TAG_PREFIX))) return { kind: 'none' };
  const run = read(KEYS.run);
  const version = read(KEYS.version);
  const startedAt = read(KEYS.startedAt);
  const priorCapacity = Number(read(KEYS.priorCapacity));
  const count = Number(read(KEYS.count));
  let image = read(KEYS.priorImage) ?? '';
  for (let index = 1; index < MAX_CHUNKS; index++) {
    const chunk = read(`${KEYS.priorImage}.${index}`);
    if (chunk === undefined) break;
    image += chunk;
  }
  let priorImage: Record<string, string> | undefined;
  try {
    const parsed: unknown = JSON.parse(image);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const entries = Object.entries(parsed as Record<string, unknown>);
      if (entries.every(([, value]) => typeof value === 'string')) {
        priorImage = Object.fromEntries(entries) as Record<string, string>;
      }
    }
  } catch {
    priorImage = undefined;
  }
  if (
    run === undefined ||
    version === undefined ||
    startedAt === undefined ||
    priorImage === undefined ||
    !Number.isInteger(priorCapacity) ||
    !Number.isInteger(count)
  ) {
    return {
      kind: 'damaged',
      problem: 'the scale set carries vmss-prototype.canary-* tags that are incomplete or were edited',
    };
  }
  const instancesText = read(KEYS.instances);
  const instances =
    instancesText === undefined ? undefined : instancesText.split(',').filter((id) => id !== '');
  return {
    kind: 'record',
    record: {
      run,
      version,
      startedAt,
      priorImage,
      priorCapacity,
      count,
      ...definedOnly({ instances }),
    },
  };
}

/** The tags without any canary record key: what a scale set's tags are once the canary is over. */
export function withoutCanaryRecord(tags: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(tags).filter(([key]) => !key.toLowerCase().startsWith(CANARY_TAG_PREFIX)),
  );
}

/** The image reference as a PATCH body restoring `fields` exactly: every field we write, absent ones nulled. */
export function restoringImageReference(fields: ImageReferenceFields): Record<string, string | null> {
  const body: Record<string, string | null> = {};
  for (const field of IMAGE_REFERENCE_FIELDS) body[field] = fields[field] ?? null;
  return body;
}

/** True when two image references name the same image (ARM ids compare case-insensitively). */
export function sameImageReference(a: ImageReferenceFields, b: ImageReferenceFields): boolean {
  return IMAGE_REFERENCE_FIELDS.every((field) => {
    const left = a[field];
    const right = b[field];
    if (left === undefined || right === undefined) return left === right;
    // Ids are ARM resource ids (case-insensitive); publisher, offer, sku and version compare as written.
    return field.toLowerCase().endsWith('id') ? left.toLowerCase() === right.toLowerCase() : left === right;
  });
}

/** What Azure says now, for giving back a dead run's canary. */
export interface CanaryGiveBackFacts {
  readonly record: CanaryRecord;
  /** The run the caller (the reaper) knows to be dead; nothing is touched for any other run. */
  readonly deadRun: string;
  /** The model's image reference now. */
  readonly modelImage: ImageReferenceFields;
  /** The version under test, when it still exists. */
  readonly version?: { readonly id: string; readonly published: boolean; readonly succeeded: boolean };
  /** The scale set's instances and the image each was built from (version id when known). */
  readonly instances: readonly { readonly instanceId: string; readonly imageVersionId?: string }[];
}

export type CanaryGiveBack =
  | { readonly kind: 'nothing'; readonly reason: string }
  | {
      readonly kind: 'give-back';
      /** Restore the model's image reference to this (undefined: the model no longer names the version). */
      readonly restoreImage?: ImageReferenceFields;
      readonly deleteInstances: readonly string[];
      /** The version was never published: leave it hidden and mark it abandoned (pruning deletes it). */
      readonly abandonVersion: boolean;
      readonly summary: string;
    };

/**
 * How to give back the canary of a run that died for good. Only the dead run's own record is acted on.
 * A version already published passed its canary: the canaries stay (they are verified nodes) and only
 * the record goes; the model is left on the version (a valid, verified image). Otherwise the model goes
 * back to the prior image when it still names the version under test (not when another tool changed it
 * since), the canaries are deleted — the recorded ones, or when the run died before recording them, the
 * instances built from the version — and the version is marked abandoned.
 */
export function decideCanaryGiveBack(facts: CanaryGiveBackFacts): CanaryGiveBack {
  const { record } = facts;
  if (record.run !== facts.deadRun) {
    return {
      kind: 'nothing',
      reason: `the canary belongs to run ${record.run}, not to the dead run ${facts.deadRun}`,
    };
  }
  if (facts.version?.published === true && facts.version.succeeded) {
    return {
      kind: 'give-back',
      deleteInstances: [],
      abandonVersion: false,
      summary:
        `version ${record.version} had passed its canary and was published: the canaries stay, the model stays on it; ` +
        `run a refresh to finish (customData, bootstrap extensions)`,
    };
  }
  const versionId = facts.version?.id;
  const modelId = facts.modelImage['id'];
  const modelOnVersion =
    versionId !== undefined && modelId !== undefined && modelId.toLowerCase() === versionId.toLowerCase();
  const recorded = record.instances;
  const deleteInstances =
    recorded ??
    (versionId === undefined
      ? []
      : facts.instances
          .filter((instance) => instance.imageVersionId?.toLowerCase() === versionId.toLowerCase())
          .map((instance) => instance.instanceId));
  const present = new Set(facts.instances.map((instance) => instance.instanceId));
  const toDelete = deleteInstances.filter((id) => present.has(id));
  return {
    kind: 'give-back',
    ...(modelOnVersion ? { restoreImage: record.priorImage } : {}),
    deleteInstances: toDelete,
    abandonVersion: facts.version !== undefined,
    summary:
      `${modelOnVersion ? 'model restored to its prior image' : 'model left as it is (it no longer names the version)'}; ` +
      `${toDelete.length} canary instance(s) deleted${recorded === undefined ? ' (found by their image: the run died before recording them)' : ''}` +
      `${facts.version === undefined ? '' : `; version ${record.version} marked abandoned`}`,
  };
}
