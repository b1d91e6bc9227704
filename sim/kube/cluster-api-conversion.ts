/**
 * Conversion of Cluster API's MachinePool and Machine between `cluster.x-k8s.io/v1beta1` and `v1beta2`,
 * as Cluster API's conversion webhook does it (cluster-api `core/webhooks/conversion/machinepool.go`,
 * `machine.go`, `common.go`, and `api/core/v1beta1/conversion.go`), for the fields the product and the
 * simulator use:
 *
 * - `bootstrap.configRef` and `infrastructureRef` (an ObjectReference in v1beta1) are a
 *   ContractVersionedObjectReference in v1beta2: `{ apiGroup, kind, name }`; back to v1beta1 with the
 *   group's served version and the object's namespace (`convertToObjectReference`);
 * - MachinePool `spec.minReadySeconds` is `spec.template.spec.minReadySeconds` in v1beta2;
 *   `nodeDrainTimeout`, `nodeVolumeDetachTimeout`, `nodeDeletionTimeout` (durations) are
 *   `deletion.node…TimeoutSeconds`; empty `version`, `providerID`, `failureDomain` are dropped in v1beta1;
 * - status: the v1beta1 conditions, `failureReason`, `failureMessage` (and a MachinePool's
 *   `readyReplicas`, `availableReplicas`, `unavailableReplicas`) go under `status.deprecated.v1beta1`; the
 *   v1beta1 `status.v1beta2` block (conditions; a MachinePool's `readyReplicas`, `availableReplicas`,
 *   `upToDateReplicas`) becomes the top level; `bootstrapReady`/`infrastructureReady` become
 *   `initialization.bootstrapDataSecretCreated`/`infrastructureProvisioned` (true only); a Machine's
 *   `nodeRef` is `{ name }` (v1beta1: `{ apiVersion: v1, kind: Node, name }`); phase `Updating` is
 *   `Running` in v1beta1.
 *
 * The store holds the v1beta1 form (the simulated controllers write it); what a client writes at either
 * version goes through v1beta2 first, so both versions read back one object. Fields neither version
 * names pass through unchanged.
 */
import type { KubeObject } from '../contracts.js';
import { CLUSTER_API_GROUPS, CONVERTED_RESOURCES, type CoreVersion } from './cluster-api-resources.js';
import { invalid } from './status.js';

type Json = Record<string, unknown>;

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone(value: unknown): Json {
  return isJson(value) ? structuredClone<Json>(value) : {};
}

/** Sets `key` when the value is defined, deletes it otherwise. */
function put(target: Json, key: string, value: unknown): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

/** Takes the field out of an object (undefined when absent). */
function take(target: Json, key: string): unknown {
  const value = target[key];
  delete target[key];
  return value;
}

function isEmpty(value: Json): boolean {
  return Object.keys(value).length === 0;
}

/** A Go duration (`1m30s`, `90s`, `1h`, `500ms`) in whole seconds, as `ConvertToSeconds` truncates it. */
export function durationToSeconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  let total = 0;
  let rest = value;
  while (rest !== '') {
    const match = /^(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * (units[match[2] ?? 's'] ?? 1);
    rest = rest.slice(match[0].length);
  }
  return Math.trunc(total);
}

/** Seconds as Go's `time.Duration.String()` (`ConvertFromSeconds`): `90` → `1m30s`, `3600` → `1h0m0s`. */
export function secondsToDuration(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return undefined;
  const hours = Math.floor(value / 3600);
  const minutes = Math.floor((value % 3600) / 60);
  const seconds = value % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** The version a Cluster API group is served at (the contract's version: v1beta1 for the providers here). */
function servedVersionOf(group: string): string {
  return CLUSTER_API_GROUPS.find((entry) => entry.group === group)?.version ?? 'v1beta1';
}

function refToV1beta2(ref: unknown): Json | undefined {
  if (!isJson(ref)) return undefined;
  const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  const out: Json = {};
  put(out, 'apiGroup', group === '' ? undefined : group);
  put(out, 'kind', ref.kind);
  put(out, 'name', ref.name);
  return out;
}

function refToV1beta1(ref: unknown, namespace: string | undefined): Json | undefined {
  if (!isJson(ref) || typeof ref.apiGroup !== 'string') return undefined;
  const out: Json = { apiVersion: `${ref.apiGroup}/${servedVersionOf(ref.apiGroup)}` };
  put(out, 'kind', ref.kind);
  put(out, 'namespace', namespace);
  put(out, 'name', ref.name);
  return out;
}

const TIMEOUTS = [
  ['nodeDrainTimeout', 'nodeDrainTimeoutSeconds'],
  ['nodeVolumeDetachTimeout', 'nodeVolumeDetachTimeoutSeconds'],
  ['nodeDeletionTimeout', 'nodeDeletionTimeoutSeconds'],
] as const;

/** A v1beta1 MachineSpec (a Machine's, a MachinePool template's) as v1beta2. */
function machineSpecToV1beta2(spec: Json): Json {
  const out = clone(spec);
  const bootstrap = clone(out.bootstrap);
  if (bootstrap.configRef !== undefined) put(bootstrap, 'configRef', refToV1beta2(bootstrap.configRef));
  if (out.bootstrap !== undefined) out.bootstrap = bootstrap;
  if (out.infrastructureRef !== undefined) put(out, 'infrastructureRef', refToV1beta2(out.infrastructureRef));
  const deletion: Json = {};
  for (const [old, seconds] of TIMEOUTS) put(deletion, seconds, durationToSeconds(take(out, old)));
  if (!isEmpty(deletion)) out.deletion = deletion;
  return out;
}

/** A v1beta2 MachineSpec as v1beta1; a reference without `apiGroup` is refused as the v1beta2 CRD does. */
function machineSpecToV1beta1(
  spec: Json,
  namespace: string | undefined,
  field: string,
  owner: { kind: string; name: string },
): Json {
  const out = clone(spec);
  const requireGroup = (ref: unknown, path: string): void => {
    if (isJson(ref) && (typeof ref.apiGroup !== 'string' || ref.apiGroup === ''))
      throw invalid(
        owner.kind,
        'cluster.x-k8s.io',
        owner.name,
        `${field}.${path}.apiGroup`,
        'Required value',
      );
  };
  const bootstrap = clone(out.bootstrap);
  if (bootstrap.configRef !== undefined) {
    requireGroup(bootstrap.configRef, 'bootstrap.configRef');
    put(bootstrap, 'configRef', refToV1beta1(bootstrap.configRef, namespace));
  }
  if (out.bootstrap !== undefined) out.bootstrap = bootstrap;
  if (out.infrastructureRef !== undefined) {
    requireGroup(out.infrastructureRef, 'infrastructureRef');
    put(out, 'infrastructureRef', refToV1beta1(out.infrastructureRef, namespace));
  }
  const deletion = clone(take(out, 'deletion'));
  for (const [old, seconds] of TIMEOUTS) put(out, old, secondsToDuration(deletion[seconds]));
  for (const key of ['version', 'providerID', 'failureDomain']) if (out[key] === '') delete out[key];
  return out;
}

/** The status fields both kinds move the same way, v1beta1 → v1beta2. */
function statusToV1beta2(status: Json, deprecatedFields: readonly string[]): Json {
  const out = clone(status);
  const deprecated: Json = {};
  for (const key of ['conditions', 'failureReason', 'failureMessage', ...deprecatedFields])
    put(deprecated, key, take(out, key));
  const v1beta2 = clone(take(out, 'v1beta2'));
  for (const [key, value] of Object.entries(v1beta2)) out[key] = value;
  const initialization: Json = {};
  if (take(out, 'bootstrapReady') === true) initialization.bootstrapDataSecretCreated = true;
  if (take(out, 'infrastructureReady') === true) initialization.infrastructureProvisioned = true;
  if (!isEmpty(initialization)) out.initialization = initialization;
  if (!isEmpty(deprecated)) out.deprecated = { v1beta1: deprecated };
  return out;
}

/** The status fields both kinds move the same way, v1beta2 → v1beta1. */
function statusToV1beta1(status: Json, newFields: readonly string[]): Json {
  const out = clone(status);
  const v1beta2: Json = {};
  for (const key of ['conditions', ...newFields]) put(v1beta2, key, take(out, key));
  const deprecated = clone(clone(take(out, 'deprecated')).v1beta1);
  for (const [key, value] of Object.entries(deprecated)) out[key] = value;
  const initialization = clone(take(out, 'initialization'));
  out.bootstrapReady = initialization.bootstrapDataSecretCreated === true;
  out.infrastructureReady = initialization.infrastructureProvisioned === true;
  if (!isEmpty(v1beta2)) out.v1beta2 = v1beta2;
  return out;
}

/** The metadata, which an applied configuration may leave out. */
function metadataOf(object: KubeObject): { name?: string; namespace?: string } {
  return object.metadata ?? {};
}

const POOL_COUNTERS = ['readyReplicas', 'availableReplicas'];

function machinePoolToV1beta2(object: KubeObject): KubeObject {
  const out = { ...object };
  if (isJson(object.spec)) {
    const spec = clone(object.spec);
    const minReadySeconds = take(spec, 'minReadySeconds');
    if (isJson(spec.template)) {
      const template = clone(spec.template);
      const templateSpec = machineSpecToV1beta2(clone(template.spec));
      put(templateSpec, 'minReadySeconds', minReadySeconds);
      template.spec = templateSpec;
      spec.template = template;
    }
    out.spec = spec;
  }
  if (isJson(object.status) && !isEmpty(object.status))
    out.status = statusToV1beta2(object.status, [...POOL_COUNTERS, 'unavailableReplicas']);
  return out;
}

function machinePoolToV1beta1(object: KubeObject): KubeObject {
  const out = { ...object };
  const { name = '', namespace } = metadataOf(object);
  if (isJson(object.spec)) {
    const spec = clone(object.spec);
    if (isJson(spec.template)) {
      const template = clone(spec.template);
      const templateSpec = machineSpecToV1beta1(clone(template.spec), namespace, 'spec.template.spec', {
        kind: 'MachinePool',
        name,
      });
      put(spec, 'minReadySeconds', take(templateSpec, 'minReadySeconds'));
      template.spec = templateSpec;
      spec.template = template;
    }
    out.spec = spec;
  }
  if (isJson(object.status) && !isEmpty(object.status))
    out.status = statusToV1beta1(object.status, [...POOL_COUNTERS, 'upToDateReplicas']);
  return out;
}

function machineToV1beta2(object: KubeObject): KubeObject {
  const out = { ...object };
  if (isJson(object.spec)) out.spec = machineSpecToV1beta2(object.spec);
  if (isJson(object.status) && !isEmpty(object.status)) {
    const status = statusToV1beta2(object.status, []);
    if (isJson(status.nodeRef)) status.nodeRef = { name: status.nodeRef.name };
    out.status = status;
  }
  return out;
}

function machineToV1beta1(object: KubeObject): KubeObject {
  const out = { ...object };
  const { name = '', namespace } = metadataOf(object);
  if (isJson(object.spec))
    out.spec = machineSpecToV1beta1(object.spec, namespace, 'spec', {
      kind: 'Machine',
      name,
    });
  if (isJson(object.status) && !isEmpty(object.status)) {
    const status = statusToV1beta1(object.status, []);
    if (isJson(status.nodeRef) && typeof status.nodeRef.name === 'string' && status.nodeRef.name !== '')
      status.nodeRef = { apiVersion: 'v1', kind: 'Node', name: status.nodeRef.name };
    else delete status.nodeRef;
    if (status.phase === 'Updating') status.phase = 'Running';
    out.status = status;
  }
  return out;
}

/** Whether a resource at a version is converted (MachinePool and Machine of cluster.x-k8s.io). */
function converted(info: { resource: string; group: string }): boolean {
  return info.group === 'cluster.x-k8s.io' && CONVERTED_RESOURCES.has(info.resource);
}

/** The stored (v1beta1) object as a client of `info.version` reads it. */
export function toServedVersion(
  info: { resource: string; group: string; version: string },
  stored: KubeObject,
): KubeObject {
  if (!converted(info) || info.version !== 'v1beta2') return stored;
  const out = info.resource === 'machinepools' ? machinePoolToV1beta2(stored) : machineToV1beta2(stored);
  return { ...out, apiVersion: `${info.group}/v1beta2` };
}

/**
 * What a client wrote at `info.version` as the store keeps it. Where v1beta2 is served (the storage
 * version), a v1beta1 write goes through v1beta2 too, so that it keeps only what v1beta2 keeps.
 */
export function toStoredVersion(
  info: { resource: string; group: string; version: string },
  object: KubeObject,
  coreVersions: readonly CoreVersion[],
): KubeObject {
  if (!converted(info) || !coreVersions.includes('v1beta2')) return object;
  const hub = info.version === 'v1beta2' ? object : toServedVersion({ ...info, version: 'v1beta2' }, object);
  const out = info.resource === 'machinepools' ? machinePoolToV1beta1(hub) : machineToV1beta1(hub);
  return { ...out, apiVersion: `${info.group}/v1beta1` };
}
