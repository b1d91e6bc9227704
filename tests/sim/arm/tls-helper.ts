/**
 * Throwaway CA and server certificate for the ARM tests, generated once per test file (process):
 * the Azure SDK refuses bearer tokens over plain HTTP, so the simulated ARM serves TLS.
 */
import { generateSimTls, type SimTls } from '../../../sim/world/tls.js';

let cached: SimTls | undefined;

export function testTls(): SimTls {
  // Wall-clock time on purpose: the client validates certificates against the machine's clock.
  cached ??= generateSimTls(new Date(), ['localhost']);
  return cached;
}
