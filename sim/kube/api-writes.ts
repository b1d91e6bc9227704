/**
 * The write verbs of the simulated Kubernetes API server: create (generateName, status reset),
 * update and the three patch types (with resourceVersion/UID preconditions, immutable fields and
 * status subresources), delete (grace periods through the kubelet stand-in) and pod eviction with
 * PodDisruptionBudgets.
 */
import { createHash } from 'node:crypto';

import { z } from 'zod';

import type { KubeObject, KubeStore, SimClock } from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { messageOf } from '../errors.js';
import type { KubeReads } from './api-reads.js';
import { HttpReply, isRecord, refOf, type ResourceRoute, successStatus } from './api-routing.js';
import type { KubeControllers } from './controllers.js';
import { checkEvictionAllowed } from './disruption.js';
import { specOf, statusOf } from './objects.js';
import type { PatchType } from './patch.js';
import { applyPatch, PATCH_CONTENT_TYPES } from './patch.js';
import type { ResourceInfo } from './resources.js';
import { apiVersionOf } from './resources.js';
import { alreadyExists, badRequest, conflict, invalid, KubeApiError, notFound } from './status.js';
import { checkImmutable, validateMetadata } from './validation.js';

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
]);

/** Resources whose status a client may not set on create (the API server resets it). */
const RESET_STATUS_ON_CREATE = new Set([
  'pods',
  'replicasets',
  'daemonsets',
  'deployments',
  'poddisruptionbudgets',
]);

const DeleteOptions = z.object({
  gracePeriodSeconds: z.number().int().nullish(),
  preconditions: z.object({ uid: z.string().nullish(), resourceVersion: z.string().nullish() }).nullish(),
  propagationPolicy: z.string().nullish(),
  dryRun: z.array(z.string()).nullish(),
});
type DeleteOptions = z.infer<typeof DeleteOptions>;

const Eviction = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.object({ name: z.string().optional(), namespace: z.string().optional() }).optional(),
  deleteOptions: DeleteOptions.nullish(),
});

/**
 * `dryRun` as the API server validates it (`dryRun=All` is the only value; anything else is refused
 * the way `ValidateDryRun` does: 422 on the request's options).
 */
export function parseDryRun(values: readonly string[], optionsKind: string): boolean {
  for (const value of values) {
    if (value !== 'All') {
      throw new KubeApiError(
        'Invalid',
        `${optionsKind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["${value}"]: supported values: "All"`,
        {
          group: 'meta.k8s.io',
          kind: optionsKind,
          causes: [
            {
              reason: 'FieldValueNotSupported',
              message: `Unsupported value: ["${value}"]: supported values: "All"`,
              field: 'dryRun',
            },
          ],
        },
      );
    }
  }
  return values.length > 0;
}

function isDryRun(values: readonly string[] | null | undefined): boolean {
  return parseDryRun(values ?? [], 'DeleteOptions');
}

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
}

export type KubeWrites = ReturnType<typeof createKubeWrites>;

/** The write verbs over one store. */
export function createKubeWrites(options: KubeWritesOptions) {
  const { store, controllers, reads, clock } = options;
  const { decorate, requireObject, requireNamespace } = reads;

  // --- writes -----------------------------------------------------------------------------------

  function parseBody(body: Buffer, what: string): unknown {
    if (body.length === 0) throw badRequest(`${what}: request body is empty`);
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch (error) {
      throw badRequest(`${what}: ${messageOf(error)}`);
    }
  }

  function serveCreate(target: ResourceRoute, body: Buffer, dryRun: boolean): HttpReply {
    if (target.subresource === 'eviction') return serveEviction(target, body, dryRun);
    if (target.name !== undefined)
      throw new KubeApiError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    const parsed = parseBody(body, 'decoding object');
    if (!isRecord(parsed) || !isRecord(parsed.metadata))
      throw badRequest('decoding object: metadata is required');
    const object = parsed as unknown as KubeObject;
    const { info } = target;
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
      const base = parsed.metadata.generateName;
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
    if (dryRun) {
      // Validated and answered as if created; nothing is stored (no resourceVersion is assigned).
      if (store.get(info.resource, target.namespace, object.metadata.name)) {
        throw alreadyExists(refOf(target, object.metadata.name));
      }
      object.metadata.uid = dryRunUid(object);
      object.metadata.creationTimestamp = nowTimestamp();
      return new HttpReply(201, decorate(info, object));
    }
    try {
      return new HttpReply(201, decorate(info, store.create(info.resource, object)));
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
    dryRun: boolean,
  ): HttpReply {
    const { info } = target;
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
      if (STATUS_SUBRESOURCE.has(info.resource)) {
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
    }
    next.metadata.resourceVersion = expectedVersion ?? existing.metadata.resourceVersion ?? '';
    // Like the API server, a write that changes nothing keeps the resourceVersion and notifies no one.
    const unchanged =
      next.metadata.resourceVersion === existing.metadata.resourceVersion &&
      JSON.stringify({
        ...next,
        metadata: {
          ...next.metadata,
          uid: existing.metadata.uid,
          creationTimestamp: existing.metadata.creationTimestamp,
        },
      }) === JSON.stringify(existing);
    if (unchanged) return new HttpReply(200, decorate(info, existing));
    if (dryRun) {
      if (next.metadata.resourceVersion !== existing.metadata.resourceVersion) {
        throw conflict(refOf(target, existing.metadata.name));
      }
      return new HttpReply(200, decorate(info, next));
    }
    return new HttpReply(200, decorate(info, store.update(info.resource, next)));
  }

  function serveUpdate(target: ResourceRoute, body: Buffer, dryRun: boolean): HttpReply {
    const parsed = parseBody(body, 'decoding object');
    if (!isRecord(parsed) || !isRecord(parsed.metadata))
      throw badRequest('decoding object: metadata is required');
    const candidate = parsed as unknown as KubeObject;
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
    return writeUpdate(target, existing, candidate, expected === '' ? undefined : expected, dryRun);
  }

  function servePatch(target: ResourceRoute, body: Buffer, contentType: string, dryRun: boolean): HttpReply {
    const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    const patchType: PatchType | undefined = PATCH_CONTENT_TYPES[mediaType];
    if (patchType === undefined) {
      throw new KubeApiError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
    }
    const patch = parseBody(body, 'decoding patch');
    const existing = requireObject(target);
    const patched = applyPatch(patchType, existing, patch);
    if (!isRecord(patched) || !isRecord(patched.metadata)) {
      throw invalid(
        target.info.kind,
        target.info.group,
        existing.metadata.name,
        'metadata',
        'Required value: the patch removed the object metadata',
      );
    }
    const candidate = patched as unknown as KubeObject;
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
    return writeUpdate(target, existing, candidate, expected, dryRun);
  }

  function deleteOptionsOf(url: URL, body: Buffer): DeleteOptions {
    let options: DeleteOptions = {};
    if (body.length > 0) {
      const parsed = DeleteOptions.safeParse(parseBody(body, 'decoding delete options'));
      if (!parsed.success) throw badRequest(`decoding delete options: ${parsed.error.message}`);
      options = parsed.data;
    }
    const query = url.searchParams.get('gracePeriodSeconds');
    if (query !== null) {
      const grace = Number(query);
      if (!Number.isInteger(grace)) throw badRequest(`invalid gracePeriodSeconds "${query}"`);
      options = { ...options, gracePeriodSeconds: grace };
    }
    return options;
  }

  function checkPreconditions(target: ResourceRoute, object: KubeObject, options: DeleteOptions): void {
    const uid = options.preconditions?.uid;
    if (uid && uid !== object.metadata.uid) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${object.metadata.uid ?? ''}`,
        { name: object.metadata.name, kind: target.info.resource },
      );
    }
    const version = options.preconditions?.resourceVersion;
    if (version && version !== object.metadata.resourceVersion) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: ResourceVersion in precondition: ${version}, ResourceVersion in object meta: ${object.metadata.resourceVersion ?? ''}`,
        { name: object.metadata.name, kind: target.info.resource },
      );
    }
  }

  function serveDelete(target: ResourceRoute, url: URL, body: Buffer, dryRunQuery: boolean): HttpReply {
    if (target.verb === 'deletecollection' || target.subresource !== undefined) {
      throw new KubeApiError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    }
    const options = deleteOptionsOf(url, body);
    const existing = requireObject(target);
    checkPreconditions(target, existing, options);
    const { info } = target;
    if (dryRunQuery || isDryRun(options.dryRun)) return dryRunDelete(target, existing, options);
    if (info.resource === 'pods') {
      const deleted = controllers.deletePod(
        target.namespace ?? '',
        existing.metadata.name,
        options.gracePeriodSeconds ?? undefined,
      );
      return new HttpReply(200, decorate(info, deleted ?? existing));
    }
    if (info.resource === 'namespaces') {
      for (const other of [
        'pods',
        'poddisruptionbudgets',
        'daemonsets',
        'replicasets',
        'deployments',
        'leases',
        'serviceaccounts',
        'secrets',
        'events',
      ] as const) {
        for (const object of store.list(other, existing.metadata.name))
          store.remove(other, object.metadata.namespace, object.metadata.name);
      }
    }
    store.remove(info.resource, target.namespace, existing.metadata.name);
    return new HttpReply(
      200,
      successStatus(200, {
        name: existing.metadata.name,
        ...(info.group === '' ? {} : { group: info.group }),
        kind: info.resource,
        uid: existing.metadata.uid,
      }),
    );
  }

  /** What a delete would answer, without deleting: a pod with its deletion stamps, else a Status. */
  function dryRunDelete(target: ResourceRoute, existing: KubeObject, options: DeleteOptions): HttpReply {
    const { info } = target;
    if (info.resource === 'pods') {
      const grace =
        options.gracePeriodSeconds ?? Number(specOf(existing).terminationGracePeriodSeconds ?? 30);
      const phase = statusOf(existing).phase;
      if (
        grace <= 0 ||
        specOf(existing).nodeName === undefined ||
        phase === 'Succeeded' ||
        phase === 'Failed'
      ) {
        return new HttpReply(200, decorate(info, existing));
      }
      return new HttpReply(
        200,
        decorate(info, {
          ...existing,
          metadata: {
            ...existing.metadata,
            deletionTimestamp: new Date(clock.nowMs() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
            deletionGracePeriodSeconds: grace,
          },
        }),
      );
    }
    return new HttpReply(
      200,
      successStatus(200, {
        name: existing.metadata.name,
        ...(info.group === '' ? {} : { group: info.group }),
        kind: info.resource,
        uid: existing.metadata.uid,
      }),
    );
  }

  function serveEviction(target: ResourceRoute, body: Buffer, dryRunQuery: boolean): HttpReply {
    const parsed = Eviction.safeParse(parseBody(body, 'decoding eviction'));
    if (!parsed.success) throw badRequest(`decoding eviction: ${parsed.error.message}`);
    const eviction = parsed.data;
    const name = target.name ?? '';
    if (eviction.metadata?.name !== undefined && eviction.metadata.name !== name) {
      throw badRequest('name in URL does not match name in Eviction object');
    }
    const pod = store.get('pods', target.namespace, name);
    if (!pod) throw notFound({ resource: 'pods', group: '', name });
    const options = eviction.deleteOptions ?? {};
    checkPreconditions(target, pod, options);
    // A dry-run eviction (kubectl drain --dry-run=server sends deleteOptions.dryRun: [All]) is checked
    // against the budgets like a real one, and evicts nothing.
    checkEvictionAllowed(store, pod);
    if (dryRunQuery || isDryRun(options.dryRun)) return new HttpReply(201, successStatus(201));
    controllers.deletePod(target.namespace ?? '', name, options.gracePeriodSeconds ?? undefined);
    return new HttpReply(201, successStatus(201));
  }

  function nowTimestamp(): string {
    return new Date(clock.nowMs()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  return { serveCreate, serveUpdate, servePatch, serveDelete };
}
