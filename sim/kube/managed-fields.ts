/**
 * `metadata.managedFields`: which field manager set which fields of an object, as the API server's
 * field manager records them on every write (operation `Update`, the manager from `fieldManager` or the
 * first token of the user agent) and on server-side apply (operation `Apply`).
 *
 * Upstream: kubernetes/kubernetes `staging/src/k8s.io/apimachinery/pkg/util/managedfields/` (field
 * manager, `internal/stripmeta.go` for the fields never tracked, `internal/managedfieldsupdater.go`),
 * `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go` (`managerOrUserAgent`), sigs.k8s.io/
 * structured-merge-diff `fieldpath` (the `f:` encoding of FieldsV1) and
 * https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management.
 *
 * Modelled: maps are merged by key; every list is atomic (owned as a whole), whatever its
 * `x-kubernetes-list-type` (sim/README.md).
 */
import type { KubeObject } from '../contracts.js';

/** A field path as `f:` keys from the object's root, e.g. `["f:metadata", "f:labels", "f:team"]`. */
export type FieldPath = readonly string[];

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** Set by the server on every object, never owned by a manager (stripmeta.go). */
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'generation',
  'managedFields',
  'resourceVersion',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `.metadata.labels.team`, as fieldpath.Path prints a path in a conflict. */
export function printPath(path: FieldPath): string {
  return path.map((part) => `.${part.slice(2)}`).join('');
}

export function pathKey(path: FieldPath): string {
  return JSON.stringify(path);
}

/**
 * The leaf fields an object sets: a non-empty map is descended into, anything else (a scalar, a list,
 * null, an empty map) is one field.
 */
export function fieldsOf(object: Record<string, unknown>): FieldPath[] {
  const found: FieldPath[] = [];
  const walk = (value: Record<string, unknown>, prefix: string[]): void => {
    for (const [key, child] of Object.entries(value)) {
      if (prefix.length === 0 && (key === 'apiVersion' || key === 'kind')) continue;
      if (prefix.length === 1 && prefix[0] === 'f:metadata' && SERVER_METADATA.has(key)) continue;
      const path = [...prefix, `f:${key}`];
      if (isPlainObject(child) && Object.keys(child).length > 0) walk(child, path);
      else found.push(path);
    }
  };
  walk(object, []);
  return found;
}

export function valueAt(object: unknown, path: FieldPath): unknown {
  let value = object;
  for (const part of path) {
    if (!isPlainObject(value)) return undefined;
    value = value[part.slice(2)];
  }
  return value;
}

/** Removes the field at `path`, and the maps it leaves empty on the way up. */
export function removeAt(object: Record<string, unknown>, path: FieldPath): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const key = head.slice(2);
  if (rest.length === 0) {
    delete object[key];
    return;
  }
  const child = object[key];
  if (!isPlainObject(child)) return;
  removeAt(child, rest);
  if (Object.keys(child).length === 0) delete object[key];
}

/** Whether one path is the other or lies under it (an atomic list owned as a whole covers its items). */
export function overlaps(a: FieldPath, b: FieldPath): boolean {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/** FieldsV1 as the server writes it: nested `f:` keys, `{}` at each owned field. */
export function encodeFields(paths: readonly FieldPath[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let node = root;
    for (const part of path) {
      const next = node[part];
      node[part] = isPlainObject(next) ? next : {};
      node = node[part] as Record<string, unknown>;
    }
  }
  return root;
}

export function decodeFields(fields: unknown): FieldPath[] {
  const found: FieldPath[] = [];
  const walk = (node: Record<string, unknown>, prefix: string[]): void => {
    for (const [key, child] of Object.entries(node)) {
      if (key === '.') continue;
      const path = [...prefix, key];
      if (isPlainObject(child) && Object.keys(child).some((inner) => inner !== '.')) walk(child, path);
      else found.push(path);
    }
  };
  if (isPlainObject(fields)) walk(fields, []);
  return found;
}

/** The entries an object carries (malformed ones are dropped, as the server resets them). */
export function entriesOf(object: KubeObject | undefined): ManagedFieldsEntry[] {
  const entries: unknown = object?.metadata.managedFields;
  if (!Array.isArray(entries)) return [];
  return entries.filter(
    (entry): entry is ManagedFieldsEntry =>
      isPlainObject(entry) && typeof entry.manager === 'string' && isPlainObject(entry.fieldsV1),
  );
}

/** `fieldManager` if given, else the user agent up to its first `/` (handlers/rest.go `managerOrUserAgent`). */
export function managerOf(fieldManager: string | null, userAgent: string | undefined): string {
  if (fieldManager !== null && fieldManager !== '') return fieldManager;
  return (userAgent ?? '').split('/')[0] ?? '';
}

export interface UpdateRecord {
  manager: string;
  apiVersion: string;
  time: string;
  subresource?: string;
}

function sameEntry(entry: ManagedFieldsEntry, record: UpdateRecord, operation: 'Apply' | 'Update'): boolean {
  return (
    entry.manager === record.manager &&
    entry.operation === operation &&
    (entry.subresource ?? '') === (record.subresource ?? '')
  );
}

/** Replaces (or adds) one manager's entry; entries left with no fields are dropped. */
export function withEntry(
  entries: readonly ManagedFieldsEntry[],
  record: UpdateRecord,
  operation: 'Apply' | 'Update',
  paths: readonly FieldPath[],
): ManagedFieldsEntry[] {
  const others = entries.filter((entry) => !sameEntry(entry, record, operation));
  if (paths.length === 0) return others;
  return [
    ...others,
    {
      manager: record.manager,
      operation,
      apiVersion: record.apiVersion,
      time: record.time,
      fieldsType: 'FieldsV1',
      fieldsV1: encodeFields(paths),
      ...(record.subresource === undefined ? {} : { subresource: record.subresource }),
    },
  ];
}

/**
 * The entries after an ordinary write (create, update, any non-apply patch) from `before` to `after`:
 * the writer takes every field it set or changed (from whoever owned it: an update never conflicts), a
 * field the write removed belongs to no one any more.
 */
export function recordUpdate(
  before: KubeObject | undefined,
  after: KubeObject,
  record: UpdateRecord,
): ManagedFieldsEntry[] {
  const beforeObject = (before ?? {}) as Record<string, unknown>;
  const afterObject = after as unknown as Record<string, unknown>;
  const afterFields = fieldsOf(afterObject);
  const afterKeys = new Set(afterFields.map(pathKey));
  const changed = afterFields.filter(
    (path) => JSON.stringify(valueAt(beforeObject, path)) !== JSON.stringify(valueAt(afterObject, path)),
  );
  const entries = entriesOf(before)
    .map((entry) => {
      const kept = decodeFields(entry.fieldsV1).filter(
        (path) =>
          afterKeys.has(pathKey(path)) ||
          afterFields.some((field) => overlaps(field, path) && field.length > path.length),
      );
      const remaining = kept.filter((path) => !changed.some((field) => overlaps(field, path)));
      return { ...entry, fieldsV1: encodeFields(remaining), empty: remaining.length === 0 };
    })
    .filter((entry) => !entry.empty)
    .map(({ empty: _empty, ...entry }) => entry);
  const own = entriesOf(before).find((entry) => sameEntry(entry, record, 'Update'));
  const previous = own ? decodeFields(own.fieldsV1).filter((path) => afterKeys.has(pathKey(path))) : [];
  const mine = [...new Map([...previous, ...changed].map((path) => [pathKey(path), path])).values()];
  return withEntry(entries, record, 'Update', mine);
}

/** Sets (or, when empty, removes) an object's managed fields. */
export function setManagedFields(object: KubeObject, entries: readonly unknown[] | undefined): void {
  if (entries === undefined || entries.length === 0) delete object.metadata.managedFields;
  else object.metadata.managedFields = [...entries];
}

/** The entries without their times, to tell a write that changed nothing (the time alone is no change). */
export function withoutTimes(entries: readonly unknown[] | undefined): unknown[] | undefined {
  return entries?.map((entry) => {
    if (!isPlainObject(entry)) return entry;
    const { time: _time, ...rest } = entry;
    return rest;
  });
}
