/** Tests for the simulator's throwaway CA and server certificate. */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';

import { generateSimTls, processSimTls } from '../../../sim/world/tls.js';

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

void describe('processSimTls', () => {
  void it('generates once per process and again when the pair nears its end', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const first = processSimTls(now);
    assert.equal(processSimTls(new Date(now.getTime() + 60_000)), first, 'the same pair a minute later');
    const server = new X509Certificate(first.certPem);
    assert.ok(Date.parse(server.validTo) > now.getTime() + 363 * 24 * 3600 * 1000);
    const later = new Date(now.getTime() + 364 * 24 * 3600 * 1000);
    const renewed = processSimTls(later);
    assert.notEqual(renewed, first, 'a new pair within a day of the old one ending');
    assert.ok(Date.parse(new X509Certificate(renewed.certPem).validTo) > later.getTime());
    assert.notEqual(processSimTls(now), renewed, 'a clock before the pair was made: a new one');
  });
});
