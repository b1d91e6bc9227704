/**
 * A local HTTPS receiver that speaks Event Grid's CloudEvents publishing protocol (what a topic's
 * `/api/events` endpoint accepts): a POST of `application/cloudevents-batch+json; charset=utf-8` carrying
 * a JSON array of CloudEvents 1.0, authenticated with a bearer token. It answers 200 (or whatever the
 * test asks), and records every request. Its certificate is self-signed, generated here with node-forge.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

import forge from 'node-forge';

export interface ReceivedBatch {
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly events: readonly Record<string, unknown>[];
  /** The raw body, for searching every field at once. */
  readonly body: string;
}

export interface EventReceiver {
  /** The topic endpoint to configure: `https://127.0.0.1:<port>/api/events`. */
  readonly endpoint: string;
  /** PEM of the self-signed certificate, for the client to trust. */
  readonly caPem: string;
  /** Batches answered 200, in arrival order. */
  readonly accepted: ReceivedBatch[];
  /** Requests answered with an error status. */
  readonly refused: ReceivedBatch[];
  /** Status to answer from now on (default 200). */
  answer(status: number): void;
  stop(): Promise<void>;
}

export async function startEventReceiver(): Promise<EventReceiver> {
  const { certPem, keyPem } = selfSigned();
  const accepted: ReceivedBatch[] = [];
  const refused: ReceivedBatch[] = [];
  let status = 200;
  const server: Server = createServer({ cert: certPem, key: keyPem }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let events: Record<string, unknown>[] = [];
      try {
        const parsed: unknown = JSON.parse(body);
        if (Array.isArray(parsed)) events = parsed as Record<string, unknown>[];
      } catch {
        // Recorded with no events; the test's assertions say what was wrong.
      }
      const batch: ReceivedBatch = {
        contentType: request.headers['content-type'],
        authorization: request.headers.authorization,
        events,
        body,
      };
      const ok =
        request.method === 'POST' &&
        request.url?.startsWith('/api/events') === true &&
        batch.authorization?.startsWith('Bearer ') === true;
      const answer = ok ? status : 401;
      (answer === 200 ? accepted : refused).push(batch);
      response.writeHead(answer, { 'content-type': 'application/json' });
      response.end(
        answer === 200 ? '' : JSON.stringify({ error: { code: 'Refused', message: 'test receiver' } }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}/api/events`,
    caPem: certPem,
    accepted,
    refused,
    answer: (next) => {
      status = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A self-signed certificate for 127.0.0.1 (its own CA, so a client can trust exactly it). */
function selfSigned(): { certPem: string; keyPem: string } {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  cert.serialNumber = serial.toString('hex');
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 3600_000);
  cert.validity.notAfter = new Date(now + 24 * 3600_000);
  const subject = [{ name: 'commonName', value: 'event-receiver.test' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privateKey };
}
