/**
 * A custom resource against its CustomResourceDefinition's structural schema: pruning of unknown
 * fields, defaulting (and dropping nulls the schema does not allow), and validation with the API
 * server's wording.
 *
 * Upstream (kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/`):
 * `schema/pruning/algorithm.go` (unknown fields go unless `x-kubernetes-preserve-unknown-fields`; at
 * the root and in embedded resources `apiVersion`, `kind` and `metadata` are kept, metadata pruned to
 * ObjectMeta), `schema/defaulting/algorithm.go` and `prunenulls.go` (a missing field, or a null one
 * that is not `nullable`, gets its `default`; other non-nullable nulls go), `validation/validation.go`
 * (`kubeOpenAPIResultToFieldErrors`: required → `Required value`, enum → `Unsupported value`, maxLength
 * → `Too long`, maxItems → `Too many`, a type mismatch and every other check → `Invalid value` with
 * kube-openapi's `<path> in body …` detail, kubernetes/kube-openapi `pkg/validation/errors`).
 */
import { type FieldError, invalidValue, notSupported, required } from './field-errors.js';
import { DEFINITIONS, type Schema } from './openapi-schemas.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function schemaAt(value: unknown): Schema | undefined {
  return isObject(value) ? value : undefined;
}

/** A `$ref` (plain or in a one-element `allOf`) resolved against the server's own definitions. */
function resolve(schema: Schema): Schema {
  const viaAllOf = Array.isArray(schema.allOf) ? schemaAt(schema.allOf[0])?.$ref : undefined;
  const target = typeof schema.$ref === 'string' ? schema.$ref : viaAllOf;
  if (typeof target !== 'string') return schema;
  return DEFINITIONS[target.replace('#/definitions/', '')] ?? {};
}

function child(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** The JSON type kube-openapi names in its messages. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value === 'object' ? 'object' : typeof value;
}

// ------------------------------------------------------------------------------------------ pruning

/** Drops from `value` (in place) what `schema` does not specify; `pruned` gets each dropped path. */
function prune(value: unknown, schema: Schema, path: string, pruned: string[], resourceRoot: boolean): void {
  const resolved = resolve(schema);
  if (Array.isArray(value)) {
    const items = schemaAt(resolved.items);
    if (items) value.forEach((item, index) => prune(item, items, `${path}[${index}]`, pruned, false));
    return;
  }
  if (!isObject(value)) return;
  const root = resourceRoot || resolved['x-kubernetes-embedded-resource'] === true;
  const properties = schemaAt(resolved.properties) ?? {};
  const additional = resolved.additionalProperties;
  const preserve = resolved['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of Object.keys(value)) {
    const keyPath = child(path, key);
    if (root && (key === 'apiVersion' || key === 'kind')) continue;
    if (root && key === 'metadata') {
      prune(value[key], { $ref: `#/definitions/${OBJECT_META}` }, keyPath, pruned, false);
      continue;
    }
    const specified = schemaAt(properties[key]) ?? schemaAt(additional);
    if (specified) prune(value[key], specified, keyPath, pruned, false);
    else if (!(preserve || additional === true)) {
      delete value[key];
      pruned.push(keyPath);
    }
  }
}

/** Structural pruning of one value (not a resource root), e.g. a schema's default. */
export function pruneValue(value: unknown, schema: Schema): string[] {
  const pruned: string[] = [];
  prune(value, schema, '', pruned, false);
  return pruned;
}

/**
 * Structural pruning of a whole custom resource (in place): the unknown fields' paths, for the
 * `Warning` header or a Strict refusal (field-pruning.ts words both).
 */
export function pruneCustomResource(object: Record<string, unknown>, schema: Schema): string[] {
  const pruned: string[] = [];
  prune(object, schema, '', pruned, true);
  return pruned;
}

// ----------------------------------------------------------------------------------------- defaults

function applyDefaults(value: unknown, schema: Schema, resourceRoot: boolean): void {
  if (Array.isArray(value)) {
    const items = schemaAt(schema.items);
    if (items) for (const item of value) applyDefaults(item, items, false);
    return;
  }
  if (!isObject(value)) return;
  const properties = schemaAt(schema.properties) ?? {};
  for (const [key, property] of Object.entries(properties)) {
    if (resourceRoot && key === 'metadata') continue;
    const specified = schemaAt(property);
    if (!specified) continue;
    const absent = !(key in value);
    const disallowedNull = value[key] === null && specified.nullable !== true;
    if ('default' in specified && (absent || disallowedNull)) value[key] = structuredClone(specified.default);
    else if (disallowedNull) delete value[key];
  }
  const additional = schemaAt(schema.additionalProperties);
  for (const [key, entry] of Object.entries(value)) {
    if (resourceRoot && key === 'metadata') continue;
    const specified = schemaAt(properties[key]) ?? additional;
    if (specified) applyDefaults(entry, specified, specified['x-kubernetes-embedded-resource'] === true);
  }
}

/** Defaulting of a whole custom resource (in place), as on every write and every read. */
export function defaultCustomResource(object: Record<string, unknown>, schema: Schema): void {
  applyDefaults(object, schema, true);
}

// --------------------------------------------------------------------------------------- validation

function typeMatches(type: string, value: unknown): boolean {
  const actual = jsonType(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Quoted enum values the way `NotSupported` lists them (strings bare, others as JSON). */
function enumTexts(values: readonly unknown[]): string[] {
  return values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value)));
}

function numberChecks(value: number, schema: Schema, path: string, errors: FieldError[]): void {
  const { minimum, maximum, multipleOf } = schema;
  if (typeof minimum === 'number') {
    const exclusive = schema.exclusiveMinimum === true;
    if (exclusive ? value <= minimum : value < minimum) {
      const relation = exclusive ? 'greater than' : 'greater than or equal to';
      errors.push(invalidValue(path, value, `${path} in body should be ${relation} ${minimum}`));
    }
  }
  if (typeof maximum === 'number') {
    const exclusive = schema.exclusiveMaximum === true;
    if (exclusive ? value >= maximum : value > maximum) {
      const relation = exclusive ? 'less than' : 'less than or equal to';
      errors.push(invalidValue(path, value, `${path} in body should be ${relation} ${maximum}`));
    }
  }
  if (typeof multipleOf === 'number' && multipleOf > 0 && !Number.isInteger(value / multipleOf)) {
    errors.push(invalidValue(path, value, `${path} in body should be a multiple of ${multipleOf}`));
  }
}

function stringChecks(value: string, schema: Schema, path: string, errors: FieldError[]): void {
  const length = [...value].length;
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
    errors.push({
      type: 'FieldValueTooLong',
      field: path,
      value,
      detail: `may not be longer than ${schema.maxLength}`,
    });
  }
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    errors.push(
      invalidValue(path, value, `${path} in body should be at least ${schema.minLength} chars long`),
    );
  }
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) {
    errors.push(invalidValue(path, value, `${path} in body should match '${schema.pattern}'`));
  }
}

function arrayChecks(value: unknown[], schema: Schema, path: string, errors: FieldError[]): void {
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
    errors.push({
      type: 'FieldValueTooMany',
      field: path,
      value: value.length,
      detail: `must have at most ${schema.maxItems} items`,
    });
  }
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
    errors.push(invalidValue(path, value, `${path} in body should have at least ${schema.minItems} items`));
  }
  const listType = schema['x-kubernetes-list-type'];
  const keys = Array.isArray(schema['x-kubernetes-list-map-keys'])
    ? (schema['x-kubernetes-list-map-keys'] as unknown[]).filter((key) => typeof key === 'string')
    : [];
  if (listType === 'set' || (listType === 'map' && keys.length > 0)) {
    // schema/listtype/validation.go: a duplicate set item, or a duplicate key of a map list.
    const seen = new Set<string>();
    value.forEach((item, index) => {
      const identity =
        listType === 'set' || !isObject(item)
          ? item
          : Object.fromEntries(keys.map((key) => [key, item[key]]));
      const text = JSON.stringify(identity);
      if (seen.has(text))
        errors.push({ type: 'FieldValueDuplicate', field: `${path}[${index}]`, value: identity, detail: '' });
      seen.add(text);
    });
  }
  const items = schemaAt(schema.items);
  if (items) value.forEach((item, index) => validate(item, items, `${path}[${index}]`, errors));
}

function objectChecks(
  value: Record<string, unknown>,
  schema: Schema,
  path: string,
  errors: FieldError[],
): void {
  const count = Object.keys(value).length;
  if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) {
    errors.push({
      type: 'FieldValueTooMany',
      field: path,
      value: count,
      detail: `must have at most ${schema.maxProperties} items`,
    });
  }
  if (typeof schema.minProperties === 'number' && count < schema.minProperties) {
    errors.push(
      invalidValue(path, value, `${path} in body should have at least ${schema.minProperties} properties`),
    );
  }
  for (const name of Array.isArray(schema.required) ? schema.required : []) {
    if (typeof name === 'string' && !(name in value)) errors.push(required(child(path, name)));
  }
  // The schema's properties in the order the CRD declares them (the real validator's order is that
  // of a Go map, unspecified), then the others against additionalProperties.
  const properties = schemaAt(schema.properties) ?? {};
  for (const [key, property] of Object.entries(properties)) {
    const specified = schemaAt(property);
    if (specified && key in value) validate(value[key], specified, child(path, key), errors);
  }
  const additional = schemaAt(schema.additionalProperties);
  for (const [key, entry] of Object.entries(value)) {
    if (additional && !(key in properties)) validate(entry, additional, child(path, key), errors);
  }
}

function junctions(value: unknown, schema: Schema, path: string, errors: FieldError[]): void {
  const passes = (candidate: unknown): boolean => {
    const found: FieldError[] = [];
    const sub = schemaAt(candidate);
    if (sub) validate(value, sub, path, found);
    return found.length === 0;
  };
  if (Array.isArray(schema.allOf)) {
    for (const sub of schema.allOf) {
      const specified = schemaAt(sub);
      if (specified) validate(value, specified, path, errors);
    }
  }
  if (Array.isArray(schema.anyOf) && schema['x-kubernetes-int-or-string'] !== true) {
    if (!schema.anyOf.some(passes))
      errors.push(invalidValue(path, value, 'must validate at least one schema (anyOf)'));
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.filter(passes).length !== 1) {
    errors.push(invalidValue(path, value, 'must validate one and only one schema (oneOf)'));
  }
  if (schema.not !== undefined && passes(schema.not)) {
    errors.push(invalidValue(path, value, 'must not validate the schema (not)'));
  }
}

/** Validates one value against one schema node, appending the API server's field errors. */
function validate(value: unknown, schema: Schema, path: string, errors: FieldError[]): void {
  const type = typeof schema.type === 'string' ? schema.type : undefined;
  if (value === null) {
    if (schema.nullable === true || (type === undefined && schema['x-kubernetes-preserve-unknown-fields']))
      return;
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    const actual = jsonType(value);
    if (actual !== 'integer' && actual !== 'string') {
      const detail = `${path} in body must be of type integer,string: ${JSON.stringify(actual)}`;
      errors.push({ type: 'FieldValueTypeInvalid', field: path, value: actual, detail });
      return;
    }
  } else if (type !== undefined && !typeMatches(type, value)) {
    const actual = jsonType(value);
    const detail = `${path} in body must be of type ${type}: ${JSON.stringify(actual)}`;
    errors.push({ type: 'FieldValueTypeInvalid', field: path, value: actual, detail });
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
    errors.push(notSupported(path, value, enumTexts(schema.enum)));
  }
  if (typeof value === 'number') numberChecks(value, schema, path, errors);
  if (typeof value === 'string') stringChecks(value, schema, path, errors);
  if (Array.isArray(value)) arrayChecks(value, schema, path, errors);
  if (isObject(value)) objectChecks(value, schema, path, errors);
  junctions(value, schema, path, errors);
}

/** The field errors of one value against one schema, its errors under `path`. */
export function validateValue(value: unknown, schema: Schema, path: string): FieldError[] {
  const errors: FieldError[] = [];
  validate(value, schema, path, errors);
  return errors;
}

/**
 * Validates a whole custom resource: everything but `apiVersion`, `kind` and `metadata` against the
 * schema, and `metadata.name`/`generateName` against what the schema restricts of them (the only
 * metadata a CRD may constrain).
 */
export function validateCustomResource(object: Record<string, unknown>, schema: Schema): FieldError[] {
  const errors: FieldError[] = [];
  const properties = schemaAt(schema.properties) ?? {};
  const body = Object.fromEntries(
    Object.entries(object).filter(([key]) => !['apiVersion', 'kind', 'metadata'].includes(key)),
  );
  const withoutMeta: Schema = {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).filter(([key]) => key !== 'metadata')),
    required: (Array.isArray(schema.required) ? schema.required : []).filter(
      (name) => !['apiVersion', 'kind', 'metadata'].includes(String(name)),
    ),
  };
  validate(body, withoutMeta, '', errors);
  const metadataSchema = schemaAt(schemaAt(properties.metadata)?.properties);
  const metadata = schemaAt(object.metadata) ?? {};
  for (const field of ['name', 'generateName']) {
    const restriction = schemaAt(metadataSchema?.[field]);
    if (restriction && typeof metadata[field] === 'string')
      validate(metadata[field], restriction, `metadata.${field}`, errors);
  }
  return errors;
}

/** Whether a schema node restricts anything CEL would (the simulator does not evaluate CEL). */
export function celRulesAt(schema: Schema, path: string, found: string[]): void {
  if (Array.isArray(schema['x-kubernetes-validations']) && schema['x-kubernetes-validations'].length > 0)
    found.push(path);
  for (const [key, property] of Object.entries(schemaAt(schema.properties) ?? {})) {
    const specified = schemaAt(property);
    if (specified) celRulesAt(specified, `${path}.properties[${key}]`, found);
  }
  const items = schemaAt(schema.items);
  if (items) celRulesAt(items, `${path}.items`, found);
  const additional = schemaAt(schema.additionalProperties);
  if (additional) celRulesAt(additional, `${path}.additionalProperties`, found);
}
