/**
 * The API server's defaulting and validation of a CustomResourceDefinition itself (apiextensions.k8s.io/v1):
 * names, group, scope, one storage version, a structural schema for every version (with its defaults
 * valid and pruned), printer columns, and what an update may not change.
 *
 * Upstream (kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver/pkg/`):
 * `apis/apiextensions/v1/defaults.go` (singular, listKind, conversion),
 * `apis/apiextensions/validation/validation.go` (`ValidateCustomResourceDefinition`, `…Spec`, `…Names`,
 * `…ColumnDefinition`, `…StoredVersions`, the immutable fields of an update, protected groups) and
 * `apiserver/schema/validation.go` (`ValidateStructural`: the messages of the structural checks).
 */
import type { KubeObject } from '../contracts.js';
import { pruneValue, validateValue } from './crd-schema.js';
import { type FieldError, forbidden, invalidValue, keyPath, notSupported, required } from './field-errors.js';
import type { Schema } from './openapi-schemas.js';

const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS_1123_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const APPROVAL = 'api-approved.kubernetes.io';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function record(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function dns1035(field: string, value: string, prefix = ''): FieldError[] {
  if (value.length > 63) return [invalidValue(field, value, `${prefix}must be no more than 63 characters`)];
  return DNS_1035_LABEL.test(value) ? [] : [invalidValue(field, value, `${prefix}${DNS_1035_MESSAGE}`)];
}

/** The versions of a CRD's spec (`spec.versions[]`), as records. */
export function versionsOf(crd: KubeObject): Record<string, unknown>[] {
  const versions = record(crd.spec).versions;
  return Array.isArray(versions) ? versions.map(record) : [];
}

/** The version marked `storage: true` (exactly one, once validated). */
export function storageVersionOf(crd: KubeObject): string | undefined {
  return versionsOf(crd)
    .filter((version) => version.storage === true)
    .map((version) => text(version.name))[0];
}

/** `SetDefaults_CustomResourceDefinition`: singular and listKind from the kind, conversion None. */
export function defaultCrd(crd: KubeObject): void {
  const spec = record(crd.spec);
  if (!isObject(crd.spec)) return;
  const names = record(spec.names);
  if (isObject(spec.names)) {
    const kind = text(names.kind);
    if (text(names.singular) === '' && kind !== '') names.singular = kind.toLowerCase();
    if (text(names.listKind) === '' && kind !== '') names.listKind = `${kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
}

function validateNames(names: Record<string, unknown>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['plural', 'singular', 'kind', 'listKind'] as const) {
    if (text(names[field]) === '') errors.push(required(`${path}.${field}`));
  }
  for (const field of ['plural', 'singular'] as const) {
    const value = text(names[field]);
    if (value !== '') errors.push(...dns1035(`${path}.${field}`, value));
  }
  for (const field of ['kind', 'listKind'] as const) {
    const value = text(names[field]);
    if (value !== '' && !DNS_1035_LABEL.test(value.toLowerCase())) {
      errors.push(
        invalidValue(
          `${path}.${field}`,
          value,
          `may have mixed case, but should otherwise match: ${DNS_1035_MESSAGE}`,
        ),
      );
    }
  }
  if (text(names.kind) !== '' && names.kind === names.listKind) {
    errors.push(invalidValue(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  }
  for (const field of ['shortNames', 'categories'] as const) {
    const list = Array.isArray(names[field]) ? (names[field] as unknown[]) : [];
    list.forEach((entry, index) => errors.push(...dns1035(`${path}.${field}[${index}]`, text(entry))));
  }
  return errors;
}

/**
 * A default must validate against its own schema and survive pruning
 * (`apiserver/schema/defaulting/validation.go`); errors name the default's place in the CRD.
 */
function validateSchemaDefault(schema: Schema, path: string): FieldError[] {
  const { default: value, ...rest } = schema;
  const at = `${path}.default`;
  const errors = validateValue(structuredClone(value), rest, at);
  if (pruneValue(structuredClone(value), rest).length > 0)
    errors.push(invalidValue(at, value, 'must not have unknown fields'));
  return errors;
}

type Level = 'root' | 'item' | 'field';

const EMPTY_TYPE: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

/** `ValidateStructural` and the schema checks of `ValidateCustomResourceDefinitionOpenAPISchema`. */
function validateStructural(schema: Schema, path: string, level: Level, errors: FieldError[]): void {
  const type = text(schema.type);
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'];
  const properties = record(schema.properties);
  if (type === 'array' && schema.items === undefined)
    errors.push(required(`${path}.items`, 'must be specified'));
  if (isObject(schema.items)) validateStructural(schema.items, `${path}.items`, 'item', errors);
  for (const [key, property] of Object.entries(properties)) {
    if (level === 'root' && key === 'metadata') continue;
    validateStructural(record(property), keyPath(`${path}.properties`, key), 'field', errors);
  }
  if (schema.additionalProperties !== undefined) {
    if (level === 'root')
      errors.push(forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    if (Object.keys(properties).length > 0 && schema.additionalProperties !== true)
      errors.push(
        forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'),
      );
    if (isObject(schema.additionalProperties))
      validateStructural(schema.additionalProperties, `${path}.additionalProperties`, 'field', errors);
  }
  if (type === '' && !intOrString && preserve !== true)
    errors.push(required(`${path}.type`, EMPTY_TYPE[level]));
  if (level === 'root' && type !== '' && type !== 'object')
    errors.push(invalidValue(`${path}.type`, type, 'must be object at the root'));
  if (preserve === false)
    errors.push(
      invalidValue(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'),
    );
  if (schema.uniqueItems === true)
    errors.push(
      forbidden(
        `${path}.uniqueItems`,
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  if (typeof schema.pattern === 'string') {
    try {
      new RegExp(schema.pattern, 'u');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      errors.push(
        invalidValue(
          `${path}.pattern`,
          schema.pattern,
          `must be a valid regular expression, but isn't: ${reason}`,
        ),
      );
    }
  }
  if (level === 'root' && isObject(properties.metadata)) {
    const metadata = properties.metadata;
    const metadataPath = keyPath(`${path}.properties`, 'metadata');
    if (metadata.type !== undefined && metadata.type !== 'object')
      errors.push(invalidValue(`${metadataPath}.type`, metadata.type, 'must be object'));
    const rest = Object.keys(metadata).filter((key) => key !== 'type' && key !== 'properties');
    const names = Object.keys(record(metadata.properties)).filter(
      (key) => key !== 'name' && key !== 'generateName',
    );
    if (rest.length > 0 || names.length > 0)
      errors.push(
        forbidden(
          metadataPath,
          'must not specify anything other than name and generateName, but metadata is implicitly specified',
        ),
      );
  }
  if (schema.default !== undefined && level !== 'root') errors.push(...validateSchemaDefault(schema, path));
}

function validateColumns(columns: unknown, path: string): FieldError[] {
  if (!Array.isArray(columns)) return [];
  const errors: FieldError[] = [];
  columns.map(record).forEach((column, index) => {
    const at = `${path}[${index}]`;
    if (text(column.name) === '') errors.push(required(`${at}.name`));
    const type = text(column.type);
    if (type === '') errors.push(required(`${at}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
    else if (!COLUMN_TYPES.includes(type)) errors.push(notSupported(`${at}.type`, type, COLUMN_TYPES));
    const format = text(column.format);
    if (format !== '' && !COLUMN_FORMATS.includes(format))
      errors.push(notSupported(`${at}.format`, format, COLUMN_FORMATS));
    const jsonPath = text(column.jsonPath);
    if (jsonPath === '') errors.push(required(`${at}.jsonPath`));
    else if (!jsonPath.startsWith('.'))
      errors.push(invalidValue(`${at}.jsonPath`, jsonPath, 'must be a simple json path starting with .'));
  });
  return errors;
}

function validateVersions(spec: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const versions = Array.isArray(spec.versions) ? spec.versions.map(record) : [];
  const names = versions.map((version) => text(version.name));
  versions.forEach((version, index) => {
    const at = `spec.versions[${index}]`;
    errors.push(...dns1035(`${at}.name`, names[index] ?? ''));
    const schema = record(version.schema).openAPIV3Schema;
    if (!isObject(schema)) errors.push(required(`${at}.schema.openAPIV3Schema`, 'schemas are required'));
    else validateStructural(schema, `${at}.schema.openAPIV3Schema`, 'root', errors);
    const subresources = record(version.subresources);
    if (isObject(subresources.scale) && text(subresources.scale.specReplicasPath) === '')
      errors.push(required(`${at}.subresources.scale.specReplicasPath`));
    errors.push(...validateColumns(version.additionalPrinterColumns, `${at}.additionalPrinterColumns`));
  });
  if (new Set(names).size !== names.length)
    errors.push(invalidValue('spec.versions', spec.versions, 'must contain unique version names'));
  if (versions.filter((version) => version.storage === true).length !== 1)
    errors.push(
      invalidValue(
        'spec.versions',
        spec.versions ?? [],
        'must have exactly one version marked as storage version',
      ),
    );
  return errors;
}

/** `ValidateCustomResourceDefinition` (create) and, with `old`, `ValidateCustomResourceDefinitionUpdate`. */
export function validateCrd(crd: KubeObject, old?: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = record(crd.spec);
  const names = record(spec.names);
  const group = text(spec.group);
  const expectedName = `${text(names.plural)}.${group}`;
  if (crd.metadata.name !== expectedName)
    errors.push(invalidValue('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  if (group === '') errors.push(required('spec.group'));
  else if (!DNS_1123_SUBDOMAIN.test(group)) errors.push(invalidValue('spec.group', group, DNS_1123_MESSAGE));
  else if (!group.includes('.'))
    errors.push(invalidValue('spec.group', group, 'should be a domain with at least one dot'));
  const protectedGroup = /(^|\.)(k8s\.io|kubernetes\.io)$/.test(group);
  if (protectedGroup && crd.metadata.annotations?.[APPROVAL] === undefined) {
    errors.push(
      required(
        keyPath('metadata.annotations', APPROVAL),
        `protected groups must have approval annotation "${APPROVAL}", see https://github.com/kubernetes/enhancements/pull/1111`,
      ),
    );
  }
  const scope = text(spec.scope);
  if (scope === '') errors.push(required('spec.scope'));
  else if (!['Cluster', 'Namespaced'].includes(scope))
    errors.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  errors.push(...validateNames(names, 'spec.names'));
  errors.push(...validateVersions(spec));
  if (spec.preserveUnknownFields === true) {
    errors.push(
      invalidValue(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  const strategy = text(record(spec.conversion).strategy);
  if (!['None', 'Webhook'].includes(strategy))
    errors.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  if (old) errors.push(...validateUpdate(crd, old));
  return errors;
}

function validateUpdate(crd: KubeObject, old: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const spec = record(crd.spec);
  const oldSpec = record(old.spec);
  const immutable = (field: string, now: unknown, before: unknown): void => {
    if (JSON.stringify(now) !== JSON.stringify(before))
      errors.push(invalidValue(field, now, 'field is immutable'));
  };
  immutable('spec.group', spec.group, oldSpec.group);
  immutable('spec.names.plural', record(spec.names).plural, record(oldSpec.names).plural);
  const conditions = record(old.status).conditions;
  const established =
    Array.isArray(conditions) &&
    conditions.some(
      (condition) => record(condition).type === 'Established' && record(condition).status === 'True',
    );
  if (established) {
    immutable('spec.scope', spec.scope, oldSpec.scope);
    immutable('spec.names.kind', record(spec.names).kind, record(oldSpec.names).kind);
  }
  const served = new Set(versionsOf(crd).map((version) => text(version.name)));
  const stored = record(crd.status).storedVersions;
  (Array.isArray(stored) ? stored : []).forEach((version, index) => {
    if (!served.has(text(version)))
      errors.push(invalidValue(`status.storedVersions[${index}]`, version, 'must appear in spec.versions'));
  });
  return errors;
}

/** Every schema of the CRD, with the path its errors are reported under. */
export function schemasOf(crd: KubeObject): { path: string; schema: Schema }[] {
  return versionsOf(crd).flatMap((version, index) => {
    const schema = record(version.schema).openAPIV3Schema;
    return isObject(schema) ? [{ path: `spec.versions[${index}].schema.openAPIV3Schema`, schema }] : [];
  });
}
