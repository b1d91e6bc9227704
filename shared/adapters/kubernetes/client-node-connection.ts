/**
 * One cluster's API server over @kubernetes/client-node 2.x, shared by the per-resource adapters: the
 * client configuration (verified TLS, a bearer token that is static or from a provider for rotating
 * Entra ID tokens, a per-request deadline, pooled connections), the error mapping of every call, and
 * paged lists.
 */
import type { RequestOptions } from 'node:https';
import type { ReadableStream } from 'node:stream/web';

import {
  ApiException,
  type Configuration,
  createConfiguration,
  HttpMethod,
  KubeConfig,
  type Middleware,
  type RequestContext,
  type ResponseBody,
  type ResponseContext,
  type SecurityAuthentication,
  ServerConfiguration,
  type User,
} from '@kubernetes/client-node';

import { isRefreshError, TerminalError, TransientError } from '../../domain/errors.js';
import { type KubeCallContext, toRefreshError } from './errors.js';
import { parseListBody } from './list-body.js';

export interface ClientNodeKubernetesOptions {
  /** API server URL; must be `https:`. */
  readonly server: string;
  /** PEM of the CA (bundle) that signed the API server's certificate. */
  readonly caPem: string;
  /** A bearer token, or a provider called before every request (it should cache, e.g. Entra ID tokens). */
  readonly token: string | (() => Promise<string>);
  /** The name the server's certificate is verified for when the URL's host is not in it (an IP, a private endpoint). */
  readonly tlsServerName?: string;
  /** The cluster's name: connection failures say which cluster's CA or URL to check. */
  readonly cluster?: string;
  /** Per-request deadline, including reading the body. Default 30 s. */
  readonly requestTimeoutMs?: number;
}

/** kubectl drain's page size: big enough for one request on most nodes. */
export const PAGE_SIZE = 500;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** A continue token older than the server's compaction window answers 410; a list restarts at most this often. */
const MAX_LIST_RESTARTS = 2;
const USER_NAME = 'vmss-prototype';
const USER_AGENT = 'vmss-prototype (@kubernetes/client-node)';

/** One page of a list: its items and the token of the next. */
export type ListPage<T> = (page: {
  _continue?: string;
}) => Promise<{ items: T[]; metadata?: { _continue?: string } }>;

function validated(options: ClientNodeKubernetesOptions): { server: string; timeoutMs: number } {
  let url: URL;
  try {
    url = new URL(options.server);
  } catch {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      'configuring the connection to the cluster: the server is not a URL',
    );
  }
  // client-node only speaks plain HTTP with skipTLSVerify, which product code never sets.
  if (url.protocol !== 'https:') {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      `configuring the connection to the cluster: the server must be an https URL, got ${url.protocol}//${url.host}`,
    );
  }
  if (!options.caPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      'configuring the connection to the cluster: the CA is not a PEM certificate (expected -----BEGIN CERTIFICATE-----)',
    );
  }
  if (typeof options.token === 'string') checkToken(options.token);
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TerminalError(
      'InvalidClusterConfiguration',
      'configuring the connection to the cluster: requestTimeoutMs must be a positive number',
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
 * TCP and TLS handshake. The TLS options never change for a connection, so the first Agent is kept and
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

/**
 * A response's body as bytes (list-body.ts parses a list from them without one string of the whole).
 * client-node 2.0.1's fetch body also offers the response's stream, which its type does not declare (its
 * `binary()` calls a `buffer()` that undici's Response lacks); without the stream, the text is read.
 */
async function bodyBytes(body: ResponseBody): Promise<Buffer> {
  const stream = (body as { stream?: () => ReadableStream<Uint8Array> | null }).stream?.();
  if (stream === undefined || stream === null) return Buffer.from(await body.text(), 'utf8');
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The client configuration and the error-mapping call wrapper every per-resource adapter uses. */
export class KubeConnection {
  readonly configuration: Configuration;
  /** Which API server, for connection failures (`the API server of cluster prod (https://…)`). */
  readonly apiServer: string;
  readonly #authentication: PooledKubeConfigAuthentication;

  constructor(options: ClientNodeKubernetesOptions) {
    const { server, timeoutMs } = validated(options);
    this.apiServer =
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
        ...(options.tlsServerName === undefined ? {} : { tlsServerName: options.tlsServerName }),
      },
      { name: USER_NAME },
    );
    this.#authentication = new PooledKubeConfigAuthentication(kubeConfig);
    this.configuration = createConfiguration({
      baseServer: new ServerConfiguration(server, {}),
      authMethods: { default: this.#authentication },
      promiseMiddleware: [timeoutMiddleware(timeoutMs)],
    });
  }

  /** Closes the pooled connections. */
  async close(): Promise<void> {
    await this.#authentication.close();
  }

  /** Runs one request; its failure becomes a RefreshError that says what the call was doing. */
  async call<T>(context: KubeCallContext, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw toRefreshError(error, { ...context, apiServer: this.apiServer });
    }
  }

  /**
   * One GET of `path` whose JSON body is returned as parsed, without client-node's deserialisation into
   * its model classes: a list page is then held once (its bytes, then its plain objects, each item parsed
   * from its own text: list-body.ts) instead of three times (text, plain objects, class instances with
   * revived Dates) while it is converted. The request is built, authenticated and sent as the generated
   * client does (its `ObservableAPI`: the request context, the default auth method, the middleware,
   * `httpApi.send`); a status outside 2xx becomes the ApiException the generated client throws, with the
   * server's Status text as its body (errors.ts).
   */
  async getJson(
    context: KubeCallContext,
    path: string,
    query: Readonly<Record<string, string>>,
  ): Promise<unknown> {
    return this.call(context, async () => {
      const config = this.configuration;
      let request = config.baseServer.makeRequestContext(path, HttpMethod.GET);
      request.setHeaderParam('Accept', 'application/json');
      for (const [name, value] of Object.entries(query)) request.setQueryParam(name, value);
      await config.authMethods.default?.applySecurityAuthentication(request);
      for (const middleware of config.middleware) request = await middleware.pre(request).toPromise();
      let response = await config.httpApi.send(request).toPromise();
      for (const middleware of [...config.middleware].reverse())
        response = await middleware.post(response).toPromise();
      const body = await bodyBytes(response.body);
      if (response.httpStatusCode < 200 || response.httpStatusCode > 299)
        throw new ApiException(
          response.httpStatusCode,
          `GET ${path}`,
          body.toString('utf8'),
          response.headers,
        );
      return parseListBody(body);
    });
  }

  /**
   * Follows `continue` tokens to the end. A token the server no longer knows (410 Expired, after etcd
   * compaction) restarts the list from the beginning, as client-go's pager does with a full relist.
   */
  async paged<T>(context: KubeCallContext, list: ListPage<T>): Promise<T[]> {
    let items: T[] = [];
    await this.eachPage(
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
  async eachPage<T>(
    context: KubeCallContext,
    list: ListPage<T>,
    visit: (items: T[]) => void | Promise<void>,
    restart: () => void,
  ): Promise<void> {
    for (let restarts = 0; ; restarts += 1) {
      let token: string | undefined;
      try {
        do {
          const page = await this.call(context, () => list(token === undefined ? {} : { _continue: token }));
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
