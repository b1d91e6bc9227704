/**
 * client-node's requests sent over `node:https` with one keep-alive Agent per API server, instead of its
 * default library (undici's `fetch`, a new undici Agent built for every request by KubeConfig). The
 * generated client still builds each request (path, query, headers, body), and still reads and
 * deserialises each response; only the sending is ours. A request through `fetch` cost the client about
 * twice the CPU of the same request through `node:https` (docs/scale.md, "Client CPU of one CLI
 * refresh"), and a refresh sends a few hundred.
 *
 * TLS is verified against the configured CA whatever NODE_TLS_REJECT_UNAUTHORIZED says
 * (`rejectUnauthorized: true`), for the configured server name when one is set. A failure to connect,
 * to send or to read the whole response is a `KubeTransportError` whose `cause` is the socket's or TLS's
 * own error (its `code` says which: errors.ts maps it); the per-request deadline is the request
 * context's signal, and covers reading the body.
 */
import { Agent, request as httpsRequest } from 'node:https';

import {
  type HttpLibrary,
  type RequestContext,
  ResponseContext,
  wrapHttpLibrary,
} from '@kubernetes/client-node';

/** A request that did not complete: the connection, TLS, the deadline or the response stream failed. */
export class KubeTransportError extends Error {
  override readonly name = 'KubeTransportError';
}

export interface HttpsLibraryOptions {
  /** PEM of the CA (bundle) that signed the API server's certificate. */
  readonly caPem: string;
  /** The name the server's certificate is verified for, when it is not the URL's host. */
  readonly tlsServerName?: string;
}

/** The HTTP library for client-node's configuration (`httpApi`), and the Agent's sockets to close. */
export interface HttpsLibrary {
  readonly httpApi: HttpLibrary;
  /** Closes the pooled sockets (idle ones at once, busy ones when their response ends). */
  close(): void;
}

/** Idle keep-alive sockets are probed after this long, as client-node's own Agent does (ms). */
const KEEP_ALIVE_INITIAL_DELAY_MS = 30_000;

export function httpsLibrary(options: HttpsLibraryOptions): HttpsLibrary {
  const agent = new Agent({
    keepAlive: true,
    keepAliveMsecs: KEEP_ALIVE_INITIAL_DELAY_MS,
    ca: options.caPem,
    rejectUnauthorized: true,
    ...(options.tlsServerName === undefined ? {} : { servername: options.tlsServerName }),
  });
  return {
    httpApi: wrapHttpLibrary({ send: (request) => send(agent, request) }),
    close: () => agent.destroy(),
  };
}

function send(agent: Agent, request: RequestContext): Promise<ResponseContext> {
  const body = request.getBody();
  if (body !== undefined && typeof body !== 'string') {
    // The generated client sends JSON text; form bodies are for endpoints the product never calls.
    return Promise.reject(new KubeTransportError('sending a request: only text bodies are supported'));
  }
  return new Promise<ResponseContext>((resolve, reject) => {
    const signal = request.getSignal();
    // Settles once: a later failure of the same request (its socket closing after an abort) is moot.
    const failed = (error: unknown): void => {
      // An aborted request fails for its deadline (the signal's TimeoutError), whatever the socket said.
      const cause: unknown = signal?.aborted === true ? signal.reason : error;
      reject(new KubeTransportError(messageOf(cause), { cause }));
    };
    const outgoing = httpsRequest(
      request.getUrl(),
      {
        method: request.getHttpMethod(),
        // Node frames a DELETE's body only with an explicit length (no chunking by default for it).
        headers:
          body === undefined
            ? request.getHeaders()
            : { ...request.getHeaders(), 'Content-Length': String(Buffer.byteLength(body, 'utf8')) },
        agent,
        ...(signal === undefined ? {} : { signal }),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', failed);
        // A response cut short (the socket closed, the deadline aborted it) closes without a complete body.
        response.on('close', () => {
          if (!response.complete)
            failed(Object.assign(new Error('the response ended early'), { code: 'ECONNRESET' }));
        });
        response.on('end', () => {
          if (!response.complete) return;
          const bytes = Buffer.concat(chunks);
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve(
            new ResponseContext(response.statusCode ?? 0, headers, {
              text: () => Promise.resolve(bytes.toString('utf8')),
              binary: () => Promise.resolve(bytes),
              // Read whole already: nothing the product calls streams a body.
              stream: () => null,
            }),
          );
        });
      },
    );
    outgoing.on('error', failed);
    outgoing.end(body);
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error && error.message !== '' ? error.message : 'the request failed';
}
