/**
 * `DELETE` on a collection URL (`deletecollection`), for the resources whose discovery entry
 * advertises it: every object of the namespace the label and field selectors match is deleted the
 * way a single delete would (a bound pod terminates gracefully), and the answer is the list of what was
 * deleted. Like kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go`
 * (`DeleteCollection`: DeleteOptions from the body or the query, ListOptions from the query) and
 * `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go` (`DeleteCollection` deletes
 * item by item and returns a list of the deleted items).
 */
import { z } from 'zod';

import type { KubeObject, KubeStore } from '../contracts.js';
import { HttpReply, type ResourceRoute } from './api-routing.js';
import type { KubeControllers } from './controllers.js';
import { apiVersionOf } from './resources.js';
import { matchesFields, matchesRequirements, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { badRequest, KubeApiError } from './status.js';
import { parseDryRun } from './write-options.js';

const CollectionDeleteOptions = z.object({
  gracePeriodSeconds: z.number().int().nullish(),
  dryRun: z.array(z.string()).nullish(),
  propagationPolicy: z.string().nullish(),
});

export interface DeleteCollectionOptions {
  store: KubeStore;
  controllers: KubeControllers;
  decorate: (info: ResourceRoute['info'], object: KubeObject) => KubeObject;
}

function optionsOf(url: URL, body: Buffer): { grace: number | undefined; dryRun: boolean } {
  let parsed: z.infer<typeof CollectionDeleteOptions> = {};
  if (body.length > 0) {
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8')) as unknown;
    } catch (error) {
      throw badRequest(`decoding delete options: ${error instanceof Error ? error.message : String(error)}`);
    }
    const result = CollectionDeleteOptions.safeParse(json);
    if (!result.success) throw badRequest(`decoding delete options: ${result.error.message}`);
    parsed = result.data;
  }
  const query = url.searchParams.get('gracePeriodSeconds');
  let grace = parsed.gracePeriodSeconds ?? undefined;
  if (query !== null) {
    grace = Number(query);
    if (!Number.isInteger(grace)) throw badRequest(`invalid gracePeriodSeconds "${query}"`);
  }
  const dryRun =
    parseDryRun(url.searchParams.getAll('dryRun'), 'DeleteOptions') ||
    parseDryRun(parsed.dryRun ?? [], 'DeleteOptions');
  return { grace, dryRun };
}

/** `DELETE /api/v1/namespaces/{ns}/pods?labelSelector=…`: the deleted objects, as a list. */
export function serveDeleteCollection(
  options: DeleteCollectionOptions,
  target: ResourceRoute,
  url: URL,
  body: Buffer,
): HttpReply {
  const { store, controllers, decorate } = options;
  const { info } = target;
  // Only what discovery advertises; the all-namespaces URL of a namespaced kind is list/watch only
  // (a real server has no DELETE route there).
  if (
    !info.verbs.includes('deletecollection') ||
    target.subresource !== undefined ||
    (info.namespaced && target.namespace === undefined)
  ) {
    throw new KubeApiError(
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  }
  const { grace, dryRun } = optionsOf(url, body);
  const labels = parseLabelSelector(url.searchParams.get('labelSelector') ?? '');
  const fields = parseFieldSelector(url.searchParams.get('fieldSelector') ?? '', info.fieldSelectors);
  const matched = store
    .list(info.resource, target.namespace)
    .filter((object) => matchesRequirements(object.metadata.labels, labels) && matchesFields(object, fields));
  const deleted: KubeObject[] = [];
  for (const object of matched) {
    if (dryRun) {
      deleted.push(object);
    } else if (info.resource === 'pods') {
      const after = controllers.deletePod(object.metadata.namespace ?? '', object.metadata.name, grace);
      deleted.push(after ?? object);
    } else {
      store.remove(info.resource, object.metadata.namespace, object.metadata.name);
      deleted.push(object);
    }
  }
  return new HttpReply(200, {
    kind: `${info.kind}List`,
    apiVersion: apiVersionOf(info),
    metadata: { resourceVersion: store.resourceVersion() },
    items: deleted.map((object) => decorate(info, object)),
  });
}
