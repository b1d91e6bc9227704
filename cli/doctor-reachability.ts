/**
 * How `vmss-prototype doctor` reports an API server it cannot reach (connection refused, a timeout, a name
 * that does not resolve): the server's URL, the network cause, and the checks of docs/private-clusters.md
 * in the order that cause makes most likely — DNS first when the name did not resolve, the path (virtual
 * network integration, peering, NSG) when nothing answered, the server's port and authorized ranges when
 * it refused.
 */
import { isRefreshError, messageOf, networkCodeOf } from '../shared/domain/errors.js';
import type { DoctorCheck } from './doctor-check.js';

/** The adapter's codes for a server that did not answer (shared/adapters/kubernetes/errors.ts). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['ClusterUnreachable', 'ClusterRequestTimeout']);

const DNS_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN']);
const REFUSED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET']);

export const PRIVATE_CLUSTERS_DOC = 'docs/private-clusters.md';

export { networkCodeOf } from '../shared/domain/errors.js';

/** True when an activity failure's code says the API server could not be reached (no error object at hand). */
export function isUnreachableCode(code: string): boolean {
  return UNREACHABLE_CODES.has(code);
}

/** True when the error says the API server could not be reached at all (not a refusal by Kubernetes). */
export function isUnreachable(error: unknown): boolean {
  return isRefreshError(error) && UNREACHABLE_CODES.has(error.code);
}

function hostAndPort(url: string): { host: string; port: string } {
  try {
    const parsed = new URL(url);
    return { host: parsed.hostname, port: parsed.port === '' ? '443' : parsed.port };
  } catch {
    return { host: url, port: '443' };
  }
}

/** What to check, most likely first for this cause, each concrete for this server. */
export function unreachableAdvice(url: string, code: string | undefined): string {
  const { host, port } = hostAndPort(url);
  const dns = `DNS: ${host} must resolve where the app runs (a private DNS zone holding it, linked to the app's virtual network, or the network's DNS servers)`;
  const path =
    `network path: the function app needs virtual network integration (infra parameter network.appSubnetId) ` +
    `in a network peered with the cluster's, and an NSG rule on the API server's subnet allowing TCP ${port} ` +
    `from the integration subnet`;
  const ranges = `authorized IP ranges: if the API server admits listed addresses only, list the app's outbound addresses (or its NAT gateway's public IP)`;
  const server = `the server: something must listen on ${host}:${port} (check apiServer.url)`;
  const order =
    code !== undefined && DNS_CODES.has(code)
      ? [dns, path, ranges]
      : code !== undefined && REFUSED_CODES.has(code)
        ? [server, path, ranges, dns]
        : [path, ranges, dns];
  return `check ${order.map((item, index) => `(${index + 1}) ${item}`).join('; ')} — see ${PRIVATE_CLUSTERS_DOC}`;
}

/** The failed check of an unreachable API server: its URL and cause in the detail, the checks as the fix. */
export function unreachableCheck(
  base: Omit<DoctorCheck, 'result' | 'detail' | 'fix'>,
  url: string,
  error: unknown,
): DoctorCheck {
  const code = networkCodeOf(error);
  return {
    ...base,
    result: 'error',
    detail: `cannot reach the API server ${url}${code === undefined ? '' : ` (${code})`}: ${messageOf(error)}`,
    fix: unreachableAdvice(url, code),
  };
}
