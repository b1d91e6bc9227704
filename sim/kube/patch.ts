/**
 * The three PATCH flavours the API server accepts: JSON merge patch (RFC 7386), strategic merge patch
 * (merge keys of the core/v1 fields nodes and pods use) and JSON patch (RFC 6902 with `test`).
 */
import { KubeApiError } from './status.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export type PatchType = 'merge' | 'strategic' | 'json';

export const PATCH_CONTENT_TYPES: Readonly<Record<string, PatchType>> = {
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/json-patch+json': 'json',
};

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A patch that parses but cannot apply: the API server answers 422 with the cause attached. */
function rejected(cause: string): KubeApiError {
  return new KubeApiError('Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'UnexpectedServerResponse', message: cause }],
  });
}

function badPatch(cause: string): KubeApiError {
  return new KubeApiError('BadRequest', cause);
}

/** RFC 7386: objects merge recursively, `null` deletes, everything else (arrays too) replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: JsonObject = isObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value) as Json;
  }
  return result;
}

/**
 * Lists that merge by a key in strategic merge patch, by field path without list indices. Lists not
 * named here are atomic (replaced whole) — notably `spec.taints` on nodes and `spec.tolerations` on pods,
 * which core/v1 declares without a patch strategy.
 */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  'metadata.ownerReferences': 'uid',
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.ephemeralContainers': 'name',
  'spec.containers.env': 'name',
  'spec.initContainers.env': 'name',
  'spec.containers.ports': 'containerPort',
  'spec.containers.volumeMounts': 'mountPath',
  'spec.initContainers.volumeMounts': 'mountPath',
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'status.conditions': 'type',
  'status.addresses': 'type',
};

/** Primitive lists that merge as sets in strategic merge patch. */
const SET_LISTS: ReadonlySet<string> = new Set(['metadata.finalizers', 'spec.podCIDRs']);

export function applyStrategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) throw badPatch('strategic merge patch body must be a JSON object');
  return mergeObject(isObject(target) ? target : {}, patch, '');
}

/**
 * The directives a strategic merge patch may carry, checked like apimachinery's strategicpatch: a
 * `$patch` other than replace/merge/delete, or keys outside `$retainKeys`, are refused 422; a
 * directive of the wrong shape (`$retainKeys`, `$setElementOrder/…`, `$deleteFromPrimitiveList/…` not
 * a list) is a malformed patch, 400.
 */
function checkDirectives(patch: JsonObject, path: string): void {
  const directive = patch.$patch;
  if (
    directive !== undefined &&
    !(typeof directive === 'string' && ['replace', 'merge', 'delete'].includes(directive))
  ) {
    throw rejected(
      `unknown patch type: ${JSON.stringify(directive)} in map: ${JSON.stringify(patch)}${path === '' ? '' : ` at ${path}`}`,
    );
  }
  const retain = patch.$retainKeys;
  if (retain !== undefined) {
    if (!Array.isArray(retain) || retain.some((key) => typeof key !== 'string')) {
      throw badPatch('invalid patch format of retainKeys');
    }
    const outside = Object.keys(patch).filter((key) => !key.startsWith('$') && !retain.includes(key));
    if (outside.length > 0) throw rejected("patch content doesn't match retainKeys list");
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$setElementOrder/') && !Array.isArray(value)) {
      throw badPatch('invalid patch format of setElementOrder list');
    }
    if (key.startsWith('$deleteFromPrimitiveList/') && !Array.isArray(value)) {
      throw badPatch('invalid patch format of primitive list');
    }
  }
}

function mergeObject(target: JsonObject, patch: JsonObject, path: string): JsonObject {
  checkDirectives(patch, path);
  if (patch.$patch === 'replace') {
    const replaced = structuredClone(patch);
    delete replaced.$patch;
    return replaced;
  }
  if (patch.$patch === 'delete') return {};
  const result = structuredClone(target);
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith('$setElementOrder/')) continue;
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const existing = result[field];
      if (!Array.isArray(value)) throw badPatch(`invalid ${key}: expected a list`);
      if (Array.isArray(existing)) result[field] = existing.filter((item) => !value.includes(item));
      continue;
    }
    const childPath = path === '' ? key : `${path}.${key}`;
    if (value === null) {
      delete result[key];
    } else if (isObject(value)) {
      const current = result[key];
      result[key] = mergeObject(isObject(current) ? current : {}, value, childPath);
    } else if (Array.isArray(value)) {
      result[key] = mergeList(result[key], value, childPath);
    } else {
      result[key] = value;
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    for (const key of Object.keys(result)) {
      if (!patch.$retainKeys.includes(key)) delete result[key];
    }
  }
  return result;
}

function mergeList(target: Json | undefined, patch: Json[], path: string): Json[] {
  const current = Array.isArray(target) ? target : [];
  if (SET_LISTS.has(path)) {
    const merged = [...current];
    for (const item of patch) if (!merged.includes(item)) merged.push(item);
    return merged;
  }
  const mergeKey = MERGE_KEYS[path];
  if (mergeKey === undefined) {
    return patch.filter(
      (item) => !(isObject(item) && item.$patch === 'replace' && Object.keys(item).length === 1),
    );
  }
  const merged = structuredClone(current);
  for (const item of patch) {
    if (!isObject(item))
      throw badPatch(`invalid list item in ${path}: expected an object with "${mergeKey}"`);
    if (item.$patch === 'replace') return patch.filter((entry) => entry !== item);
    const keyValue = item[mergeKey];
    if (keyValue === undefined)
      throw badPatch(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    const index = merged.findIndex((entry) => isObject(entry) && entry[mergeKey] === keyValue);
    if (item.$patch === 'delete') {
      if (index >= 0) merged.splice(index, 1);
      continue;
    }
    const existing = index >= 0 ? merged[index] : undefined;
    const next = mergeObject(isObject(existing) ? existing : {}, item, path);
    if (index >= 0) merged[index] = next;
    else merged.push(next);
  }
  return merged;
}

interface JsonPatchOperation {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw rejected(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function arrayIndex(container: Json[], token: string, forAdd: boolean, pointer: string): number {
  if (forAdd && token === '-') return container.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw rejected(`invalid array index "${token}" in ${pointer}`);
  const index = Number(token);
  const limit = forAdd ? container.length : container.length - 1;
  if (index > limit) throw rejected(`array index ${index} out of bounds in ${pointer}`);
  return index;
}

function parentOf(document: Json, tokens: string[], pointer: string): Json[] | JsonObject {
  let current: Json = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) {
      current = current[arrayIndex(current, token, false, pointer)] ?? null;
    } else if (isObject(current) && Object.hasOwn(current, token)) {
      current = current[token] ?? null;
    } else {
      throw rejected(`doc is missing path: "${pointer}": missing value`);
    }
  }
  if (!Array.isArray(current) && !isObject(current)) throw rejected(`doc is missing path: "${pointer}"`);
  return current;
}

function getAt(document: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return document;
  const parent = parentOf(document, tokens, pointer);
  const last = tokens.at(-1) ?? '';
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, false, pointer)] ?? null;
  if (!Object.hasOwn(parent, last)) throw rejected(`doc is missing path: "${pointer}": missing value`);
  return parent[last] ?? null;
}

function removeAt(document: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  const parent = parentOf(document, tokens, pointer);
  const last = tokens.at(-1) ?? '';
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, last, false, pointer), 1);
    return removed ?? null;
  }
  if (!Object.hasOwn(parent, last)) {
    throw rejected(`Unable to remove nonexistent key: ${last}: missing value`);
  }
  const removed = parent[last] ?? null;
  delete parent[last];
  return removed;
}

function addAt(document: Json, pointer: string, value: Json, replace: boolean): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, pointer);
  const last = tokens.at(-1) ?? '';
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, last, !replace, pointer);
    parent.splice(index, replace ? 1 : 0, value);
  } else {
    if (replace && !Object.hasOwn(parent, last)) {
      throw rejected(`replace operation does not apply: doc is missing key: ${pointer}: missing value`);
    }
    parent[last] = value;
  }
  return document;
}

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => deepEqual(item, b[index] ?? null));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key] ?? null, b[key] ?? null))
    );
  }
  return false;
}

function parseOperations(patch: unknown): JsonPatchOperation[] {
  if (!Array.isArray(patch)) {
    throw badPatch('json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp');
  }
  return patch.map((operation: unknown) => {
    if (!isObject(operation) || typeof operation.op !== 'string' || typeof operation.path !== 'string') {
      throw badPatch('invalid JSON patch operation: "op" and "path" are required');
    }
    return {
      op: operation.op,
      path: operation.path,
      ...(typeof operation.from === 'string' ? { from: operation.from } : {}),
      ...(Object.hasOwn(operation, 'value') ? { value: operation.value ?? null } : {}),
    };
  });
}

/** RFC 6902. Operations apply in order on a copy; any failure rejects the whole patch. */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  let document = structuredClone(target) as Json;
  for (const operation of parseOperations(patch)) {
    const needsValue = ['add', 'replace', 'test'].includes(operation.op);
    if (needsValue && operation.value === undefined)
      throw rejected(`missing value for ${operation.op} ${operation.path}`);
    const value = operation.value ?? null;
    switch (operation.op) {
      case 'add':
        document = addAt(document, operation.path, structuredClone(value), false);
        break;
      case 'replace':
        document = addAt(document, operation.path, structuredClone(value), true);
        break;
      case 'remove':
        removeAt(document, operation.path);
        break;
      case 'move': {
        if (operation.from === undefined) throw rejected(`missing from for move ${operation.path}`);
        const moved = removeAt(document, operation.from);
        document = addAt(document, operation.path, moved, false);
        break;
      }
      case 'copy': {
        if (operation.from === undefined) throw rejected(`missing from for copy ${operation.path}`);
        document = addAt(document, operation.path, structuredClone(getAt(document, operation.from)), false);
        break;
      }
      case 'test':
        if (!deepEqual(getAt(document, operation.path), value)) {
          throw rejected(`testing value ${operation.path} failed: test failed`);
        }
        break;
      default:
        throw rejected(`Unexpected kind: ${operation.op}`);
    }
  }
  return document;
}

export function applyPatch(type: PatchType, target: unknown, patch: unknown): unknown {
  switch (type) {
    case 'merge':
      if (!isObject(patch)) throw badPatch('merge patch body must be a JSON object');
      return applyMergePatch(target, patch);
    case 'strategic':
      return applyStrategicMergePatch(target, patch);
    case 'json':
      return applyJsonPatch(target, patch);
  }
}
