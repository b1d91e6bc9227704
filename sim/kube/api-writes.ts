/**
 * The write verbs of the simulated Kubernetes API server: create (generateName, status reset),
 * update and the three patch types (with resourceVersion/UID preconditions, immutable fields and
 * status subresources), unknown fields dropped (field-pruning.ts); deletes and evictions are in
 * api-deletes.ts.
 */
import { createHash } from 'node:crypto';

import type { KubeObject, KubeStore, SimClock } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { messageOf } from '../errors.js';
import { admit, leaseUpdateNeedsResourceVersion } from './admission.js';
import { createKubeDeletes } from './api-deletes.js';
import type { KubeReads } from './api-reads.js';
import { HttpReply, isRecord, refOf, type ResourceRoute } from './api-routing.js';
import { toServedVersion, toStoredVersion } from './cluster-api-conversion.js';
import { type CoreVersion, CURRENT_CORE_VERSIONS } from './cluster-api-resources.js';
import type { KubeControllers } from './controllers.js';
import * as custom from './custom-writes.js';
import { pruneUnknownFields, warningHeader } from './field-pruning.js';
import {
  type ManagedFieldsEntry,
  recordUpdate,
  setManagedFields,
  type UpdateRecord,
  withoutTimes,
} from './managed-fields.js';
import { specOf } from './objects.js';
import type { PatchType } from './patch.js';
import { applyPatch, PATCH_CONTENT_TYPES } from './patch.js';
import type { ResourceInfo, ServedCustomResources } from './resources.js';
import { apiVersionOf } from './resources.js';
import { APPLY_CONTENT_TYPE, parseApplyBody, serverSideApply } from './server-side-apply.js';
import { alreadyExists, badRequest, conflict, invalid, KubeApiError } from './status.js';
import { checkImmutable, validateMetadata } from './validation.js';
import type { WriteOptions } from './write-options.js';

/** Resources whose main endpoint ignores status changes (they have a `/status` subresource). */
const STATUS_SUBRESOURCE = new Set([
  'nodes',
  'pods',
  'namespaces',
  'replicasets',
  'daemonsets',
  'deployments',
  'poddisruptionbudgets',
  // Cluster API's CRDs enable the status subresource (`subresources: status: {}`).
  'clusters',
  'machinepools',
  'azuremachinepools',
  'azuremachinepoolmachines',
  'kubeadmconfigs',
  'machines',
]);

/** Whether the main endpoint ignores status: a built-in kind above, a CRD, a custom resource's choice. */
function ignoresStatus(info: ResourceInfo): boolean {
  return STATUS_SUBRESOURCE.has(info.resource) || custom.customStatusSubresource(info);
}

/** Resources whose status a client may not set on create (the API server resets it). */
const RESET_STATUS_ON_CREATE = new Set([
  'pods',
  'replicasets',
  'daemonsets',
  'deployments',
  'poddisruptionbudgets',
]);

/** A uid for an object a dry run would create: stable for the same name, never stored. */
function dryRunUid(object: KubeObject): string {
  const hex = createHash('sha256')
    .update(`dry-run:${object.metadata.namespace ?? ''}/${object.metadata.name}`)
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface KubeWritesOptions {
  store: KubeStore;
  clock: SimClock;
  controllers: KubeControllers;
  reads: KubeReads;
  /** The custom resources served (crd-registry.ts). */
  custom?: ServedCustomResources;
  /** The cluster.x-k8s.io versions served (default both): a v1beta2 write is stored converted. */
  clusterApiVersions?: readonly CoreVersion[];
}

export type KubeWrites = ReturnType<typeof createKubeWrites>;

/** The write verbs over one store. */
export function createKubeWrites(options: KubeWritesOptions) {
  const { store, reads, clock } = options;
  const { decorate, requireObject, requireNamespace } = reads;
  const deletes = createKubeDeletes(options);
  const coreVersions = options.clusterApiVersions ?? CURRENT_CORE_VERSIONS;
  /** What a client sent at the route's version, as stored (cluster-api-conversion.ts). */
  const stored = (info: ResourceInfo, object: KubeObject): KubeObject =>
    toStoredVersion(info, object, coreVersions);

  // --- writes -----------------------------------------------------------------------------------

  function parseBody(body: Buffer, what: string): unknown {
    if (body.length === 0) throw badRequest(`${what}: request body is empty`);
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch (error) {
      throw badRequest(`${what}: ${messageOf(error)}`);
    }
  }

  function serveCreate(target: ResourceRoute, body: Buffer, options: WriteOptions): HttpReply {
    const { dryRun } = options;
    if (target.subresource === 'eviction') return deletes.serveEviction(target, body, dryRun);
    if (target.name !== undefined)
      throw new KubeApiError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    const parsed = parseBody(body, 'decoding object');
    if (!isRecord(parsed) || !isRecord(parsed.metadata))
      throw badRequest('decoding object: metadata is required');
    const { info } = target;
    const object = stored(info, parsed as unknown as KubeObject);
    const prune = custom.customPruner(info);
    const headers = warningHeader(
      pruneUnknownFields(object, {
        group: info.group,
        kind: info.kind,
        mode: options.fieldValidation,
        verb: 'create',
        ...(prune ? { prune } : {}),
      }),
    );
    custom.defaultDecoded(info, object);
    return createObject(target, object, options, headers, undefined);
  }

  /** Stores a new object: the create verb, and an apply that finds nothing (its own managed fields). */
  function createObject(
    target: ResourceRoute,
    object: KubeObject,
    options: WriteOptions,
    headers: Record<string, string>,
    applied: ManagedFieldsEntry[] | undefined,
  ): HttpReply {
    const { info } = target;
    const { dryRun } = options;
    const generateName: unknown = (object.metadata as unknown as Record<string, unknown>).generateName;
    object.apiVersion = apiVersionOf(info);
    object.kind = info.kind;
    if (info.namespaced) {
      if (object.metadata.namespace !== undefined && object.metadata.namespace !== target.namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      if (target.namespace === undefined)
        throw new KubeApiError(
          'MethodNotAllowed',
          'the server does not allow this method on the requested resource',
        );
      object.metadata.namespace = target.namespace;
      requireNamespace(target.namespace);
    }
    if (!object.metadata.name) {
      const base = generateName;
      if (typeof base !== 'string' || base === '') {
        throw invalid(
          info.kind,
          info.group,
          '',
          'metadata.name',
          'Required value: name or generateName is required',
        );
      }
      object.metadata.name = uniqueName(info, target.namespace, base);
    }
    validateMetadata(info.kind, info.group, object);
    admit(info.resource, object, undefined);
    for (const field of [
      'uid',
      'resourceVersion',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
    ] as const) {
      delete object.metadata[field];
    }
    if (RESET_STATUS_ON_CREATE.has(info.resource)) {
      object.status = info.resource === 'pods' ? { phase: 'Pending' } : {};
    }
    if (
      info.resource === 'pods' &&
      typeof specOf(object).nodeName === 'string' &&
      specOf(object).nodeName !== ''
    ) {
      object.status = {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null }],
      };
    }
    if (info.resource === 'namespaces') object.status = { phase: 'Active' };
    custom.prepareCreate(info, object);
    custom.validateCustomWrite(info, object);
    Object.assign(headers, custom.customWriteWarnings(info, object));
    delete object.metadata.managedFields;
    const managedFields = applied ?? recordUpdate(undefined, object, updateRecord(target, options));
    if (managedFields.length > 0) object.metadata.managedFields = managedFields;
    if (dryRun) {
      // Validated and answered as if created; nothing is stored (no resourceVersion is assigned).
      if (store.get(info.resource, target.namespace, object.metadata.name)) {
        throw alreadyExists(refOf(target, object.metadata.name));
      }
      object.metadata.uid = dryRunUid(object);
      object.metadata.creationTimestamp = nowTimestamp();
      return new HttpReply(201, decorate(info, object), headers);
    }
    try {
      return new HttpReply(201, decorate(info, store.create(info.resource, object)), headers);
    } catch (error) {
      if (error instanceof KubeStoreError) throw alreadyExists(refOf(target, object.metadata.name));
      throw error;
    }
  }

  function uniqueName(info: ResourceInfo, namespace: string | undefined, base: string): string {
    let counter = Number(store.resourceVersion());
    for (;;) {
      counter += 7919;
      const name = `${base}${(counter % 60466176).toString(36).padStart(5, '0')}`;
      if (!store.get(info.resource, namespace, name)) return name;
    }
  }

  /** Applies what `PUT` or `PATCH` produced, keeping the fields the endpoint may not change. */
  function writeUpdate(
    target: ResourceRoute,
    existing: KubeObject,
    candidate: KubeObject,
    expectedVersion: string | undefined,
    options: WriteOptions,
    headers: Record<string, string>,
    applied = false,
  ): HttpReply {
    const { info } = target;
    const { dryRun } = options;
    if (candidate.metadata.name !== existing.metadata.name) {
      throw invalid(
        info.kind,
        info.group,
        existing.metadata.name,
        'metadata.name',
        `Invalid value: "${candidate.metadata.name}": field is immutable`,
      );
    }
    let next: KubeObject;
    if (target.subresource === 'status') {
      next = { ...existing, status: candidate.status };
    } else {
      next = { ...candidate, apiVersion: apiVersionOf(info), kind: info.kind };
      if (ignoresStatus(info)) {
        if (existing.status === undefined) delete next.status;
        else next.status = existing.status;
      }
      next.metadata = {
        ...candidate.metadata,
        ...(existing.metadata.deletionTimestamp === undefined
          ? {}
          : { deletionTimestamp: existing.metadata.deletionTimestamp }),
        ...(existing.metadata.deletionGracePeriodSeconds === undefined
          ? {}
          : { deletionGracePeriodSeconds: existing.metadata.deletionGracePeriodSeconds }),
      };
      if (info.namespaced) next.metadata.namespace = existing.metadata.namespace;
      if (JSON.stringify(candidate.spec) !== JSON.stringify(existing.spec)) {
        next.metadata.generation = (existing.metadata.generation ?? 1) + 1;
      } else {
        next.metadata.generation = existing.metadata.generation ?? 1;
      }
      validateMetadata(info.kind, info.group, next);
      checkImmutable(info, existing, next);
      custom.prepareUpdate(info, existing, next);
      admit(info.resource, next, existing);
    }
    custom.validateCustomWrite(info, next, existing);
    next.metadata.resourceVersion = expectedVersion ?? existing.metadata.resourceVersion ?? '';
    // What a client sends in managedFields is not taken: the server records who wrote what.
    if (!applied) setManagedFields(next, existing.metadata.managedFields);
    // Like the API server, a write that changes nothing keeps the resourceVersion and notifies no one.
    const unchanged =
      next.metadata.resourceVersion === existing.metadata.resourceVersion &&
      JSON.stringify({
        ...next,
        metadata: {
          ...next.metadata,
          uid: existing.metadata.uid,
          creationTimestamp: existing.metadata.creationTimestamp,
          managedFields: withoutTimes(next.metadata.managedFields),
        },
      }) ===
        JSON.stringify({
          ...existing,
          metadata: { ...existing.metadata, managedFields: withoutTimes(existing.metadata.managedFields) },
        });
    if (unchanged) return new HttpReply(200, decorate(info, existing), headers);
    if (!applied) setManagedFields(next, recordUpdate(existing, next, updateRecord(target, options)));
    if (dryRun) {
      if (next.metadata.resourceVersion !== existing.metadata.resourceVersion) {
        throw conflict(refOf(target, existing.metadata.name));
      }
      return new HttpReply(200, decorate(info, next), headers);
    }
    return new HttpReply(200, decorate(info, store.update(info.resource, next)), headers);
  }

  function serveUpdate(target: ResourceRoute, body: Buffer, options: WriteOptions): HttpReply {
    const parsed = parseBody(body, 'decoding object');
    if (!isRecord(parsed) || !isRecord(parsed.metadata))
      throw badRequest('decoding object: metadata is required');
    const candidate = stored(target.info, parsed as unknown as KubeObject);
    const headers = pruneOnWrite(target, candidate, options, 'update');
    if (candidate.metadata.name !== target.name) {
      throw badRequest('the name of the object does not match the name on the URL');
    }
    if (
      target.info.namespaced &&
      candidate.metadata.namespace !== undefined &&
      candidate.metadata.namespace !== target.namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const existing = requireObject(target);
    const expected = candidate.metadata.resourceVersion;
    // Leases take no unconditional update (admission.ts): a PUT must carry the version it read.
    if (target.info.resource === 'leases' && (expected === undefined || expected === ''))
      throw leaseUpdateNeedsResourceVersion(existing.metadata.name);
    return writeUpdate(target, existing, candidate, expected === '' ? undefined : expected, options, headers);
  }

  /** Drops unknown fields from what a PUT or PATCH would store (not on subresources): the Warning header. */
  function pruneOnWrite(
    target: ResourceRoute,
    candidate: KubeObject,
    options: WriteOptions,
    verb: 'update' | 'patch',
    defaults = true,
  ): Record<string, string> {
    if (target.subresource !== undefined && !target.info.custom) return {};
    const existing = store.get(target.info.resource, target.namespace, target.name ?? '');
    const prune = custom.customPruner(target.info);
    const headers = warningHeader(
      pruneUnknownFields(candidate, {
        group: target.info.group,
        kind: target.info.kind,
        mode: options.fieldValidation,
        verb,
        ...(existing ? { existing } : {}),
        ...(prune ? { prune } : {}),
      }),
    );
    // An applied configuration is defaulted once merged: the applier owns only what it sent.
    if (defaults) custom.defaultDecoded(target.info, candidate);
    return headers;
  }

  function servePatch(
    target: ResourceRoute,
    body: Buffer,
    contentType: string,
    options: WriteOptions,
  ): HttpReply {
    const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (mediaType === APPLY_CONTENT_TYPE) return serveApply(target, body, options);
    custom.refuseStrategicPatch(target.info, mediaType);
    const patchType: PatchType | undefined = PATCH_CONTENT_TYPES[mediaType];
    if (patchType === undefined) {
      throw new KubeApiError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
    }
    const patch = parseBody(body, 'decoding patch');
    const existing = requireObject(target);
    // A patch applies to the object as the route's version shows it.
    const patched = applyPatch(patchType, toServedVersion(target.info, existing), patch);
    if (!isRecord(patched) || !isRecord(patched.metadata)) {
      throw invalid(
        target.info.kind,
        target.info.group,
        existing.metadata.name,
        'metadata',
        'Required value: the patch removed the object metadata',
      );
    }
    const candidate = stored(target.info, patched as unknown as KubeObject);
    const headers = pruneOnWrite(target, candidate, options, 'patch');
    // A resourceVersion in the patch is a precondition, like an If-Match.
    const requested = candidate.metadata.resourceVersion;
    const expected =
      requested !== undefined && requested !== existing.metadata.resourceVersion
        ? requested
        : existing.metadata.resourceVersion;
    if (candidate.metadata.uid !== undefined && candidate.metadata.uid !== existing.metadata.uid) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: UID in precondition: ${candidate.metadata.uid}, UID in object meta: ${existing.metadata.uid ?? ''}`,
      );
    }
    return writeUpdate(target, existing, candidate, expected, options, headers);
  }

  /** Server-side apply: create if absent, else merge with field ownership (server-side-apply.ts). */
  function serveApply(target: ResourceRoute, body: Buffer, options: WriteOptions): HttpReply {
    const { info } = target;
    const applied = stored(
      info,
      parseApplyBody(body, info, target.name ?? '', options.fieldManagerGiven) as unknown as KubeObject,
    ) as unknown as ReturnType<typeof parseApplyBody>;
    const headers = pruneOnWrite(target, applied as unknown as KubeObject, options, 'update', false);
    const live = store.get(info.resource, target.namespace, target.name ?? '');
    const object = serverSideApply({
      live,
      applied,
      record: updateRecord(target, options),
      force: options.force,
      ignored: ignoresStatus(info) && target.subresource === undefined ? ['status'] : [],
    });
    custom.defaultDecoded(info, object);
    if (!live) {
      const entries = object.metadata.managedFields as ManagedFieldsEntry[];
      return createObject(target, object, options, headers, entries);
    }
    return writeUpdate(target, live, object, live.metadata.resourceVersion, options, headers, true);
  }

  function updateRecord(target: ResourceRoute, options: WriteOptions): UpdateRecord {
    return {
      manager: options.fieldManager,
      apiVersion: apiVersionOf(target.info),
      time: nowTimestamp(),
      ...(target.subresource === undefined ? {} : { subresource: target.subresource }),
    };
  }

  function nowTimestamp(): string {
    return new Date(clock.nowMs()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  return { serveCreate, serveUpdate, servePatch, serveDelete: deletes.serveDelete };
}
