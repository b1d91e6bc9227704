/**
 * Test helper: a minimal scripted ARM endpoint on 127.0.0.1 over TLS (the simulator's throwaway CA),
 * for answers the simulator does not give (synchronous refusals, hangs, marketplace images) and for
 * looking at request bodies exactly as they left the SDK.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import { testTls } from '../../../sim/arm/tls-helper.js';

export interface StubRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Parsed JSON body, or undefined when there was none. */
  readonly body: unknown;
}

export interface StubReply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Answer for a request; `hang` accepts it and never responds. */
export type StubHandler = (request: StubRequest) => StubReply | 'hang';

export interface HttpsStub {
  readonly url: string;
  readonly ca: string;
  readonly requests: StubRequest[];
  close(): Promise<void>;
}

export async function startHttpsStub(handler: StubHandler): Promise<HttpsStub> {
  const tls = testTls();
  const requests: StubRequest[] = [];
  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(request.url ?? '/', 'https://127.0.0.1');
      const recorded: StubRequest = {
        method: request.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      };
      requests.push(recorded);
      const reply = handler(recorded);
      if (reply === 'hang') {
        return;
      }
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    ca: tls.caPem,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}

/** ARM's error body. */
export function armError(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): StubReply {
  return { status, body: { error: { code, message } }, ...(headers === undefined ? {} : { headers }) };
}
