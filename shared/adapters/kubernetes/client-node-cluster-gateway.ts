/**
 * The ClusterGateway over @kubernetes/client-node 2.x: one cluster's API server, reached over verified
 * TLS with a bearer token (static, or from a provider for rotating Entra ID tokens).
 * Leases live in client-node-leases.ts; the node and pod calls share one client setup and error context
 * here (a little over 400 lines; split them per resource when they grow, as the ARM gateway was).
 */
import type { RequestOptions } from 'node:https';

import {
  AppsV1Api,
  AuthorizationV1Api,
  type Configuration,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  KubeConfig,
  type Middleware,
  PatchStrategy,
  type RequestContext,
  type ResponseContext,
  type SecurityAuthentication,
  ServerConfiguration,
  setHeaderOptions,
  type User,
  type V1Pod,
  VersionApi,
} from '@kubernetes/client-node';

import type { DaemonSetTarget } from '../../domain/canary.js';
import type { ClusterNode, NodeTaint } from '../../domain/cluster-node.js';
import type { PodOnNode } from '../../domain/drain.js';
import { isNotFound, isRefreshError, TerminalError, TransientError } from '../../domain/errors.js';
import { describeAccess, type KubernetesAccess } from '../../domain/kubernetes-access.js';
import type { PoolLease } from '../../domain/ownership.js';
import type {
  AccessDecision,
  CheckPodSpec,
  ClusterGateway,
  EvictionOutcome,
  LeaseWrite,
  PodOutcome,
  PodPhase,
  PodSummary,
  PrepPodSpec,
  RulesReview,
} from '../../ports/cluster-gateway.js';
import { checkPodManifest, toDaemonSetTarget, toPodOutcome, withTaint } from './canary-objects.js';
import { ClientNodeLeases } from './client-node-leases.js';
import { disruptionBudgetRefusal, type KubeCallContext, parseStatusBody, toRefreshError } from './errors.js';
import { toClusterNode, toPodOnNode, toPodPhase } from './to-domain.js';

export interface ClientNodeClusterGatewayOptions {
  /** API server URL; must be `https:`. */
  readonly server: string;
  /** PEM of the CA (bundle) that signed the API server's certificate. */
  readonly caPem: string;
  /** A bearer token, or a provider called before every request (it should cache, e.g. Entra ID tokens). */
  readonly token: string | (() => Promise<string>);
  /** The cluster's name: connection failures say which cluster's CA or URL to check. */
  readonly cluster?: string;
  /** Per-request deadline, including reading the body. Default 30 s. */
  readonly requestTimeoutMs?: number;
}

/** kubectl drain's page size (`ChunkSize`, k8s.io/kubectl/pkg/cmd/drain/drain.go): big enough for one request on most nodes. */
const PAGE_SIZE = 500;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** A continue token older than the server's compaction window answers 410; a list restarts at most this often. */
const MAX_LIST_RESTARTS = 2;
const USER_NAME = 'vmss-prototype';
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const USER_AGENT = 'vmss-prototype (@kubernetes/client-node)';

/** The prep pod's container: nsenter needs util-linux; the image is the operator's choice. */
const PREP_CONTAINER = 'prep';

function validated(options: ClientNodeClusterGatewayOptions): { server: string; timeoutMs: number } {
  let url: URL;
  try {
    url = new URL(options.server);
  } catch {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      'configuring the cluster gateway: the server is not a URL',
    );
  }
  // client-node only speaks plain HTTP with skipTLSVerify, which product code never sets.
  if (url.protocol !== 'https:') {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      `configuring the cluster gateway: the server must be an https URL, got ${url.protocol}//${url.host}`,
    );
  }
  if (!options.caPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      'configuring the cluster gateway: the CA is not a PEM certificate (expected -----BEGIN CERTIFICATE-----)',
    );
  }
  if (typeof options.token === 'string') checkToken(options.token);
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      'configuring the cluster gateway: requestTimeoutMs must be a positive number',
    );
  }
  return { server: url.toString().replace(/\/$/, ''), timeoutMs };
}

/** A token with whitespace inside would corrupt the Authorization header; an empty one is a config error. */
function checkToken(token: string): string {
  const trimmed = token.trim();
  if (trimmed === '' || /\s/.test(trimmed)) {
    throw new TerminalError(
      'InvalidClusterToken',
      'authenticating to the cluster: the token is empty or malformed — check the token reference',
    );
  }
  return trimmed;
}

/** client-node does not export its Authenticator interface. */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/**
 * Supplies the bearer token and forces certificate verification on every request. client-node leaves
 * `rejectUnauthorized` unset unless skipTLSVerify is set, which would let NODE_TLS_REJECT_UNAUTHORIZED=0
 * in the environment silently turn verification off; setting it here makes it unconditional.
 */
function tokenAuthenticator(token: string | (() => Promise<string>)): Authenticator {
  return {
    isAuthProvider: (user) => user.name === USER_NAME,
    // Typed as https options: client-node's union with isomorphic-ws's options does not resolve here.
    async applyAuthentication(_user: User, opts: RequestOptions) {
      let value: string;
      try {
        value = checkToken(typeof token === 'string' ? token : await token());
      } catch (error) {
        if (isRefreshError(error)) throw error;
        throw new TransientError(
          'ClusterTokenUnavailable',
          'getting a token for the cluster: the token provider failed',
          {
            cause: error,
          },
        );
      }
      opts.headers = { ...opts.headers, Authorization: `Bearer ${value}` };
      opts.rejectUnauthorized = true;
    },
  };
}

/** Aborts a request (and the reading of its body) after the deadline; the signal is per request. */
function timeoutMiddleware(timeoutMs: number): Middleware {
  return {
    pre(context: RequestContext): Promise<RequestContext> {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      context.setHeaderParam('User-Agent', USER_AGENT);
      return Promise.resolve(context);
    },
    post(context: ResponseContext): Promise<ResponseContext> {
      return Promise.resolve(context);
    },
  };
}

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * KubeConfig builds a new undici Agent for every request (client-node 2.0.1), so each call paid a fresh
 * TCP and TLS handshake. The TLS options never change for a gateway, so the first Agent is kept and
 * reused: requests share keep-alive connections. The per-request Agents are never used, so they never
 * open a socket.
 */
class PooledKubeConfigAuthentication implements SecurityAuthentication {
  readonly #kubeConfig: KubeConfig;
  #dispatcher: Dispatcher | undefined;

  constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
  }

  getName(): string {
    return 'kubeconfig authentication, pooled connections';
  }

  async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await this.#kubeConfig.applySecurityAuthentication(context);
    const created = context.getDispatcher();
    if (created === undefined) return;
    if (this.#dispatcher === undefined) this.#dispatcher = created;
    else context.setDispatcher(this.#dispatcher);
  }

  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    await dispatcher?.close();
  }
}

function qualifiedPod(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * The one-shot privileged pod: runs `script` in the host's namespaces, on the node whatever its taints.
 * Exported for the simulator's tests, which run the product's own manifest on the world.
 */
export function prepPodManifest(spec: PrepPodSpec): V1Pod {
  const namespaces =
    spec.hostNamespaces === 'mount' ? ['--mount'] : ['--mount', '--uts', '--ipc', '--net', '--pid'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      labels: { ...spec.labels },
      ...(spec.annotations === undefined ? {} : { annotations: { ...spec.annotations } }),
    },
    spec: {
      // Bound directly, bypassing the scheduler: the node is cordoned by then.
      nodeName: spec.nodeName,
      hostPID: true,
      hostNetwork: true,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 0,
      automountServiceAccountToken: false,
      // The kubelet still rejects pods that do not tolerate the node's NoExecute taints.
      tolerations: [{ operator: 'Exists' }],
      containers: [
        {
          name: PREP_CONTAINER,
          image: spec.image,
          imagePullPolicy: 'IfNotPresent',
          command: ['nsenter', '--target', '1', ...namespaces, '--', '/bin/sh', '-c', spec.script],
          securityContext: { privileged: true },
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}

export class ClientNodeClusterGateway implements ClusterGateway {
  readonly #apiServer: string;
  readonly #core: CoreV1Api;
  readonly #apps: AppsV1Api;
  readonly #authorization: AuthorizationV1Api;
  readonly #version: VersionApi;
  readonly #leases: ClientNodeLeases;
  readonly #authentication: PooledKubeConfigAuthentication;

  constructor(options: ClientNodeClusterGatewayOptions) {
    const { server, timeoutMs } = validated(options);
    this.#apiServer =
      options.cluster === undefined
        ? `the API server ${server}`
        : `the API server of cluster ${options.cluster} (${server})`;
    const kubeConfig = new KubeConfig();
    kubeConfig.addAuthenticator(tokenAuthenticator(options.token));
    kubeConfig.loadFromClusterAndUser(
      // caData is base64 of the PEM (client-node decodes it before handing it to TLS).
      {
        name: 'cluster',
        server,
        caData: Buffer.from(options.caPem, 'utf8').toString('base64'),
        skipTLSVerify: false,
      },
      { name: USER_NAME },
    );
    this.#authentication = new PooledKubeConfigAuthentication(kubeConfig);
    const configuration: Configuration = createConfiguration({
      baseServer: new ServerConfiguration(server, {}),
      authMethods: { default: this.#authentication },
      promiseMiddleware: [timeoutMiddleware(timeoutMs)],
    });
    this.#core = new CoreV1Api(configuration);
    this.#apps = new AppsV1Api(configuration);
    this.#authorization = new AuthorizationV1Api(configuration);
    this.#version = new VersionApi(configuration);
    this.#leases = new ClientNodeLeases(new CoordinationV1Api(configuration), (context, request) =>
      this.#call(context, request),
    );
  }

  /** Closes the pooled connections (not part of the port: for the CLI and tests, which must exit cleanly). */
  async close(): Promise<void> {
    await this.#authentication.close();
  }

  async serverVersion(): Promise<string> {
    const info = await this.#call({ action: 'reading the server version', kind: 'Version' }, () =>
      this.#version.getCode(),
    );
    return info.gitVersion;
  }

  async reviewAccess(accesses: readonly KubernetesAccess[]): Promise<AccessDecision[]> {
    // One review per access, all at once: each is a small request the server answers from memory.
    return Promise.all(
      accesses.map(async (access): Promise<AccessDecision> => {
        const review = await this.#call(
          { action: `reviewing access (${describeAccess(access)})`, kind: 'SelfSubjectAccessReview' },
          () =>
            this.#authorization.createSelfSubjectAccessReview({
              body: {
                apiVersion: 'authorization.k8s.io/v1',
                kind: 'SelfSubjectAccessReview',
                spec: {
                  resourceAttributes: {
                    verb: access.verb,
                    group: access.group,
                    resource: access.resource,
                    ...(access.subresource === undefined ? {} : { subresource: access.subresource }),
                    ...(access.namespace === undefined ? {} : { namespace: access.namespace }),
                  },
                },
              },
            }),
        );
        const allowed = review.status?.allowed === true && review.status.denied !== true;
        const reason = review.status?.reason;
        return reason === undefined || reason === '' ? { allowed } : { allowed, reason };
      }),
    );
  }

  async reviewRules(namespace: string): Promise<RulesReview> {
    const review = await this.#call(
      { action: `reviewing the rules in namespace ${namespace}`, kind: 'SelfSubjectRulesReview' },
      () =>
        this.#authorization.createSelfSubjectRulesReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectRulesReview',
            spec: { namespace },
          },
        }),
    );
    return {
      resourceRules: (review.status?.resourceRules ?? []).map((rule) => ({
        verbs: rule.verbs,
        ...(rule.apiGroups === undefined ? {} : { apiGroups: rule.apiGroups }),
        ...(rule.resources === undefined ? {} : { resources: rule.resources }),
        ...(rule.resourceNames === undefined ? {} : { resourceNames: rule.resourceNames }),
      })),
      incomplete: review.status?.incomplete === true,
    };
  }

  async listNodes(): Promise<ClusterNode[]> {
    let nodes: ClusterNode[] = [];
    await this.scanNodes(
      (page) => {
        nodes.push(...page);
      },
      () => {
        nodes = [];
      },
    );
    return nodes;
  }

  async scanNodes(
    visit: (page: readonly ClusterNode[]) => void | Promise<void>,
    restart: () => void,
  ): Promise<void> {
    const context = { action: 'listing nodes', kind: 'Node' };
    // Each page is converted as it arrives and its raw objects dropped: memory is bounded by a page.
    await this.#eachPage(
      context,
      (page) => this.#core.listNode({ limit: PAGE_SIZE, ...page }),
      (items) => visit(items.map(toClusterNode)),
      restart,
    );
  }

  async getNode(name: string): Promise<ClusterNode> {
    const node = await this.#call({ action: `reading node ${name}`, kind: 'Node' }, () =>
      this.#core.readNode({ name }),
    );
    return toClusterNode(node);
  }

  async patchNodeAnnotations(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    // JSON merge patch: a key set to null is removed, keys not named are left alone.
    await this.#patchNode(`annotating node ${name}`, name, { metadata: { annotations: { ...changes } } });
  }

  async setNodeUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    // Uncordon removes the field rather than writing false, leaving the node exactly as kubectl
    // uncordon does (its two-way strategic merge patch sends null for the omitempty field).
    const body = { spec: { unschedulable: unschedulable ? true : null } };
    await this.#patchNode(`${unschedulable ? 'cordoning' : 'uncordoning'} node ${name}`, name, body);
  }

  async listPodsOnNode(nodeName: string): Promise<PodOnNode[]> {
    // The name goes into a field selector: anything but a DNS subdomain could widen or break it.
    if (!DNS_SUBDOMAIN.test(nodeName)) {
      throw new TerminalError(
        'InvalidNodeName',
        `listing pods on node ${JSON.stringify(nodeName)}: not a valid node name`,
      );
    }
    const context = { action: `listing pods on node ${nodeName}`, kind: 'Pod' };
    const pods = await this.#paged(context, (page) =>
      this.#core.listPodForAllNamespaces({
        fieldSelector: `spec.nodeName=${nodeName}`,
        limit: PAGE_SIZE,
        ...page,
      }),
    );
    return pods.map(toPodOnNode);
  }

  async daemonSetExists(namespace: string, name: string): Promise<boolean> {
    try {
      await this.#call(
        { action: `reading daemonset ${qualifiedPod(namespace, name)}`, kind: 'DaemonSet' },
        () => this.#apps.readNamespacedDaemonSet({ namespace, name }),
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async evictPod(
    namespace: string,
    name: string,
    gracePeriodSeconds: number | undefined,
  ): Promise<EvictionOutcome> {
    const context = { action: `evicting pod ${qualifiedPod(namespace, name)}`, kind: 'Pod' };
    try {
      await this.#core.createNamespacedPodEviction({
        namespace,
        name,
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace },
          ...(gracePeriodSeconds === undefined ? {} : { deleteOptions: { gracePeriodSeconds } }),
        },
      });
      return { kind: 'evicted' };
    } catch (error) {
      const mapped = toRefreshError(error, { ...context, apiServer: this.#apiServer });
      if (isNotFound(mapped)) return { kind: 'gone' };
      if (mapped.code === 'EvictionBlockedByDisruptionBudget') {
        const status = parseStatusBody((error as { body?: unknown }).body);
        return { kind: 'blocked', message: disruptionBudgetRefusal(status) ?? mapped.message };
      }
      throw mapped;
    }
  }

  async createPrepPod(spec: PrepPodSpec): Promise<void> {
    const pod = qualifiedPod(spec.namespace, spec.name);
    try {
      await this.#call({ action: `creating prep pod ${pod} on node ${spec.nodeName}`, kind: 'Pod' }, () =>
        this.#core.createNamespacedPod({ namespace: spec.namespace, body: prepPodManifest(spec) }),
      );
    } catch (error) {
      if (!(error instanceof TerminalError) || error.code !== 'KubeAlreadyExists') throw error;
      // A retried activity finds its own pod. A same-named pod on another node is someone else's.
      const existing = await this.#readPod(spec.namespace, spec.name);
      const boundTo = existing?.spec?.nodeName;
      if (existing !== undefined && boundTo !== undefined && boundTo !== spec.nodeName) {
        throw new TerminalError(
          'PrepPodConflict',
          `creating prep pod ${pod} on node ${spec.nodeName}: a pod of that name already runs on node ${boundTo}`,
          { cause: error },
        );
      }
    }
  }

  async getPodPhase(namespace: string, name: string): Promise<PodPhase | undefined> {
    const pod = await this.#readPod(namespace, name);
    return pod === undefined ? undefined : toPodPhase(pod.status?.phase);
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds = 0): Promise<void> {
    try {
      await this.#call({ action: `deleting pod ${qualifiedPod(namespace, name)}`, kind: 'Pod' }, () =>
        this.#core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds }),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async listDaemonSets(): Promise<DaemonSetTarget[]> {
    const context = { action: 'listing daemonsets', kind: 'DaemonSet' };
    const daemonSets = await this.#paged(context, (page) =>
      this.#apps.listDaemonSetForAllNamespaces({ limit: PAGE_SIZE, ...page }),
    );
    return daemonSets.map(toDaemonSetTarget);
  }

  async patchNodeLabels(name: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    await this.#patchNode(`labelling node ${name}`, name, { metadata: { labels: { ...changes } } });
  }

  async setNodeTaint(name: string, key: string, taint: NodeTaint | null): Promise<void> {
    const action = `${taint === null ? 'untainting' : 'tainting'} node ${name}`;
    const node = await this.#call({ action, kind: 'Node' }, () => this.#core.readNode({ name }));
    const current = node.spec?.taints ?? [];
    const next = withTaint(current, key, taint);
    if (JSON.stringify(next) === JSON.stringify(current)) return;
    // spec.taints is replaced as a whole: the resourceVersion makes a concurrent change a 409, not a loss.
    await this.#patchNode(action, name, {
      metadata: { resourceVersion: node.metadata?.resourceVersion },
      spec: { taints: next },
    });
  }

  async createCheckPod(spec: CheckPodSpec): Promise<void> {
    const pod = qualifiedPod(spec.namespace, spec.name);
    try {
      await this.#call({ action: `creating check pod ${pod} on node ${spec.nodeName}`, kind: 'Pod' }, () =>
        this.#core.createNamespacedPod({ namespace: spec.namespace, body: checkPodManifest(spec) }),
      );
    } catch (error) {
      // A retried activity finds its own pod.
      if (!(error instanceof TerminalError) || error.code !== 'KubeAlreadyExists') throw error;
    }
  }

  async getPodOutcome(namespace: string, name: string): Promise<PodOutcome | undefined> {
    const pod = await this.#readPod(namespace, name);
    return pod === undefined ? undefined : toPodOutcome(pod);
  }

  async listPods(namespace: string, labels: Readonly<Record<string, string>>): Promise<PodSummary[]> {
    const labelSelector = Object.entries(labels)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const context = { action: `listing pods of namespace ${namespace}`, kind: 'Pod' };
    const pods = await this.#paged(context, (page) =>
      this.#core.listNamespacedPod({ namespace, labelSelector, limit: PAGE_SIZE, ...page }),
    );
    return pods.map((pod) => {
      const nodeName = pod.spec?.nodeName;
      return {
        namespace,
        name: pod.metadata?.name ?? '',
        labels: { ...pod.metadata?.labels },
        phase: toPodPhase(pod.status?.phase),
        ...(nodeName === undefined || nodeName === '' ? {} : { nodeName }),
      };
    });
  }

  getLease(namespace: string, name: string): Promise<PoolLease | undefined> {
    return this.#leases.get(namespace, name);
  }

  createLease(lease: LeaseWrite): Promise<PoolLease | 'exists'> {
    return this.#leases.create(lease);
  }

  replaceLease(lease: LeaseWrite, resourceVersion: string): Promise<PoolLease | 'conflict' | 'gone'> {
    return this.#leases.replace(lease, resourceVersion);
  }

  async #readPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    try {
      return await this.#call({ action: `reading pod ${qualifiedPod(namespace, name)}`, kind: 'Pod' }, () =>
        this.#core.readNamespacedPod({ namespace, name }),
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async #patchNode(action: string, name: string, body: object): Promise<void> {
    await this.#call({ action, kind: 'Node' }, () =>
      // Without an explicit Content-Type the generated client sends json-patch+json (kubernetes-client/javascript#2160).
      this.#core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
    );
  }

  async #call<T>(context: KubeCallContext, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw toRefreshError(error, { ...context, apiServer: this.#apiServer });
    }
  }

  /**
   * Follows `continue` tokens to the end. A token the server no longer knows (410 Expired, after etcd
   * compaction) restarts the list from the beginning, as client-go's pager does with a full relist.
   */
  async #paged<T>(
    context: KubeCallContext,
    list: (page: { _continue?: string }) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
  ): Promise<T[]> {
    let items: T[] = [];
    await this.#eachPage(
      context,
      list,
      (page) => {
        items.push(...page);
      },
      () => {
        items = [];
      },
    );
    return items;
  }

  /** One page at a time to `visit`; `restart` before the pages come again after an expired token. */
  async #eachPage<T>(
    context: KubeCallContext,
    list: (page: { _continue?: string }) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
    visit: (items: T[]) => void | Promise<void>,
    restart: () => void,
  ): Promise<void> {
    for (let restarts = 0; ; restarts += 1) {
      let token: string | undefined;
      try {
        do {
          const page = await this.#call(context, () => list(token === undefined ? {} : { _continue: token }));
          token = page.metadata?._continue || undefined;
          await visit(page.items);
        } while (token !== undefined);
        return;
      } catch (error) {
        const expired = error instanceof TransientError && error.code === 'KubeResourceExpired';
        if (!expired || restarts >= MAX_LIST_RESTARTS) throw error;
        restart();
      }
    }
  }
}
