/** Tests for the simulator's throwaway CA and server certificate. */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';

import { generateSimTls } from '../../../sim/world/tls.js';

void describe('generateSimTls', () => {
  void it('issues a server certificate for 127.0.0.1 and localhost, signed by a CA, valid now', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const tls = generateSimTls(now);
    const ca = new X509Certificate(tls.caPem);
    const server = new X509Certificate(tls.certPem);
    assert.equal(ca.ca, true);
    assert.equal(server.ca, false);
    assert.equal(server.verify(ca.publicKey), true);
    assert.equal(server.checkIssued(ca), true);
    assert.match(server.subjectAltName ?? '', /DNS:localhost/);
    assert.match(server.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
    assert.equal(server.checkIP('127.0.0.1'), '127.0.0.1');
    assert.ok(Date.parse(server.validFrom) < now.getTime() && Date.parse(server.validTo) > now.getTime());
    assert.match(tls.keyPem, /BEGIN RSA PRIVATE KEY/);
  });
});
