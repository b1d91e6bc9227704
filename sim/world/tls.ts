/**
 * A throwaway certificate authority and a server certificate for 127.0.0.1/localhost, so the Azure SDK
 * (which refuses bearer tokens over plain HTTP) and kubectl can talk TLS to the simulator.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import forge from 'node-forge';

export interface SimTls {
  caPem: string;
  certPem: string;
  keyPem: string;
}

interface RsaKeyPair {
  /** PKCS#1 PEM, as the server's TLS options and `forge.pki.privateKeyToPem` write it. */
  readonly privatePem: string;
  readonly publicKey: forge.pki.rsa.PublicKey;
}

function rsaKeyPair(): RsaKeyPair {
  // node:crypto generates in native code in milliseconds; forge's pure-JS keygen takes seconds.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privatePem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey) };
}

/**
 * Signs a certificate with node:crypto: forge builds the certificate and hands its DER to the digest
 * (`update`), and the "key" signs what it was given in native code (forge's pure-JS RSA signature was
 * about half a second of every test process's CPU, two per process).
 */
function signNatively(certificate: forge.pki.Certificate, privatePem: string): void {
  let tbs = '';
  const digest = {
    algorithm: 'sha256',
    update(bytes: string) {
      tbs += bytes;
      return digest;
    },
  };
  const key = {
    sign: () => sign('sha256', Buffer.from(tbs, 'binary'), privatePem).toString('binary'),
  };
  certificate.sign(key as unknown as forge.pki.rsa.PrivateKey, digest as unknown as forge.md.MessageDigest);
}

function serialNumber(): string {
  // Positive (high bit clear) 16-byte serial, as RFC 5280 requires, with a non-zero first byte: a serial
  // starting 0x00 is encoded with a leading zero byte that OpenSSL refuses ("illegal padding"), about one
  // simulator start in a hundred.
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes.toString('hex');
}

/**
 * `now` is wall-clock time on purpose: clients check validity against the machine's clock, not the
 * simulated one, so the certificates must be valid in real time whatever the scenario's start.
 */
export function generateSimTls(now: Date, hostnames: readonly string[] = ['localhost']): SimTls {
  const notBefore = new Date(now.getTime() - 24 * 3600 * 1000);
  const notAfter = new Date(now.getTime() + 365 * 24 * 3600 * 1000);

  const caKeys = rsaKeyPair();
  const ca = forge.pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = serialNumber();
  ca.validity.notBefore = notBefore;
  ca.validity.notAfter = notAfter;
  const caSubject = [
    { name: 'commonName', value: 'vmss-prototype simulator CA' },
    { name: 'organizationName', value: 'vmss-prototype' },
  ];
  ca.setSubject(caSubject);
  ca.setIssuer(caSubject);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signNatively(ca, caKeys.privatePem);

  const serverKeys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = serverKeys.publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: 'localhost' }]);
  cert.setIssuer(caSubject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      // type 2 = DNS name, type 7 = IP address.
      altNames: [
        ...hostnames.map((value) => ({ type: 2, value })),
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
      ],
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signNatively(cert, caKeys.privatePem);

  return {
    caPem: forge.pki.certificateToPem(ca),
    certPem: forge.pki.certificateToPem(cert),
    keyPem: serverKeys.privatePem,
  };
}

const DAY_MS = 24 * 3600 * 1000;
let shared: { readonly tls: SimTls; readonly generatedMs: number } | undefined;

/**
 * The simulator's certificates for a start at `now`, generated once per process: two RSA keys and two
 * signatures cost about 0.15 s of CPU, and a test process starts a simulator per case (the crash sweeps
 * and the explorer, dozens of times). Nothing is shared between processes, and a new pair is made when
 * the last one is within a day of its end (they are valid a year from a day before they were made).
 */
export function processSimTls(now: Date): SimTls {
  const nowMs = now.getTime();
  if (shared === undefined || nowMs < shared.generatedMs || nowMs > shared.generatedMs + 363 * DAY_MS) {
    shared = { tls: generateSimTls(now), generatedMs: nowMs };
  }
  return shared.tls;
}

/** Writes `ca.pem` into `outDir` (created if needed) and returns its path. */
export async function writeCaPem(outDir: string, tls: SimTls): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const path = join(outDir, 'ca.pem');
  await writeFile(path, tls.caPem, 'utf8');
  return path;
}
