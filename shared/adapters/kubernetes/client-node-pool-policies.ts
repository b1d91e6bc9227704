/**
 * PoolImagePolicy objects (vmss-prototype.io/v1alpha1, cluster-scoped) over @kubernetes/client-node's
 * CustomObjectsApi, and the core/v1 Events recorded about them. A list answered 404 means the API server
 * does not serve the resource (its CustomResourceDefinition is not applied). Status writes go to the
 * `/status` subresource with the resourceVersion read (the API server refuses a stale one with 409).
 */
import { createHash } from 'node:crypto';

import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { z } from 'zod';

import { ignoreNotFound, isNotFound, TerminalError, TransientError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import {
  type PolicyEvent,
  POOL_POLICY_API_VERSION,
  POOL_POLICY_RESOURCE,
  type PoolPolicyObject,
} from '../../domain/pool-policy.js';
import type { PoolPoliciesPort } from '../../ports/kubernetes/index.js';
import { type KubeConnection, PAGE_SIZE } from './client-node-connection.js';
import type { KubeCallContext } from './errors.js';

/** Events about cluster-scoped objects live in `default` (the API server's rule for core/v1 Events). */
export const POLICY_EVENTS_NAMESPACE = 'default';

const COORDINATES = {
  group: POOL_POLICY_RESOURCE.group,
  version: POOL_POLICY_RESOURCE.version,
  plural: POOL_POLICY_RESOURCE.plural,
};

/** What the adapter reads of an object; spec and status stay as stored (the application validates them). */
const StoredObject = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    uid: z.string().optional(),
    generation: z.number().int().optional(),
    resourceVersion: z.string().optional(),
    creationTimestamp: z.string().optional(),
  }),
  spec: z.unknown().optional(),
  status: z.unknown().optional(),
});

const StoredList = z.looseObject({
  items: z.array(z.unknown()).nullish(),
  metadata: z.looseObject({ continue: z.string().nullish() }).nullish(),
});

function context(verb: string, name?: string): KubeCallContext {
  return {
    action: `${verb} ${name === undefined ? POOL_POLICY_RESOURCE.plural : `${POOL_POLICY_RESOURCE.kind} ${name}`}.${POOL_POLICY_RESOURCE.group}`,
    kind: POOL_POLICY_RESOURCE.kind,
  };
}

function toObject(value: unknown, what: string): PoolPolicyObject {
  const parsed = StoredObject.safeParse(value);
  if (!parsed.success) {
    throw new TerminalError(
      'UnexpectedPoolImagePolicy',
      `reading ${what}: the API server answered an object the product cannot read (${parsed.error.issues[0]?.message ?? 'no detail'}) — ` +
        'check that infra/kubernetes/pool-image-policy.crd.yaml is the CustomResourceDefinition applied',
    );
  }
  const { metadata, spec, status } = parsed.data;
  return {
    name: metadata.name,
    uid: metadata.uid ?? '',
    generation: metadata.generation ?? 1,
    resourceVersion: metadata.resourceVersion ?? '',
    ...definedOnly({ createdAt: metadata.creationTimestamp }),
    spec: spec ?? {},
    status: status ?? undefined,
  };
}

export class ClientNodePoolPolicies implements PoolPoliciesPort {
  readonly #connection: KubeConnection;
  readonly #api: CustomObjectsApi;
  readonly #core: CoreV1Api;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#api = new CustomObjectsApi(connection.configuration);
    this.#core = new CoreV1Api(connection.configuration);
  }

  async list(): Promise<readonly PoolPolicyObject[] | 'not-installed'> {
    try {
      const items = await this.#connection.paged(context('listing'), async (page) => {
        const answer = StoredList.parse(
          await this.#api.listClusterCustomObject({ ...COORDINATES, limit: PAGE_SIZE, ...page }),
        );
        // Custom objects come back as plain JSON: the token is `continue`, not client-node's `_continue`.
        const token = answer.metadata?.continue ?? undefined;
        return { items: answer.items ?? [], metadata: token === undefined ? {} : { _continue: token } };
      });
      return items
        .map((item) => toObject(item, `a ${POOL_POLICY_RESOURCE.kind}`))
        .sort((a, b) => a.name.localeCompare(b.name));
    } catch (error) {
      if (isNotFound(error)) return 'not-installed';
      throw error;
    }
  }

  async get(name: string): Promise<PoolPolicyObject | undefined> {
    const object: unknown = await this.#connection
      .call(context('reading', name), () => this.#api.getClusterCustomObject({ ...COORDINATES, name }))
      .catch(ignoreNotFound);
    return object === undefined ? undefined : toObject(object, `${POOL_POLICY_RESOURCE.kind} ${name}`);
  }

  async replaceStatus(
    name: string,
    status: Readonly<Record<string, unknown>>,
    resourceVersion: string,
  ): Promise<PoolPolicyObject | 'conflict' | 'gone'> {
    const body = {
      apiVersion: POOL_POLICY_API_VERSION,
      kind: POOL_POLICY_RESOURCE.kind,
      metadata: { name, resourceVersion },
      status: structuredClone(status),
    };
    try {
      const replaced: unknown = await this.#connection.call(context('writing the status of', name), () =>
        this.#api.replaceClusterCustomObjectStatus({ ...COORDINATES, name, body }),
      );
      return toObject(replaced, `${POOL_POLICY_RESOURCE.kind} ${name}`);
    } catch (error) {
      if (error instanceof TransientError && error.code === 'KubeConflict') return 'conflict';
      if (isNotFound(error)) return 'gone';
      throw error;
    }
  }

  async recordEvent(event: PolicyEvent): Promise<void> {
    const name = `${event.policy.name}.${createHash('sha256').update(event.key).digest('hex').slice(0, 16)}`;
    const at = new Date(event.at);
    try {
      await this.#connection.call(
        {
          action: `recording event ${event.reason} about ${POOL_POLICY_RESOURCE.kind} ${event.policy.name}`,
          kind: 'Event',
        },
        () =>
          this.#core.createNamespacedEvent({
            namespace: POLICY_EVENTS_NAMESPACE,
            body: {
              metadata: { name, namespace: POLICY_EVENTS_NAMESPACE },
              involvedObject: {
                apiVersion: POOL_POLICY_API_VERSION,
                kind: POOL_POLICY_RESOURCE.kind,
                name: event.policy.name,
                ...(event.policy.uid === '' ? {} : { uid: event.policy.uid }),
              },
              type: event.type,
              reason: event.reason,
              message: event.message.slice(0, 1024),
              source: { component: 'vmss-prototype' },
              reportingComponent: 'vmss-prototype',
              firstTimestamp: at,
              lastTimestamp: at,
              count: 1,
            },
          }),
      );
    } catch (error) {
      // The same key was recorded by an earlier attempt: the event is there.
      if (error instanceof TerminalError && error.code === 'KubeAlreadyExists') return;
      throw error;
    }
  }
}
