/**
 * Per-kind checks a write meets after decoding, with the real server's wording:
 *
 * - **Lease** (coordination.k8s.io/v1): `acquireTime`/`renewTime` are MicroTime, decoded with exactly
 *   six fractional digits (apimachinery `pkg/apis/meta/v1/micro_time.go`, `RFC3339Micro`; Go's parser
 *   takes no other count), else 400 `Lease in version "v1" cannot be handled as a Lease: parsing time …`;
 *   `leaseDurationSeconds` > 0 and `leaseTransitions` ≥ 0, `preferredHolder` only with `strategy`
 *   (kubernetes `pkg/apis/coordination/validation/validation.go` `ValidateLeaseSpec`), else 422.
 *   A PUT without `metadata.resourceVersion` is checked in api-writes.ts (`leaseStrategy`
 *   `AllowUnconditionalUpdate` is false, kubernetes `pkg/registry/coordination/lease/strategy.go`).
 * - **AzureMachinePool**: its CRD's required fields (`spec.location`, `spec.template`,
 *   `spec.template.vmSize`, `spec.template.osDisk`; cluster-api-provider-azure
 *   `config/crd/bases/infrastructure.cluster.x-k8s.io_azuremachinepools.yaml`), then CAPZ's validating
 *   webhook (`internal/exp/webhooks/azuremachinepool_webhook.go`: `ValidateImage` of
 *   `internal/webhooks/azureimage_validation.go`, `validateStrategy`), denied with 403 as the API server
 *   reports a webhook's denial.
 * - **MachinePool**: Cluster API's validating webhook (`core/webhooks/admission/machinepool.go`
 *   `validate`): a bootstrap configRef or dataSecretName, `spec.clusterName` immutable and equal to
 *   `spec.template.spec.clusterName`, a version starting with `v`.
 */
import type { KubeObject } from '../contracts.js';
import { specOf } from './objects.js';
import { KubeApiError } from './status.js';

type Json = Record<string, unknown>;

const RFC3339_MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?(Z|[+-]\d\d:\d\d)$/;

/** Checks `next` (a create when `existing` is undefined) of `resource`; throws the server's error. */
export function admit(resource: string, next: KubeObject, existing: KubeObject | undefined): void {
  if (resource === 'leases') admitLease(next);
  if (resource === 'azuremachinepools') admitAzureMachinePool(next);
  if (resource === 'machinepools') admitMachinePool(next, existing);
}

/** The server's 422 for a PUT of a Lease without a resourceVersion (no unconditional update). */
export function leaseUpdateNeedsResourceVersion(name: string): KubeApiError {
  const detail = 'Invalid value: 0x0: must be specified for an update';
  return new KubeApiError(
    'Invalid',
    `leases.coordination.k8s.io "${name}" is invalid: metadata.resourceVersion: ${detail}`,
    {
      name,
      group: 'coordination.k8s.io',
      kind: 'leases',
      causes: [{ reason: 'FieldValueInvalid', message: detail, field: 'metadata.resourceVersion' }],
    },
  );
}

function admitLease(lease: KubeObject): void {
  const spec = specOf(lease);
  for (const field of ['acquireTime', 'renewTime'] as const) {
    const value = spec[field];
    if (value === undefined || value === null) continue;
    const problem = microTimeProblem(value);
    if (problem !== undefined) {
      throw new KubeApiError('BadRequest', `Lease in version "v1" cannot be handled as a Lease: ${problem}`);
    }
  }
  const errors: FieldError[] = [];
  const duration = spec.leaseDurationSeconds;
  if (typeof duration === 'number' && duration <= 0) {
    errors.push(fieldInvalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  }
  const transitions = spec.leaseTransitions;
  if (typeof transitions === 'number' && transitions < 0) {
    errors.push(fieldInvalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  if (spec.strategy !== undefined && spec.strategy !== null && spec.strategy !== 'OldestEmulationVersion') {
    errors.push({
      field: 'spec.strategy',
      reason: 'FieldValueNotSupported',
      detail: `Unsupported value: ${JSON.stringify(spec.strategy)}: supported values: "OldestEmulationVersion"`,
    });
  }
  const preferred = spec.preferredHolder;
  if (
    typeof preferred === 'string' &&
    preferred !== '' &&
    (spec.strategy === undefined || spec.strategy === '')
  ) {
    errors.push({
      field: 'spec.preferredHolder',
      reason: 'FieldValueForbidden',
      detail: 'Forbidden: may only be specified if `strategy` is defined',
    });
  }
  if (errors.length > 0)
    throw invalidObject('Lease.coordination.k8s.io', 'coordination.k8s.io', 'Lease', lease, errors);
}

/** Go's parse error for a MicroTime that is not `2006-01-02T15:04:05.000000Z07:00`. */
function microTimeProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `json: cannot unmarshal ${typeof value} into Go value of type string`;
  const match = RFC3339_MICRO.exec(value);
  if (match?.[1] !== undefined) return undefined;
  const layout = '2006-01-02T15:04:05.000000Z07:00';
  const seconds = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.exec(value);
  if (seconds === null)
    return `parsing time ${JSON.stringify(value)} as "${layout}": cannot parse ${JSON.stringify(value)} as "2006"`;
  const rest = value.slice(seconds[0].length);
  const fraction = /^\.(\d*)/.exec(rest);
  // Exactly six digits after the dot, then the zone: fewer is ".000000" not matched, more is the zone.
  if (fraction !== null && (fraction[1] ?? '').length > 6) {
    return `parsing time ${JSON.stringify(value)} as "${layout}": cannot parse ${JSON.stringify(rest.slice(7))} as "Z07:00"`;
  }
  return `parsing time ${JSON.stringify(value)} as "${layout}": cannot parse ${JSON.stringify(rest)} as ".000000"`;
}

function admitAzureMachinePool(amp: KubeObject): void {
  const spec = specOf(amp);
  const template = isJson(spec.template) ? spec.template : undefined;
  const required: FieldError[] = [];
  const need = (object: Json | undefined, field: string, path: string): void => {
    if (object !== undefined && (object[field] === undefined || object[field] === null)) {
      required.push({ field: path, reason: 'FieldValueRequired', detail: 'Required value' });
    }
  };
  need(spec, 'location', 'spec.location');
  need(spec, 'template', 'spec.template');
  need(template, 'osDisk', 'spec.template.osDisk');
  need(template, 'vmSize', 'spec.template.vmSize');
  const image = template !== undefined && isJson(template.image) ? template.image : undefined;
  const kinds: [string, string[]][] = [
    ['marketplace', ['offer', 'publisher', 'sku', 'version']],
    ['computeGallery', ['gallery', 'name', 'version']],
    ['sharedGallery', ['gallery', 'name', 'resourceGroup', 'subscriptionID', 'version']],
  ];
  for (const [kind, fields] of kinds) {
    const value = image?.[kind];
    if (!isJson(value)) continue;
    for (const field of fields) need(value, field, `spec.template.image.${kind}.${field}`);
  }
  if (required.length > 0) {
    throw invalidObject(
      'AzureMachinePool.infrastructure.cluster.x-k8s.io',
      'infrastructure.cluster.x-k8s.io',
      'AzureMachinePool',
      amp,
      required,
    );
  }
  const denials = [...imageProblems(image), ...strategyProblems(spec)];
  if (denials.length > 0) {
    const message = denials.length === 1 ? (denials[0] ?? '') : `[${denials.join(', ')}]`;
    throw new KubeApiError(
      'Forbidden',
      `admission webhook "validation.azuremachinepool.infrastructure.cluster.x-k8s.io" denied the request: ${message}`,
    );
  }
}

/** azureimage_validation.go `ValidateImage`, as one aggregated message. */
function imageProblems(image: Json | undefined): string[] {
  if (image === undefined) return [];
  const errors: string[] = [];
  let found = typeof image.id === 'string';
  const detail = (kind: string, text: string): void => {
    if (found) errors.push(`image.${kind}: Forbidden: ${text}`);
    found = true;
  };
  if (isJson(image.marketplace))
    detail('Marketplace', 'Marketplace cannot be used as an image ID has been specified');
  if (isJson(image.sharedGallery))
    detail(
      'SharedGallery',
      'SharedGallery cannot be used as an image ID. Marketplace or ComputeGallery images has been specified',
    );
  if (isJson(image.computeGallery))
    detail(
      'ComputeGallery',
      'ComputeGallery cannot be used as an image ID. Marketplace or SharedGallery images has been specified',
    );
  if (!found)
    errors.push('image: Required value: You must supply an ID, Marketplace or ComputeGallery image details');
  if (isJson(image.computeGallery)) {
    const gallery = image.computeGallery;
    if (gallery.subscriptionID !== undefined && gallery.resourceGroup === undefined)
      errors.push(
        'image.ResourceGroup: Invalid value: "": ResourceGroup cannot be empty when SubscriptionID is specified',
      );
    if (gallery.resourceGroup !== undefined && gallery.subscriptionID === undefined)
      errors.push(
        'image.SubscriptionID: Invalid value: "": SubscriptionID cannot be empty when ResourceGroup is specified',
      );
  }
  if (image.id === '')
    errors.push('image.ID: Invalid value: "": ID cannot be empty when specifying an AzureImageByID');
  // field.ErrorList.ToAggregate: one error is its message, several are listed in brackets.
  return errors.length <= 1 ? errors : [`[${errors.join(', ')}]`];
}

/** `validateStrategy`: RollingUpdate (the defaulting webhook's type) with maxSurge 0 and maxUnavailable 0. */
function strategyProblems(spec: Json): string[] {
  const strategy = isJson(spec.strategy) ? spec.strategy : {};
  if (strategy.type !== undefined && strategy.type !== 'RollingUpdate') return [];
  const rolling = isJson(strategy.rollingUpdate) ? strategy.rollingUpdate : undefined;
  if (rolling?.maxSurge === 0 && rolling.maxUnavailable === 0) {
    return ['rolling update strategy MaxUnavailable must not be 0 if MaxSurge is 0'];
  }
  return [];
}

function admitMachinePool(pool: KubeObject, existing: KubeObject | undefined): void {
  const spec = specOf(pool);
  const templateSpec = isJson(spec.template) && isJson(spec.template.spec) ? spec.template.spec : {};
  const bootstrap = isJson(templateSpec.bootstrap) ? templateSpec.bootstrap : {};
  const errors: FieldError[] = [];
  if (!isJson(bootstrap.configRef) && typeof bootstrap.dataSecretName !== 'string') {
    errors.push({
      field: 'spec.template.spec.bootstrap',
      reason: 'FieldValueRequired',
      detail:
        'Required value: expected either spec.template.spec.bootstrap.dataSecretName or spec.template.spec.bootstrap.configRef to be populated',
    });
  }
  if (existing !== undefined && specOf(existing).clusterName !== spec.clusterName) {
    errors.push({
      field: 'spec.clusterName',
      reason: 'FieldValueForbidden',
      detail: 'Forbidden: field is immutable',
    });
  }
  if (spec.clusterName !== templateSpec.clusterName) {
    errors.push(
      fieldInvalid(
        'spec.clusterName',
        spec.clusterName,
        'spec.clusterName and spec.template.spec.clusterName must be set to the same value',
      ),
    );
  }
  const version = templateSpec.version;
  if (typeof version === 'string' && version !== '') {
    if (!version.startsWith('v'))
      errors.push(fieldInvalid('spec.template.spec.version', version, 'must start with v'));
    if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version.replace(/^v/, ''))) {
      errors.push(fieldInvalid('spec.template.spec.version', version, 'must be a valid semantic version'));
    }
  }
  if (errors.length > 0) {
    throw invalidObject('MachinePool.cluster.x-k8s.io', 'cluster.x-k8s.io', 'MachinePool', pool, errors);
  }
}

interface FieldError {
  readonly field: string;
  readonly reason: string;
  /** The error body: `Invalid value: …: detail`, `Required value`, `Forbidden: …`. */
  readonly detail: string;
}

function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value)
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : value === undefined || value === null
          ? 'null'
          : JSON.stringify(value);
  return { field, reason: 'FieldValueInvalid', detail: `Invalid value: ${shown}: ${detail}` };
}

/** apierrors.NewInvalid: `<Kind.group> "<name>" is invalid: <field: detail>` (several in brackets). */
function invalidObject(
  qualifiedKind: string,
  group: string,
  kind: string,
  object: KubeObject,
  errors: readonly FieldError[],
): KubeApiError {
  const name = object.metadata.name;
  const texts = errors.map((error) => `${error.field}: ${error.detail}`);
  const joined = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
  return new KubeApiError('Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, {
    name,
    group,
    kind,
    causes: errors.map((error) => ({ reason: error.reason, message: error.detail, field: error.field })),
  });
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
