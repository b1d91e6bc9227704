/**
 * Server-side apply (`PATCH` with `Content-Type: application/apply-patch+yaml`, `kubectl apply
 * --server-side`): the applied configuration is merged into the live object (created if absent), the
 * applier owns exactly the fields it applied (operation `Apply` in `metadata.managedFields`), fields it
 * applied before and no longer does are removed unless another manager owns them, and changing a field
 * another manager owns is a 409 conflict unless `force=true`.
 *
 * Upstream: kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`
 * (`applyPatcher`, `fieldManager` required for apply), `staging/src/k8s.io/apimachinery/pkg/util/
 * managedfields/internal/conflict.go` (`NewConflictError`, the message wording), sigs.k8s.io/
 * structured-merge-diff `merge/update.go` (`Apply`) and
 * https://kubernetes.io/docs/reference/using-api/server-side-apply/.
 *
 * Modelled: maps merge by key, every list is atomic (replaced whole, owned whole), as managed-fields.ts.
 */
import { parse } from 'yaml';

import type { KubeObject } from '../contracts.js';
import { messageOf } from '../errors.js';
import {
  decodeFields,
  encodeFields,
  entriesOf,
  type FieldPath,
  fieldsOf,
  type ManagedFieldsEntry,
  overlaps,
  pathKey,
  printPath,
  removeAt,
  type UpdateRecord,
  valueAt,
  withEntry,
} from './managed-fields.js';
import type { ResourceInfo } from './resources.js';
import { badRequest, KubeApiError } from './status.js';

/** The media type of an apply patch (YAML, of which JSON is a subset). */
export const APPLY_CONTENT_TYPE = 'application/apply-patch+yaml';

/**
 * The applied configuration of an apply request: `fieldManager` is required (422, as
 * `ValidatePatchOptions` says it), the body is YAML (400 `error decoding YAML`), and a name in it must be
 * the one on the URL (400, handlers/rest.go `checkName`).
 */
export function parseApplyBody(
  body: Buffer,
  info: ResourceInfo,
  name: string,
  fieldManagerGiven: boolean,
): Record<string, unknown> {
  if (!fieldManagerGiven) {
    const detail = 'Required value: is required for apply patch';
    throw new KubeApiError('Invalid', `PatchOptions.meta.k8s.io "" is invalid: fieldManager: ${detail}`, {
      group: 'meta.k8s.io',
      kind: 'PatchOptions',
      causes: [{ reason: 'FieldValueRequired', message: detail, field: 'fieldManager' }],
    });
  }
  let applied: unknown;
  try {
    applied = parse(body.toString('utf8'));
  } catch (error) {
    throw badRequest(`error decoding YAML: ${messageOf(error)}`);
  }
  if (!isPlainObject(applied))
    throw badRequest('error decoding YAML: the applied configuration is not an object');
  const metadata = isPlainObject(applied.metadata) ? applied.metadata : {};
  if (metadata.name !== undefined && metadata.name !== name) {
    throw badRequest(
      `the name of the object (${JSON.stringify(metadata.name)}) does not match the name on the URL (${name})`,
    );
  }
  if (applied.kind !== undefined && applied.kind !== info.kind) {
    throw badRequest(`the kind of the applied object (${JSON.stringify(applied.kind)}) is not ${info.kind}`);
  }
  return { ...applied, metadata: { ...metadata, name } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Maps merged by key, everything else replaced. */
function merge(live: unknown, applied: unknown): unknown {
  if (!isPlainObject(live) || !isPlainObject(applied)) return structuredClone(applied);
  const result: Record<string, unknown> = structuredClone(live);
  for (const [key, value] of Object.entries(applied)) result[key] = merge(result[key], value);
  return result;
}

/** How a conflict names its manager: an Update's apiVersion and time too (conflict.go `printManager`). */
function printManager(entry: ManagedFieldsEntry): string {
  const name = JSON.stringify(entry.manager);
  const withSubresource =
    entry.subresource === undefined ? name : `${name} with subresource ${JSON.stringify(entry.subresource)}`;
  return entry.operation === 'Update'
    ? `${withSubresource} using ${entry.apiVersion} at ${entry.time}`
    : withSubresource;
}

function conflictError(conflicts: { entry: ManagedFieldsEntry; path: FieldPath }[]): KubeApiError {
  const causes = conflicts.map(({ entry, path }) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(entry)}`,
    field: printPath(path),
  }));
  const [first] = conflicts;
  if (conflicts.length === 1 && first) {
    return new KubeApiError(
      'Conflict',
      `Apply failed with 1 conflict: conflict with ${printManager(first.entry)}: ${printPath(first.path)}`,
      { causes },
    );
  }
  const byManager = new Map<string, string[]>();
  for (const { entry, path } of conflicts) {
    const key = printManager(entry);
    byManager.set(key, [...(byManager.get(key) ?? []), `- ${printPath(path)}`]);
  }
  const lines = [...byManager.keys()]
    .sort()
    .flatMap((manager) => [`conflicts with ${manager}`, ...(byManager.get(manager) ?? [])]);
  return new KubeApiError(
    'Conflict',
    `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`,
    {
      causes,
    },
  );
}

export interface ApplyRequest {
  /** The live object, or undefined when the apply creates it. */
  live: KubeObject | undefined;
  /** The applied configuration (unknown fields already dropped). */
  applied: Record<string, unknown>;
  record: UpdateRecord;
  force: boolean;
  /** Top-level fields the endpoint ignores (`status` on a resource with a status subresource). */
  ignored: readonly string[];
}

/** The object an apply produces, with its managed fields; throws the 409 on a conflict. */
export function serverSideApply(request: ApplyRequest): KubeObject {
  const { live, record } = request;
  const applied = structuredClone(request.applied);
  for (const field of request.ignored) delete applied[field];
  const appliedFields = fieldsOf(applied);
  const liveObject = (live ?? { metadata: {} }) as unknown as Record<string, unknown>;
  let entries = entriesOf(live);
  const isMine = (entry: ManagedFieldsEntry): boolean =>
    entry.manager === record.manager &&
    entry.operation === 'Apply' &&
    (entry.subresource ?? '') === (record.subresource ?? '');

  const conflicts: { entry: ManagedFieldsEntry; path: FieldPath }[] = [];
  for (const entry of entries) {
    if (isMine(entry)) continue;
    const owned = decodeFields(entry.fieldsV1);
    for (const path of appliedFields) {
      const differs = JSON.stringify(valueAt(applied, path)) !== JSON.stringify(valueAt(liveObject, path));
      const clash = owned.find((ownedPath) => overlaps(ownedPath, path));
      if (differs && clash) conflicts.push({ entry, path: clash.length < path.length ? clash : path });
    }
  }
  if (conflicts.length > 0 && !request.force) {
    const unique = new Map(
      conflicts.map((conflict) => [`${conflict.entry.manager}${pathKey(conflict.path)}`, conflict]),
    );
    throw conflictError([...unique.values()]);
  }
  if (request.force) {
    // Forced: the other managers lose the fields taken from them.
    entries = entries
      .map((entry) => {
        const taken = conflicts
          .filter((conflict) => conflict.entry === entry)
          .map((conflict) => conflict.path);
        if (taken.length === 0) return entry;
        const remaining = decodeFields(entry.fieldsV1).filter(
          (path) => !taken.some((lost) => overlaps(lost, path)),
        );
        return { ...entry, fieldsV1: encodeFields(remaining) };
      })
      .filter((entry) => Object.keys(entry.fieldsV1).length > 0);
  }

  const result = merge(liveObject, applied) as Record<string, unknown>;
  // Fields this manager applied before and no longer applies go, unless someone else owns them.
  const previous = entries.find(isMine);
  const appliedKeys = new Set(appliedFields.map(pathKey));
  for (const path of previous ? decodeFields(previous.fieldsV1) : []) {
    if (appliedKeys.has(pathKey(path))) continue;
    const ownedElsewhere = entries.some(
      (entry) => !isMine(entry) && decodeFields(entry.fieldsV1).some((owned) => overlaps(owned, path)),
    );
    if (!ownedElsewhere) removeAt(result, path);
  }
  const object = result as unknown as KubeObject;
  object.metadata = { ...object.metadata, managedFields: withEntry(entries, record, 'Apply', appliedFields) };
  return object;
}
