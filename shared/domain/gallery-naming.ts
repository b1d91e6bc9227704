/**
 * Names of the Compute Gallery and image definitions this product creates, and the validators settings use
 * for operator overrides. Pure.
 *
 * Rules (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules#microsoftcompute,
 * which is why a gallery name uses `_` where a resource group has `-`):
 * - galleries: 1–80 characters; letters, digits, underscores and periods; start and end with a letter or digit;
 *   unique within the subscription.
 * - galleries/images (image definitions): 1–80 characters; letters, digits, underscores, hyphens and periods;
 *   start and end with a letter or digit; unique within the gallery.
 * Azure resource names are case-insensitive, so names are derived from lower-cased inputs.
 */

const GALLERY_NAME_MAX_LENGTH = 80;
const IMAGE_DEFINITION_NAME_MAX_LENGTH = 80;

const GALLERY_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const IMAGE_DEFINITION_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?$/;

/** Describes a gallery name's problem, or undefined when Azure accepts the name. */
export function galleryNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > GALLERY_NAME_MAX_LENGTH) {
    return `a gallery name has 1–${GALLERY_NAME_MAX_LENGTH} characters`;
  }
  if (name.includes('-')) return "a gallery name cannot contain '-' (use '_' or '.')";
  if (!GALLERY_NAME.test(name)) {
    return 'a gallery name has only letters, digits, "_" and "." and starts and ends with a letter or digit';
  }
  return undefined;
}

/** Describes an image definition name's problem, or undefined when Azure accepts the name. */
export function imageDefinitionNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > IMAGE_DEFINITION_NAME_MAX_LENGTH) {
    return `an image definition name has 1–${IMAGE_DEFINITION_NAME_MAX_LENGTH} characters`;
  }
  if (!IMAGE_DEFINITION_NAME.test(name)) {
    return 'an image definition name has only letters, digits, "-", "_" and "." and starts and ends with a letter or digit';
  }
  return undefined;
}

const GALLERY_PREFIX = 'vmssp';

/**
 * The gallery of the cluster whose nodes live in `clusterResourceGroup`: `vmssp_<rg>_<hash>`. Characters a
 * gallery name cannot hold become `_` and long groups are cut, so two groups can sanitise to the same text
 * (`k8s-prod` and `k8s_prod`); the FNV-1a hash of the lower-cased original keeps their galleries apart.
 */
export function galleryNameFor(clusterResourceGroup: string): string {
  if (clusterResourceGroup.length === 0)
    throw new RangeError('naming a gallery: the resource group name is empty');
  const original = clusterResourceGroup.toLowerCase();
  const hash = fnv1a32Hex(original);
  const room = GALLERY_NAME_MAX_LENGTH - GALLERY_PREFIX.length - hash.length - 2;
  const body = trimSeparators(
    original
      .replace(/[^a-z0-9_.]/g, '_')
      .replace(/[_.]{2,}/g, '_')
      .slice(0, room),
  );
  return body.length === 0 ? `${GALLERY_PREFIX}_${hash}` : `${GALLERY_PREFIX}_${body}_${hash}`;
}

/**
 * The image definition of a pool: `<cluster>-<pool>` when that is a valid name as is (settings restrict both to
 * lowercase DNS labels of at most 40 characters, so it normally is). Otherwise (a pool discovered from a scale
 * set name, or too long) the sanitised text is shortened and suffixed with the FNV-1a hash of the original
 * pair, so distinct pools never share a definition. Cluster names are part of the name because clusters in
 * one resource group share its gallery.
 */
export function imageDefinitionNameFor(clusterName: string, poolName: string): string {
  if (clusterName.length === 0 || poolName.length === 0) {
    throw new RangeError('naming an image definition: cluster and pool names must not be empty');
  }
  const plain = `${clusterName}-${poolName}`.toLowerCase();
  if (imageDefinitionNameProblem(plain) === undefined && !/[_.-]{2,}/.test(plain)) return plain;
  const hash = fnv1a32Hex(`${clusterName}\u0000${poolName}`.toLowerCase());
  const room = IMAGE_DEFINITION_NAME_MAX_LENGTH - hash.length - 1;
  const body = trimSeparators(
    plain
      .replace(/[^a-z0-9_.-]/g, '-')
      .replace(/[_.-]{2,}/g, '-')
      .slice(0, room),
  );
  return body.length === 0 ? `p-${hash}` : `${body}-${hash}`;
}

/**
 * 32-bit FNV-1a over the UTF-8 bytes of `text`, as 8 lowercase hex digits. Stable across runtimes and
 * releases (it names resources that outlive deployments), which a built-in hash would not promise.
 */
export function fnv1a32Hex(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of utf8Bytes(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

function* utf8Bytes(text: string): Generator<number> {
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code < 0x80) yield code;
    else if (code < 0x800) {
      yield 0xc0 | (code >> 6);
      yield 0x80 | (code & 0x3f);
    } else if (code < 0x10000) {
      yield 0xe0 | (code >> 12);
      yield 0x80 | ((code >> 6) & 0x3f);
      yield 0x80 | (code & 0x3f);
    } else {
      yield 0xf0 | (code >> 18);
      yield 0x80 | ((code >> 12) & 0x3f);
      yield 0x80 | ((code >> 6) & 0x3f);
      yield 0x80 | (code & 0x3f);
    }
  }
}

function trimSeparators(text: string): string {
  return text.replace(/^[^a-z0-9]+/, '').replace(/[^a-z0-9]+$/, '');
}
