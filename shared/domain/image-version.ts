/**
 * Names, ordering and provenance tags of the gallery image versions this product creates
 * (docs/design.md#version-name). Pure: time comes in as an argument.
 */
import { NEW_NODE_BOOTSTRAPS, type NewNodeBootstrap } from './bootstrap-flavour.js';
import type { CaptureMode } from './capture-mode.js';
import { CAPTURE_MODES } from './capture-mode.js';
import { isRfc3339 } from './rfc3339.js';

/** Largest value of each version component: Azure requires "numbers within the range of a 32-bit integer". */
export const INT32_MAX = 2_147_483_647;

/**
 * Which naming scheme produced a version name.
 * - `prototype`: ours, `YYYY.MMDD.HHMMSS` (UTC), e.g. `2026.1122.143059`; several per day.
 * - `kamino`: kamino's `YYYY.MM.DD` (one per day), e.g. `2021.05.19`.
 * - `other`: a valid name from neither scheme (hand-made, another tool).
 */
export type ImageVersionScheme = 'prototype' | 'kamino' | 'other';

export interface ImageVersion {
  readonly name: string;
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly scheme: ImageVersionScheme;
  /**
   * When the name encodes a moment, that moment as an ISO 8601 UTC string: the creation second for
   * `prototype` names, midnight UTC of the day for `kamino` names. Undefined when the name was bumped
   * past a valid clock value (collisions within one second) or follows no known scheme.
   */
  readonly encodedTime?: string;
}

const COMPONENT = /^(0|[1-9][0-9]*|0[0-9]+)$/;

/**
 * Parses `Major.Minor.Patch` as the Compute Gallery accepts it: three runs of decimal digits, each at most
 * 2147483647. Leading zeros are tolerated because kamino's names (`2021.05.19`) have them. Returns undefined
 * for anything else.
 */
export function parseImageVersion(name: string): ImageVersion | undefined {
  const parts = name.split('.');
  if (parts.length !== 3) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    if (part.length === 0 || part.length > 10 || !COMPONENT.test(part)) return undefined;
    const value = Number(part);
    if (value > INT32_MAX) return undefined;
    numbers.push(value);
  }
  const [major = 0, minor = 0, patch = 0] = numbers;
  const kamino = kaminoTime(parts, major, minor, patch);
  if (kamino !== undefined) return { name, major, minor, patch, scheme: 'kamino', encodedTime: kamino };
  if (isPrototypeShape(major, minor)) {
    const encodedTime = prototypeTime(major, minor, patch);
    return encodedTime === undefined
      ? { name, major, minor, patch, scheme: 'prototype' }
      : { name, major, minor, patch, scheme: 'prototype', encodedTime };
  }
  return { name, major, minor, patch, scheme: 'other' };
}

/** True for kamino's `YYYY.MM.DD` names (zero-padded month and day, a real calendar date). */
export function isKaminoVersion(name: string): boolean {
  return parseImageVersion(name)?.scheme === 'kamino';
}

/**
 * Orders version names the way the gallery resolves `latest`: by Major, then Minor, then Patch, numerically.
 * Names that are numerically equal (`2021.05.19` and `2021.5.19`) are ordered by their text so that sorting
 * is total and deterministic. Throws a RangeError for a name that is not `Major.Minor.Patch`.
 */
export function compareImageVersions(a: string, b: string): number {
  const left = requireVersion(a, 'comparing image versions');
  const right = requireVersion(b, 'comparing image versions');
  return (
    left.major - right.major ||
    left.minor - right.minor ||
    left.patch - right.patch ||
    (a < b ? -1 : a > b ? 1 : 0)
  );
}

/**
 * The name for a version created at `now`: `YYYY.MMDD.HHMMSS` in UTC, without leading zeros
 * (2026-01-05T00:00:07Z → `2026.105.7`). It is strictly greater than every name in `existingNames`, so the
 * new version becomes `latest` once promoted: when an existing name is as new or newer (a second version in
 * the same second, or a clock behind the gallery's), the patch of the greatest existing name is bumped.
 * kamino's `YYYY.MM.DD` names always sort older than ours of the same or a later year because their minor
 * (1–12) is below any MMDD (101–1231).
 */
export function nextImageVersionName(now: Date, existingNames: readonly string[]): string {
  const time = now.getTime();
  if (Number.isNaN(time))
    throw new RangeError('naming an image version: the current time is an invalid Date');
  const year = now.getUTCFullYear();
  if (year < 1 || year > 9999)
    throw new RangeError(`naming an image version: year ${year} is outside 1–9999`);
  const candidate: [number, number, number] = [
    year,
    (now.getUTCMonth() + 1) * 100 + now.getUTCDate(),
    now.getUTCHours() * 10000 + now.getUTCMinutes() * 100 + now.getUTCSeconds(),
  ];
  let greatest: ImageVersion | undefined;
  for (const existing of existingNames) {
    const parsed = requireVersion(existing, 'naming an image version');
    if (greatest === undefined || compareTriples(parsed, greatest) > 0) greatest = parsed;
  }
  if (greatest === undefined || compareTriples(tripleOf(candidate), greatest) > 0)
    return formatTriple(candidate);
  return formatTriple(bump(greatest));
}

/** Formats three components as a version name; throws when a component is not an int32 ≥ 0. */
function formatImageVersion(major: number, minor: number, patch: number): string {
  for (const value of [major, minor, patch]) {
    if (!Number.isInteger(value) || value < 0 || value > INT32_MAX) {
      throw new RangeError(`formatting an image version: ${value} is not an integer in 0–${INT32_MAX}`);
    }
  }
  return `${major}.${minor}.${patch}`;
}

function bump(version: ImageVersion): [number, number, number] {
  if (version.patch < INT32_MAX) return [version.major, version.minor, version.patch + 1];
  if (version.minor < INT32_MAX) return [version.major, version.minor + 1, 0];
  if (version.major < INT32_MAX) return [version.major + 1, 0, 0];
  throw new RangeError(`naming an image version: no name is greater than ${version.name}`);
}

function requireVersion(name: string, doing: string): ImageVersion {
  const parsed = parseImageVersion(name);
  if (parsed === undefined) {
    throw new RangeError(
      `${doing}: ${JSON.stringify(name)} is not a version name (Major.Minor.Patch, each 0–${INT32_MAX})`,
    );
  }
  return parsed;
}

interface Triple {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

function tripleOf([major, minor, patch]: readonly [number, number, number]): Triple {
  return { major, minor, patch };
}

function compareTriples(a: Triple, b: Triple): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

function formatTriple([major, minor, patch]: readonly [number, number, number]): string {
  return formatImageVersion(major, minor, patch);
}

function kaminoTime(parts: readonly string[], year: number, month: number, day: number): string | undefined {
  // kamino formatted with strftime('%Y.%m.%d'): always 4.2.2 digits.
  if (parts[0]?.length !== 4 || parts[1]?.length !== 2 || parts[2]?.length !== 2) return undefined;
  return calendarIso(year, month, day, 0, 0, 0);
}

function isPrototypeShape(major: number, minor: number): boolean {
  const month = Math.floor(minor / 100);
  const day = minor % 100;
  return major >= 1 && major <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

function prototypeTime(year: number, mmdd: number, hhmmss: number): string | undefined {
  if (hhmmss > 235959) return undefined;
  return calendarIso(
    year,
    Math.floor(mmdd / 100),
    mmdd % 100,
    Math.floor(hhmmss / 10000),
    Math.floor(hhmmss / 100) % 100,
    hhmmss % 100,
  );
}

function calendarIso(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): string | undefined {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  // Date rolls 2026-02-30 over into March: a real calendar date survives the round trip.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return undefined;
  }
  return date.toISOString();
}

// ---------------------------------------------------------------------------------------------------------
// Provenance tags

/**
 * Azure tag limits (learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations):
 * names up to 512 characters, values up to 256; names cannot contain `<`, `>`, `%`, `&`, `\`, `?`, `/`.
 */
const TAG_KEY_MAX_LENGTH = 512;
const TAG_VALUE_MAX_LENGTH = 256;
const FORBIDDEN_TAG_KEY_CHARACTERS = /[<>%&\\?/]/;

/** A problem with a tag name, or undefined when Azure accepts it. */
export function tagKeyProblem(key: string): string | undefined {
  if (key.length === 0) return 'a tag name cannot be empty';
  if (key.length > TAG_KEY_MAX_LENGTH) return `a tag name has at most ${TAG_KEY_MAX_LENGTH} characters`;
  if (FORBIDDEN_TAG_KEY_CHARACTERS.test(key)) return 'a tag name cannot contain < > % & \\ ? /';
  return undefined;
}

/** A problem with a tag value, or undefined when Azure accepts it. */
export function tagValueProblem(value: string): string | undefined {
  if (value.length > TAG_VALUE_MAX_LENGTH)
    return `a tag value has at most ${TAG_VALUE_MAX_LENGTH} characters`;
  return undefined;
}

/** What every image version we build records about its origin. */
export interface ImageVersionProvenance {
  /** Kubernetes node name of the prototype. */
  readonly sourceNode: string;
  /** Azure `vmId` (a GUID, stable for the life of the VM) of the prototype instance. */
  readonly sourceVmId: string;
  /** Cluster name from settings. */
  readonly cluster: string;
  /** Pool name from settings. */
  readonly pool: string;
  /** RFC 3339 time the prototype was last patched (its last-patch annotation). */
  readonly patchedAt: string;
  /** Orchestration instance id of the refresh that built the version. */
  readonly runId: string;
}

/** Tag names, prefixed so they never clash with an operator's own tags. */
export const IMAGE_VERSION_TAG_KEYS = {
  createdBy: 'vmss-prototype.created-by',
  sourceNode: 'vmss-prototype.source-node',
  sourceVmId: 'vmss-prototype.source-vm-id',
  cluster: 'vmss-prototype.cluster',
  pool: 'vmss-prototype.pool',
  patchedAt: 'vmss-prototype.patched-at',
  runId: 'vmss-prototype.run-id',
} as const;

/**
 * What the `patched-at` tag's time is: `donor`, the donor's recorded last patch (its kured annotation), or
 * `capture`, the capture time, written when the donor had no usable patch time (an operator-named node
 * without one, or a fallback donor). The capture time bounds the next run's patch rule from below, but it
 * says nothing of how old the patches are: freshness is then unknown. Absent on versions built before this
 * tag existed (read as `donor`).
 */
export const PATCHED_AT_BASIS_TAG = 'vmss-prototype.patched-at-basis';
export type PatchedAtBasis = 'donor' | 'capture';

/** The donor's recorded patch time of a version of ours (RFC 3339); undefined when it had none. */
export function donorPatchedAtOf(tags: Readonly<Record<string, string>> | undefined): string | undefined {
  const read = tagReader(tags);
  if (read(PATCHED_AT_BASIS_TAG) === 'capture') return undefined;
  const value = read(IMAGE_VERSION_TAG_KEYS.patchedAt);
  return value === undefined || value === '' ? undefined : value;
}

/** Reads tags by name as Azure compares them: case-insensitively. */
export function tagReader(
  tags: Readonly<Record<string, string>> | undefined,
): (key: string) => string | undefined {
  const lower = new Map(Object.entries(tags ?? {}).map(([key, value]) => [key.toLowerCase(), value]));
  return (key) => lower.get(key.toLowerCase());
}

/**
 * What a run adds to its version's tags besides the provenance, for the status page's run timeline
 * (pool-history.ts). Each is optional: versions built before they existed lack them, and nothing but the
 * timeline reads them.
 */
export const RUN_TIMELINE_TAG_KEYS = {
  /** How the donor was captured (`drain-and-stop`, `live`, `run-command`): written at creation. */
  captureMode: 'vmss-prototype.capture-mode',
  /** How new nodes from the version join (bootstrap-flavour.ts NewNodeBootstrap): written at creation. */
  newNodes: 'vmss-prototype.new-nodes',
  /** When the version was published to `latest` (RFC 3339): written with the publication. */
  inLatestAt: 'vmss-prototype.in-latest-at',
} as const;

export interface RunTimelineTags {
  readonly captureMode?: CaptureMode;
  readonly newNodes?: NewNodeBootstrap;
  readonly inLatestAt?: string;
}

/** The timeline tags of a version (names matched case-insensitively); what is missing or invalid is left out. */
export function runTimelineTagsOf(tags: Readonly<Record<string, string>> | undefined): RunTimelineTags {
  const read = tagReader(tags);
  const mode = read(RUN_TIMELINE_TAG_KEYS.captureMode);
  const inLatestAt = read(RUN_TIMELINE_TAG_KEYS.inLatestAt);
  const newNodes = NEW_NODE_BOOTSTRAPS.find((value) => value === read(RUN_TIMELINE_TAG_KEYS.newNodes));
  return {
    ...(newNodes === undefined ? {} : { newNodes }),
    ...(mode !== undefined && (CAPTURE_MODES as readonly string[]).includes(mode)
      ? { captureMode: mode as CaptureMode }
      : {}),
    ...(inLatestAt !== undefined && isRfc3339(inLatestAt) ? { inLatestAt } : {}),
  };
}

/** Value of the `created-by` tag; its presence marks a version as ours. */
const CREATED_BY_TAG_VALUE = 'vmss-prototype';

/**
 * Builds the tag set of a new version. Throws a RangeError listing every field that is empty, too long for a
 * tag value, or (for `patchedAt`) not an RFC 3339 timestamp.
 */
export function buildImageVersionTags(provenance: ImageVersionProvenance): Record<string, string> {
  const problems = provenanceProblems(provenance);
  if (problems.length > 0) throw new RangeError(`building image version tags: ${problems.join('; ')}`);
  return {
    [IMAGE_VERSION_TAG_KEYS.createdBy]: CREATED_BY_TAG_VALUE,
    [IMAGE_VERSION_TAG_KEYS.sourceNode]: provenance.sourceNode,
    [IMAGE_VERSION_TAG_KEYS.sourceVmId]: provenance.sourceVmId,
    [IMAGE_VERSION_TAG_KEYS.cluster]: provenance.cluster,
    [IMAGE_VERSION_TAG_KEYS.pool]: provenance.pool,
    [IMAGE_VERSION_TAG_KEYS.patchedAt]: provenance.patchedAt,
    [IMAGE_VERSION_TAG_KEYS.runId]: provenance.runId,
  };
}

export type ParsedImageVersionTags =
  | { readonly kind: 'ours'; readonly provenance: ImageVersionProvenance }
  | { readonly kind: 'foreign' }
  | { readonly kind: 'damaged'; readonly problems: readonly string[] };

/**
 * Reads provenance back from a version's tags. `foreign` when the version was not built by us (no
 * `created-by` tag: kamino's or a hand-made one); `damaged` when ours but a tag is missing or invalid (someone
 * edited them). Tag names are matched case-insensitively, as Azure treats them.
 */
export function parseImageVersionTags(
  tags: Readonly<Record<string, string>> | undefined,
): ParsedImageVersionTags {
  const read = tagReader(tags);
  if (read(IMAGE_VERSION_TAG_KEYS.createdBy) !== CREATED_BY_TAG_VALUE) return { kind: 'foreign' };
  const provenance = {
    sourceNode: read(IMAGE_VERSION_TAG_KEYS.sourceNode) ?? '',
    sourceVmId: read(IMAGE_VERSION_TAG_KEYS.sourceVmId) ?? '',
    cluster: read(IMAGE_VERSION_TAG_KEYS.cluster) ?? '',
    pool: read(IMAGE_VERSION_TAG_KEYS.pool) ?? '',
    patchedAt: read(IMAGE_VERSION_TAG_KEYS.patchedAt) ?? '',
    runId: read(IMAGE_VERSION_TAG_KEYS.runId) ?? '',
  } satisfies ImageVersionProvenance;
  const problems = provenanceProblems(provenance);
  return problems.length > 0 ? { kind: 'damaged', problems } : { kind: 'ours', provenance };
}

function provenanceProblems(provenance: ImageVersionProvenance): string[] {
  const problems: string[] = [];
  for (const field of Object.keys(IMAGE_VERSION_TAG_KEYS) as (keyof typeof IMAGE_VERSION_TAG_KEYS)[]) {
    if (field === 'createdBy') continue;
    const value = provenance[field];
    if (value.length === 0) problems.push(`${field} is empty`);
    else if (value.length > TAG_VALUE_MAX_LENGTH) {
      problems.push(`${field} has ${value.length} characters, a tag value at most ${TAG_VALUE_MAX_LENGTH}`);
    }
  }
  if (provenance.patchedAt.length > 0 && !isRfc3339(provenance.patchedAt)) {
    problems.push(
      `patchedAt ${JSON.stringify(provenance.patchedAt.slice(0, 40))} is not an RFC 3339 timestamp`,
    );
  }
  return problems;
}
