/**
 * `vmss-prototype doctor` for a cluster with CAPZ pools (`capz`): its management cluster answers (the
 * server version, over TLS verified with the configured CA, with the configured token), and the product's
 * service account there holds every permission of infra/kubernetes/management/ in the MachinePools'
 * namespace (SelfSubjectAccessReview, or SelfSubjectRulesReview where the server has no access reviews).
 */
import {
  checkKubernetesAccess,
  managementPermissionFix,
  requiredManagementAccessFor,
} from '../shared/application/kubernetes-permissions.js';
import type { CapzConfiguration } from '../shared/application/refresh-dependencies.js';
import { describeAccess } from '../shared/domain/kubernetes-access.js';
import type { ServerPort } from '../shared/ports/kubernetes/index.js';
import { type DoctorCheck, failed } from './doctor-check.js';

/** The checks of one cluster's management cluster; `server` is absent when it could not be bound. */
export async function managementClusterChecks(
  cluster: string,
  capz: CapzConfiguration,
  handle: { readonly managementServer?: ServerPort },
): Promise<DoctorCheck[]> {
  const target = `management cluster ${capz.managementCluster}`;
  const base = { check: 'management-cluster', cluster, target } as const;
  const server = handle.managementServer;
  if (server === undefined) {
    return [
      { ...base, result: 'error', detail: 'the management cluster is configured but was not connected' },
    ];
  }
  let version: string;
  try {
    version = await server.version();
  } catch (error) {
    // Unreachable or refused: the permission check would only fail the same way.
    return [failed(base, error)];
  }
  const reachable: DoctorCheck = { ...base, result: 'ok', detail: `reachable, Kubernetes ${version}` };
  const permissionsTarget = `${target}, namespace ${capz.namespace}`;
  try {
    const access = await checkKubernetesAccess(
      { server },
      requiredManagementAccessFor(capz.namespace),
      capz.namespace,
    );
    const how = access.method === 'access-review' ? 'SelfSubjectAccessReview' : 'SelfSubjectRulesReview';
    if (access.missing.length === 0) {
      return [
        reachable,
        {
          ...base,
          target: permissionsTarget,
          result: 'ok',
          detail: `all ${access.required.length} permissions on the MachinePools (${how})`,
        },
      ];
    }
    return [
      reachable,
      {
        ...base,
        target: permissionsTarget,
        result: 'missing',
        detail:
          `the service account may not ${access.missing.map(describeAccess).join(', ')} (${how}` +
          `${access.incomplete ? '; the server said its rules list is incomplete' : ''})`,
        missing: access.missing.map(describeAccess),
        fix: managementPermissionFix(access.missing, capz.namespace),
      },
    ];
  } catch (error) {
    return [reachable, failed({ ...base, target: permissionsTarget }, error)];
  }
}
