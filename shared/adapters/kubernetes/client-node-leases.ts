/**
 * Pool leases (coordination.k8s.io/v1 Lease) over @kubernetes/client-node: read, create, and replace with
 * optimistic concurrency. Lease times are MicroTime (RFC 3339 with microseconds): written as client-node's
 * V1MicroTime, read back as the strings the server sent. Every answer's `Date` header (the API server's
 * clock, RFC 9110 §6.6.1) comes back as the lease's `serverTime`: expiry is judged on it, never on the
 * caller's clock (docs/design.md#ownership-the-pool-lease-and-the-run-id).
 */
import { CoordinationV1Api, type HttpInfo, type V1Lease, V1MicroTime } from '@kubernetes/client-node';

import { ignoreNotFound, isNotFound, TerminalError, TransientError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import type { PoolLease } from '../../domain/ownership.js';
import { parseRfc3339 } from '../../domain/rfc3339.js';
import type { LeasesPort, LeaseWrite } from '../../ports/kubernetes/index.js';
import type { KubeConnection } from './client-node-connection.js';
import type { KubeCallContext } from './errors.js';

export class ClientNodeLeases implements LeasesPort {
  readonly #connection: KubeConnection;
  readonly #api: CoordinationV1Api;

  constructor(connection: KubeConnection) {
    this.#connection = connection;
    this.#api = new CoordinationV1Api(connection.configuration);
  }

  async get(namespace: string, name: string): Promise<PoolLease | undefined> {
    const lease = await this.#connection
      .call(context('reading', namespace, name), () =>
        this.#api.readNamespacedLeaseWithHttpInfo({ namespace, name }),
      )
      .catch(ignoreNotFound);
    return lease === undefined ? undefined : toPoolLease(lease, namespace, name);
  }

  async create(lease: LeaseWrite): Promise<PoolLease | 'exists'> {
    try {
      const created = await this.#connection.call(context('creating', lease.namespace, lease.name), () =>
        this.#api.createNamespacedLeaseWithHttpInfo({ namespace: lease.namespace, body: toV1Lease(lease) }),
      );
      return toPoolLease(created, lease.namespace, lease.name);
    } catch (error) {
      if (error instanceof TerminalError && error.code === 'KubeAlreadyExists') return 'exists';
      throw error;
    }
  }

  async replace(lease: LeaseWrite, resourceVersion: string): Promise<PoolLease | 'conflict' | 'gone'> {
    const body = toV1Lease(lease);
    body.metadata = { ...body.metadata, resourceVersion };
    try {
      const replaced = await this.#connection.call(context('updating', lease.namespace, lease.name), () =>
        this.#api.replaceNamespacedLeaseWithHttpInfo({ namespace: lease.namespace, name: lease.name, body }),
      );
      return toPoolLease(replaced, lease.namespace, lease.name);
    } catch (error) {
      if (error instanceof TransientError && error.code === 'KubeConflict') return 'conflict';
      if (isNotFound(error)) return 'gone';
      throw error;
    }
  }
}

function context(verb: string, namespace: string, name: string): KubeCallContext {
  return { action: `${verb} lease ${namespace}/${name}`, kind: 'Lease' };
}

function microTime(value: string | undefined): V1MicroTime | undefined {
  const ms = value === undefined ? undefined : parseRfc3339(value);
  return ms === undefined ? undefined : new V1MicroTime(ms);
}

function toV1Lease(lease: LeaseWrite): V1Lease {
  const acquireTime = microTime(lease.acquiredAt);
  const renewTime = microTime(lease.renewedAt);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: lease.name,
      namespace: lease.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'vmss-prototype' },
      annotations: { ...lease.annotations },
    },
    spec: {
      ...definedOnly({ holderIdentity: lease.holder }),
      leaseDurationSeconds: lease.durationSeconds,
      ...definedOnly({ acquireTime, renewTime }),
    },
  };
}

/** client-node leaves MicroTime fields as the server's strings (or Dates, from another reviver). */
function timeText(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
  return undefined;
}

/** The API server's time of an answer, from its `Date` header (an IMF-fixdate); undefined without one. */
function serverTimeOf(headers: Readonly<Record<string, string>>): string | undefined {
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === 'date');
  const ms = entry === undefined ? Number.NaN : Date.parse(entry[1]);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function toPoolLease(answer: HttpInfo<V1Lease>, namespace: string, name: string): PoolLease {
  const lease = answer.data;
  const serverTime = serverTimeOf(answer.headers);
  const spec = lease.spec;
  const holder = spec?.holderIdentity;
  const acquiredAt = timeText(spec?.acquireTime);
  const renewedAt = timeText(spec?.renewTime);
  const resourceVersion = lease.metadata?.resourceVersion;
  return {
    namespace,
    name,
    ...(holder === undefined || holder === '' ? {} : { holder }),
    ...definedOnly({ acquiredAt, renewedAt }),
    durationSeconds: spec?.leaseDurationSeconds ?? 0,
    ...definedOnly({ resourceVersion, serverTime }),
    annotations: { ...lease.metadata?.annotations },
  };
}
