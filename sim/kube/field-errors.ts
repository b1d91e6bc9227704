/**
 * Field errors as the API server words them (apimachinery's `field.Error`) and the 422 `Invalid` Status
 * that carries a list of them, for the CustomResourceDefinition and custom resource validation
 * (crd-validation.ts, crd-schema.ts).
 *
 * Upstream: kubernetes/kubernetes `staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go`
 * (`ErrorBody`, the constructors and their details) and
 * `staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go` (`NewInvalid`: the message
 * `<Kind>.<group> "<name>" is invalid: <errors>`, one error as it is, several as `[e1, e2]`, and one
 * cause per error).
 */
import { KubeApiError } from './status.js';

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** The value shown after the type; absent for the types that never show one. */
  value?: unknown;
  detail: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
};

/**
 * A value the way Go's `%v`/`%q` print it in an error: strings quoted, numbers and booleans bare, null
 * as `null`; objects and arrays as JSON (Go prints its own `%#v` form of a map there; see sim/README.md).
 */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** `field.Error.ErrorBody`: the type, the value where the type shows one, then the detail. */
export function errorBody(error: FieldError): string {
  const shown = !['FieldValueRequired', 'FieldValueForbidden', 'FieldValueTooLong'].includes(error.type);
  let body = TYPE_TEXT[error.type];
  if (shown && 'value' in error) body += `: ${formatValue(error.value)}`;
  return error.detail === '' ? body : `${body}: ${error.detail}`;
}

export function errorText(error: FieldError): string {
  return `${error.field}: ${errorBody(error)}`;
}

export const required = (field: string, detail = ''): FieldError => ({
  type: 'FieldValueRequired',
  field,
  detail,
});
export const invalidValue = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  value,
  detail,
});
export const forbidden = (field: string, detail: string): FieldError => ({
  type: 'FieldValueForbidden',
  field,
  detail,
});
export const notSupported = (field: string, value: unknown, supported: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail:
    supported.length === 0
      ? ''
      : `supported values: ${supported.map((entry) => JSON.stringify(entry)).join(', ')}`,
});

/** A field path step for a map key or a property name the way `field.Path.Key` prints it. */
export function keyPath(base: string, key: string): string {
  return `${base}[${key}]`;
}

/**
 * The 422 the API server answers for these errors (duplicates dropped, as `ToAggregate` does): kubectl
 * prints it as `The <Kind> "<name>" is invalid: …` from the details.
 */
export function invalidObject(
  kind: string,
  group: string,
  name: string,
  errors: readonly FieldError[],
): KubeApiError {
  const seen = new Set<string>();
  const unique = errors.filter((error) => {
    const text = errorText(error);
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
  const texts = unique.map(errorText);
  const aggregate = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
  const qualified = group === '' ? kind : `${kind}.${group}`;
  return new KubeApiError('Invalid', `${qualified} "${name}" is invalid: ${aggregate}`, {
    name,
    ...(group === '' ? {} : { group }),
    kind,
    causes: unique.map((error) => ({ reason: error.type, message: errorBody(error), field: error.field })),
  });
}
