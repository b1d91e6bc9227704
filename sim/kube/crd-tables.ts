/**
 * Table output (what `kubectl get` asks for) of custom resources and of CustomResourceDefinitions:
 * a custom resource's columns are `Name` and its version's `additionalPrinterColumns` (or one `Age`
 * column when it declares none); a CRD's are `Name` and `Created At`.
 *
 * Upstream (kubernetes/kubernetes): `staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor/tableconvertor.go`
 * (`New`, `ConvertToTable`, `cellForJSONValue`: a `string` column prints what JSONPath prints, an
 * `integer`/`number`/`boolean` column the typed value or nothing, a `date` column the age of the
 * timestamp, a missing value `nil`), `apiextensions-apiserver/pkg/apiserver/customresource_handler.go`
 * (`serveDefaultColumnsIfEmpty`) and `staging/src/k8s.io/apiserver/pkg/registry/rest/table.go`
 * (`defaultTableConvertor`: `Name`, `Created At`).
 */
import type { KubeObject } from '../contracts.js';
import type { PrinterColumn } from './crd-types.js';
import { findJsonPath } from './jsonpath.js';
import type { IncludeObject } from './tables.js';
import { humanDuration } from './tables.js';

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const CREATED_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** The column a version without `additionalPrinterColumns` gets. */
export const DEFAULT_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Age', type: 'date', description: CREATED_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' },
];

function nameColumn(): Record<string, unknown> {
  return { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };
}

/** What `jsonpath.PrintResults` prints for one value: text as it is, anything else as JSON. */
function printed(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function cell(column: PrinterColumn, object: KubeObject, nowMs: number): unknown {
  let found: unknown[];
  try {
    found = findJsonPath(column.jsonPath, object);
  } catch {
    return null;
  }
  if (found.length === 0 || found[0] === undefined || found[0] === null) return null;
  const value = found[0];
  switch (column.type) {
    case 'string':
      return printed(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      const at = Date.parse(value);
      return Number.isNaN(at) ? '<invalid>' : humanDuration(nowMs - at);
    }
    default:
      return null;
  }
}

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

function table(
  columns: Record<string, unknown>[],
  cells: (object: KubeObject) => unknown[],
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  include: IncludeObject,
  withColumns: boolean,
): object {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withColumns ? columns : [],
    rows: objects.map((object) => {
      const row = rowObject(object, include);
      return { cells: cells(object), ...(row === undefined ? {} : { object: row }) };
    }),
  };
}

/** A custom resource's Table: `Name`, then its printer columns. */
export function renderCustomTable(
  columns: readonly PrinterColumn[],
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  nowMs: number,
  include: IncludeObject,
  withColumns = true,
): object {
  const definitions = [
    nameColumn(),
    ...columns.map((column) => ({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description:
        column.description ?? `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
      priority: column.priority ?? 0,
    })),
  ];
  const cells = (object: KubeObject): unknown[] => [
    object.metadata.name,
    ...columns.map((column) => cell(column, object, nowMs)),
  ];
  return table(definitions, cells, objects, listMeta, include, withColumns);
}

/** The API server's default Table, which CustomResourceDefinitions get: `Name`, `Created At`. */
export function renderCrdTable(
  objects: readonly KubeObject[],
  listMeta: Record<string, unknown>,
  include: IncludeObject,
  withColumns = true,
): object {
  const definitions = [
    nameColumn(),
    { name: 'Created At', type: 'date', format: '', description: CREATED_DESCRIPTION, priority: 0 },
  ];
  const cells = (object: KubeObject): unknown[] => [object.metadata.name, object.metadata.creationTimestamp];
  return table(definitions, cells, objects, listMeta, include, withColumns);
}
