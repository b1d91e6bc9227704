/**
 * Kubernetes `Status` error objects: the one error shape every API server reply uses, so clients
 * (client-node's ApiException, kubectl) see the same reasons and codes as from a real cluster.
 */
import type { KubeStoreError } from '../contracts.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: StatusReason | '';
  details?: StatusDetails;
  code: number;
}

const CODES: Record<StatusReason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  AlreadyExists: 409,
  Conflict: 409,
  Expired: 410,
  NotAcceptable: 406,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
};

/** An API failure that the handler turns into a `Status` reply. */
export class KubeApiError extends Error {
  readonly code: number;
  constructor(
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    readonly retryAfterSeconds?: number,
    code?: number,
  ) {
    super(message);
    this.name = 'KubeApiError';
    this.code = code ?? CODES[reason];
  }

  toStatus(): KubeStatus {
    const details: StatusDetails | undefined =
      this.retryAfterSeconds === undefined
        ? this.details
        : { ...this.details, retryAfterSeconds: this.retryAfterSeconds };
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(details ? { details } : {}),
      code: this.code,
    };
  }
}

/** Identifies the object an error is about, as the API server fills `details`. */
export interface ObjectRef {
  /** Plural resource name, e.g. `nodes`, `pods`. */
  resource: string;
  group: string;
  name: string;
}

function qualified(ref: ObjectRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

function refDetails(ref: ObjectRef): StatusDetails {
  return { name: ref.name, ...(ref.group === '' ? {} : { group: ref.group }), kind: ref.resource };
}

export function notFound(ref: ObjectRef): KubeApiError {
  return new KubeApiError('NotFound', `${qualified(ref)} "${ref.name}" not found`, refDetails(ref));
}

export function alreadyExists(ref: ObjectRef): KubeApiError {
  return new KubeApiError('AlreadyExists', `${qualified(ref)} "${ref.name}" already exists`, refDetails(ref));
}

export function conflict(ref: ObjectRef): KubeApiError {
  return new KubeApiError(
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(ref)} "${ref.name}": the object has been modified; please apply your changes to the latest version and try again`,
    refDetails(ref),
  );
}

/** 422 with the API server's wording: `Node "x" is invalid: spec.unschedulable: Invalid value: …`. */
export function invalid(
  kind: string,
  group: string,
  name: string,
  field: string,
  detail: string,
): KubeApiError {
  const message = `${field}: ${detail}`;
  return new KubeApiError('Invalid', `${kind} "${name}" is invalid: ${message}`, {
    name,
    ...(group === '' ? {} : { group }),
    kind,
    causes: [{ reason: 'FieldValueInvalid', message: detail, field }],
  });
}

export function badRequest(message: string): KubeApiError {
  return new KubeApiError('BadRequest', message);
}

/** Maps store errors (which know nothing about HTTP) onto the API server's Status errors. */
export function fromStoreError(error: KubeStoreError, ref: ObjectRef): KubeApiError {
  switch (error.reason) {
    case 'NotFound':
      return notFound(ref);
    case 'AlreadyExists':
      return alreadyExists(ref);
    case 'Conflict':
      return conflict(ref);
  }
}
