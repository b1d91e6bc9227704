/**
 * `doctor`'s check of a cluster's PoolImagePolicy objects (docs/pool-policy.md): whether the resource is
 * served, and whether each object is valid and named after a pool of the cluster — what a run would
 * refuse, said before any run. The service account's permissions on them are the `kubernetes` check's.
 */
import { listPoolsOfCluster } from '../shared/application/pool-lookup.js';
import { applyPolicyToConfiguration } from '../shared/application/pool-policies.js';
import type { ClusterHandle } from '../shared/application/refresh-dependencies.js';
import { describePolicyProblems } from '../shared/domain/pool-policy.js';
import { type DoctorCheck, failed } from './doctor-check.js';

export async function poolPolicyChecks(cluster: string, handle: ClusterHandle): Promise<DoctorCheck[]> {
  const base = { check: 'pool-policies', cluster, target: 'PoolImagePolicy objects' } as const;
  try {
    const listed = await handle.kube.poolPolicies.list();
    if (listed === 'not-installed') {
      return [
        {
          ...base,
          result: 'ok',
          detail:
            'the resource is not installed: every pool follows the settings (kubectl apply -k infra/kubernetes installs it)',
        },
      ];
    }
    if (listed.length === 0)
      return [{ ...base, result: 'ok', detail: 'none: every pool follows the settings' }];
    const pools = await listPoolsOfCluster(handle);
    const problems: string[] = [];
    for (const object of listed) {
      const pool = pools.find((candidate) => candidate.name === object.name);
      if (pool === undefined) {
        problems.push(
          `PoolImagePolicy ${object.name} names no pool of cluster ${cluster} (its pools: ${pools.map((p) => p.name).join(', ') || 'none'})`,
        );
        continue;
      }
      const policy = applyPolicyToConfiguration(
        handle.configuration.poolConfiguration(pool),
        object,
      ).imagePolicy;
      if (policy !== undefined && policy.problems.length > 0) {
        problems.push(describePolicyProblems(object.name, policy.problems));
      }
    }
    if (problems.length === 0) {
      return [
        {
          ...base,
          result: 'ok',
          detail: `${listed.length} valid: ${listed.map((object) => object.name).join(', ')}`,
        },
      ];
    }
    return [
      {
        ...base,
        result: 'error',
        detail: problems.join('; '),
        fix: 'correct the spec (kubectl edit poolimagepolicy <pool>), or name the object after its pool; docs/pool-policy.md lists the fields',
      },
    ];
  } catch (error) {
    return [failed(base, error)];
  }
}
