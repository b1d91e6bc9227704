/**
 * The `/scale` subresource of a resource whose CRD declares one (Cluster API's MachinePool:
 * `+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector`,
 * cluster-api `api/core/v1beta2/machinepool_types.go`): GET answers an `autoscaling/v1` Scale built from
 * the object, PUT and PATCH (merge or JSON patch) of that Scale change only `spec.replicas` (a new
 * generation), as the API server's custom resource scale handler does
 * (kubernetes `staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/etcd.go` `ScaleREST`).
 */
import type { KubeObject, KubeStore } from '../contracts.js';
import { HttpReply, refOf, type ResourceRoute } from './api-routing.js';
import { applyPatch, PATCH_CONTENT_TYPES } from './patch.js';
import { badRequest, conflict, invalid, KubeApiError, notFound } from './status.js';

function scaleOf(object: KubeObject): KubeObject {
  const spec = (object.spec ?? {}) as { replicas?: unknown };
  const status = (object.status ?? {}) as { replicas?: unknown; selector?: unknown };
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: object.metadata.name,
      ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
      ...(object.metadata.uid === undefined ? {} : { uid: object.metadata.uid }),
      ...(object.metadata.resourceVersion === undefined
        ? {}
        : { resourceVersion: object.metadata.resourceVersion }),
      ...(object.metadata.creationTimestamp === undefined
        ? {}
        : { creationTimestamp: object.metadata.creationTimestamp }),
    },
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0 },
    status: {
      replicas: typeof status.replicas === 'number' ? status.replicas : 0,
      ...(typeof status.selector === 'string' ? { selector: status.selector } : {}),
    },
  };
}

/** GET, PUT or PATCH of `<resource>/<name>/scale`. */
export function serveScale(
  store: KubeStore,
  target: ResourceRoute,
  body: Buffer,
  contentType: string,
): HttpReply {
  const { info } = target;
  const existing = store.get(info.resource, target.namespace, target.name ?? '');
  if (!existing) throw notFound(refOf(target));
  const current = scaleOf(existing);
  if (target.verb === 'get') return new HttpReply(200, current);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw badRequest(`decoding Scale: ${error instanceof Error ? error.message : String(error)}`);
  }
  let next: unknown;
  if (target.verb === 'update') {
    next = parsed;
  } else if (target.verb === 'patch') {
    const type = PATCH_CONTENT_TYPES[contentType.split(';')[0]?.trim().toLowerCase() ?? ''];
    if (type === undefined || type === 'strategic')
      throw new KubeApiError(
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json',
      );
    next = applyPatch(type, current, parsed);
  } else {
    throw new KubeApiError(
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  }
  const scale = next as { metadata?: { resourceVersion?: unknown }; spec?: { replicas?: unknown } };
  const expected = scale.metadata?.resourceVersion;
  if (typeof expected === 'string' && expected !== '' && expected !== existing.metadata.resourceVersion)
    throw conflict(refOf(target));
  const replicas = scale.spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid(
      'Scale',
      'autoscaling',
      existing.metadata.name,
      'spec.replicas',
      `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
    );
  }
  const stored =
    (existing.spec as { replicas?: unknown } | undefined)?.replicas === replicas
      ? existing
      : store.mutate(info.resource, target.namespace, existing.metadata.name, (object) => {
          object.spec = { ...(object.spec as Record<string, unknown> | undefined), replicas };
          object.metadata.generation = (object.metadata.generation ?? 1) + 1;
        });
  return new HttpReply(200, scaleOf(stored));
}
