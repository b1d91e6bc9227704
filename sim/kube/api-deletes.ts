/**
 * The delete verbs of the simulated Kubernetes API server: delete with preconditions and grace periods
 * (pods through the kubelet stand-in, a namespace with what it holds), dry-run deletes, and pod
 * eviction checked against PodDisruptionBudgets.
 */
import { z } from 'zod';

import type { KubeObject, KubeResource, KubeStore, SimClock } from '../contracts.js';
import { messageOf } from '../errors.js';
import type { KubeReads } from './api-reads.js';
import { HttpReply, type ResourceRoute, successStatus } from './api-routing.js';
import type { KubeControllers } from './controllers.js';
import { checkEvictionAllowed } from './disruption.js';
import { specOf, statusOf } from './objects.js';
import { restNameOf, type ServedCustomResources } from './resources.js';
import { badRequest, KubeApiError, notFound } from './status.js';
import { parseDryRun } from './write-options.js';

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

function isDryRun(values: readonly string[] | null | undefined): boolean {
  return parseDryRun(values ?? [], 'DeleteOptions');
}

export interface KubeDeletesOptions {
  store: KubeStore;
  clock: SimClock;
  controllers: KubeControllers;
  reads: KubeReads;
  /** The custom resources served: a namespace's deletion removes their objects too. */
  custom?: ServedCustomResources;
}

/** The delete verbs over one store. */
export function createKubeDeletes(options: KubeDeletesOptions) {
  const { store, controllers, reads, clock, custom } = options;
  const { decorate, requireObject } = reads;

  function parseBody(body: Buffer, what: string): unknown {
    if (body.length === 0) throw badRequest(`${what}: request body is empty`);
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch (error) {
      throw badRequest(`${what}: ${messageOf(error)}`);
    }
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
        { name: object.metadata.name, kind: restNameOf(target.info) },
      );
    }
    const version = options.preconditions?.resourceVersion;
    if (version && version !== object.metadata.resourceVersion) {
      throw new KubeApiError(
        'Conflict',
        `Precondition failed: ResourceVersion in precondition: ${version}, ResourceVersion in object meta: ${object.metadata.resourceVersion ?? ''}`,
        { name: object.metadata.name, kind: restNameOf(target.info) },
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
      const kinds: readonly KubeResource[] = [
        'pods',
        'poddisruptionbudgets',
        'daemonsets',
        'replicasets',
        'deployments',
        'leases',
        'serviceaccounts',
        'secrets',
        'events',
        ...(custom?.namespacedKeys() ?? []),
      ];
      for (const other of kinds) {
        for (const object of store.list(other, existing.metadata.name))
          store.remove(other, object.metadata.namespace, object.metadata.name);
      }
    }
    store.remove(info.resource, target.namespace, existing.metadata.name);
    return deletedStatus(info, existing);
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
    return deletedStatus(info, existing);
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

  return { serveDelete, serveEviction };
}

/** The Status a delete answers for an object that is gone (not a pod with a grace period). */
function deletedStatus(info: ResourceRoute['info'], existing: KubeObject): HttpReply {
  return new HttpReply(
    200,
    successStatus(200, {
      name: existing.metadata.name,
      ...(info.group === '' ? {} : { group: info.group }),
      kind: restNameOf(info),
      uid: existing.metadata.uid,
    }),
  );
}
