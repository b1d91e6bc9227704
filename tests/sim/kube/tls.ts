/**
 * Throwaway certificate authority and 127.0.0.1 server certificate for HTTPS tests: the simulator's
 * own generator (sim/world/tls.ts), in the shape these tests use.
 */
import { generateSimTls } from '../../../sim/world/tls.js';

export interface TestTls {
  caPem: string;
  key: string;
  cert: string;
}

export function createTestTls(): TestTls {
  const tls = generateSimTls(new Date());
  return { caPem: tls.caPem, key: tls.keyPem, cert: tls.certPem };
}
