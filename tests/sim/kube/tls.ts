/**
 * Throwaway certificate authority and 127.0.0.1 server certificate for HTTPS tests. Keys come from
 * node:crypto (fast) and are signed with node-forge.
 */
import { generateKeyPairSync } from 'node:crypto';

import forge from 'node-forge';

export interface TestTls {
  caPem: string;
  key: string;
  cert: string;
}

function keyPair(): {
  privateKey: forge.pki.rsa.PrivateKey;
  publicKey: forge.pki.rsa.PublicKey;
  pem: string;
} {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const forgeKey = forge.pki.privateKeyFromPem(privateKey);
  return {
    privateKey: forgeKey,
    publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e),
    pem: privateKey,
  };
}

export function createTestTls(): TestTls {
  const ca = keyPair();
  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.publicKey;
  caCert.serialNumber = '01';
  caCert.validity.notBefore = new Date(Date.UTC(2020, 0, 1));
  caCert.validity.notAfter = new Date(Date.UTC(2099, 0, 1));
  const caName = [{ name: 'commonName', value: 'vmss-prototype test CA' }];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());

  const server = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = server.publicKey;
  cert.serialNumber = '02';
  cert.validity.notBefore = new Date(Date.UTC(2020, 0, 1));
  cert.validity.notAfter = new Date(Date.UTC(2099, 0, 1));
  cert.setSubject([{ name: 'commonName', value: 'kube-apiserver' }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());
  return {
    caPem: forge.pki.certificateToPem(caCert),
    key: server.pem,
    cert: forge.pki.certificateToPem(cert),
  };
}
