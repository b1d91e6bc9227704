/**
 * One cluster's API server over @kubernetes/client-node 2.x, shared by the per-resource adapters: the
 * client configuration (verified TLS, a bearer token that is static or from a provider for rotating
 * Entra ID tokens, a per-request deadline, pooled keep-alive connections over `node:https`:
 * https-library.ts), the error mapping of every call, and paged lists.
 */
import {
  ApiException,
  type Configuration,
  createConfiguration,
  HttpMethod,
  type Middleware,
  type RequestContext,
  type ResponseBody,
  type ResponseContext,
  type SecurityAuthentication,
  ServerConfiguration,
} from '@kubernetes/client-node';

import { isRefreshError, TerminalError, TransientError } from '../../domain/errors.js';
import { type KubeCallContext, toRefreshError } from './errors.js';
import { type HttpsLibrary, httpsLibrary } from './https-library.js';
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
  // Plain HTTP would send the bearer token in clear: only https is spoken (https-library.ts).
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

/**
 * Supplies the bearer token on every request (a provider is asked each time: it caches, and rotates).
 * Certificate verification is the HTTPS library's (https-library.ts), unconditional.
 */
class TokenAuthentication implements SecurityAuthentication {
  readonly #token: string | (() => Promise<string>);

  constructor(token: string | (() => Promise<string>)) {
    this.#token = token;
  }

  getName(): string {
    return 'bearer token';
  }

  async applySecurityAuthentication(context: RequestContext): Promise<void> {
    let value: string;
    try {
      value = checkToken(typeof this.#token === 'string' ? this.#token : await this.#token());
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
    context.setHeaderParam('Authorization', `Bearer ${value}`);
  }
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

/** A response's body as bytes (list-body.ts parses a list from them without one string of the whole). */
async function bodyBytes(body: ResponseBody): Promise<Buffer> {
  return Buffer.from(await body.binary());
}

/** The client configuration and the error-mapping call wrapper every per-resource adapter uses. */
export class KubeConnection {
  readonly configuration: Configuration;
  /** Which API server, for connection failures (`the API server of cluster prod (https://…)`). */
  readonly apiServer: string;
  readonly #https: HttpsLibrary;

  constructor(options: ClientNodeKubernetesOptions) {
    const { server, timeoutMs } = validated(options);
    this.apiServer =
      options.cluster === undefined
        ? `the API server ${server}`
        : `the API server of cluster ${options.cluster} (${server})`;
    this.#https = httpsLibrary({
      caPem: options.caPem,
      ...(options.tlsServerName === undefined ? {} : { tlsServerName: options.tlsServerName }),
    });
    this.configuration = createConfiguration({
      baseServer: new ServerConfiguration(server, {}),
      authMethods: { default: new TokenAuthentication(options.token) },
      httpApi: this.#https.httpApi,
      promiseMiddleware: [timeoutMiddleware(timeoutMs)],
    });
  }

  /** Closes the pooled connections. */
  close(): Promise<void> {
    this.#https.close();
    return Promise.resolve();
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
