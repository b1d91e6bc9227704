/**
 * Which version of `cluster.x-k8s.io` the product reads and writes MachinePools at, from the management
 * cluster's discovery (pure): `v1beta2` when the group lists it (Cluster API v1.11+ stores MachinePools at
 * v1beta2 and serves v1beta1 deprecated, with a warning on every request, until it stops serving it),
 * else `v1beta1` (an older Cluster API). Shapes: cluster-api `api/core/v1beta2/machinepool_types.go`,
 * `api/core/v1beta2/common_types.go` (ContractVersionedObjectReference); docs/capz.md.
 */
import { z } from 'zod';

export type MachinePoolVersion = 'v1beta1' | 'v1beta2';

export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';

/** The part of `GET /apis` (an APIGroupList) the choice reads. */
const GroupList = z.looseObject({
  groups: z
    .array(
      z.looseObject({
        name: z.string(),
        versions: z.array(z.looseObject({ version: z.string() })).nullish(),
      }),
    )
    .nullish(),
});

/** v1beta2 when discovery lists it for cluster.x-k8s.io, else v1beta1. */
export function machinePoolVersionOf(groupList: unknown): MachinePoolVersion {
  const parsed = GroupList.safeParse(groupList);
  const group = parsed.success
    ? (parsed.data.groups ?? []).find((entry) => entry.name === CLUSTER_API_GROUP)
    : undefined;
  return (group?.versions ?? []).some((entry) => entry.version === 'v1beta2') ? 'v1beta2' : 'v1beta1';
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * A reference of a MachinePool's template (`bootstrap.configRef`, `infrastructureRef`) to `name`, as
 * `version` writes it, keeping the group (and version) of the pool's own reference (`source`, read at
 * the same version), else `fallback`'s: v1beta1 an ObjectReference (`apiVersion`, `kind`, `name`),
 * v1beta2 a ContractVersionedObjectReference (`apiGroup`, `kind`, `name`; the version is the provider's
 * contract).
 */
export function templateReference(
  version: MachinePoolVersion,
  source: { apiVersion?: string | undefined; apiGroup?: string | undefined } | null | undefined,
  fallbackApiVersion: string,
  kind: string,
  name: string,
): Record<string, string> {
  if (version === 'v1beta1') return { apiVersion: source?.apiVersion ?? fallbackApiVersion, kind, name };
  const apiGroup = source?.apiGroup ?? groupOf(source?.apiVersion ?? fallbackApiVersion);
  return { apiGroup, kind, name };
}
