/**
 * The end state a refresh must leave in the simulated world (docs/design.md#one-refresh-step-by-step, #safety-model), checked from the
 * world's own records rather than from what the product reported: used by the demo and the
 * end-to-end tests.
 */
import { newNodesOf } from '../shared/application/pool-plan.js';
import type { ClusterRefreshResult } from '../shared/application/refresh-contracts.js';
import { CAPTURE_RUN_ANNOTATION, SCALE_DOWN_DISABLED_ANNOTATION } from '../shared/domain/cluster-node.js';
import { NO_OP_CLOUD_CONFIG } from '../shared/domain/compute.js';
import { SNAPSHOT_TAG_KEYS } from '../shared/domain/ownership.js';
import type { RunningSimulator } from '../sim/index.js';

export interface WorldCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

interface NodeObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: { conditions?: { type: string; status: string }[] };
}

/** Checks every refreshed pool of `results`, and that no node anywhere is still held by a run. */
export function checkRefreshedWorld(
  running: RunningSimulator,
  results: readonly ClusterRefreshResult[],
  options: { readonly cordonedBefore?: ReadonlySet<string> } = {},
): WorldCheck[] {
  const checks: WorldCheck[] = [];
  const check = (name: string, ok: boolean, detail?: string): void => {
    checks.push(detail === undefined ? { name, ok } : { name, ok, detail });
  };
  const compute = running.world.compute;

  for (const cluster of results) {
    const store = running.world.cluster(cluster.cluster).world.store;
    for (const pool of cluster.pools) {
      if (pool.outcome !== 'refreshed' || pool.version === undefined || pool.plan === undefined) continue;
      const where = `${cluster.cluster}/${pool.pool}`;
      const version = compute.getImageVersion(pool.version.id);
      check(
        `${where}: image version ${pool.version.versionName} Succeeded and visible to latest`,
        version?.provisioningState === 'Succeeded' && version.excludeFromLatest === false,
        version === undefined
          ? 'missing'
          : `${version.provisioningState}, excludeFromLatest ${String(version.excludeFromLatest)}`,
      );
      const scaleSet = compute.getScaleSet(pool.plan.scaleSet.id);
      const imageId = typeof scaleSet?.imageReference['id'] === 'string' ? scaleSet.imageReference['id'] : '';
      const definitionId = pool.version.id.replace(/\/versions\/[^/]+$/i, '');
      check(
        `${where}: scale set model points at the image definition`,
        imageId.toLowerCase() === definitionId.toLowerCase() &&
          scaleSet?.imageReference['publisher'] === undefined,
        imageId,
      );
      const customData =
        scaleSet?.customData === undefined
          ? undefined
          : Buffer.from(scaleSet.customData, 'base64').toString('utf8');
      const extensions = scaleSet?.extensions ?? [];
      const extensionList =
        extensions
          .map((extension) => `${extension.name}${extension.bootstrap ? ' (bootstrap)' : ''}`)
          .join(', ') || 'none left';
      if (newNodesOf(pool.plan) === 'run-pool-bootstrap') {
        // kubeadm: new nodes still join with the pool's own customData and extensions (which the run
        // never lists for removal: the e2e tests compare them with the model before the run).
        check(
          `${where}: customData kept (new nodes run the pool's bootstrap)`,
          customData !== undefined && customData !== NO_OP_CLOUD_CONFIG,
        );
      } else {
        check(`${where}: customData replaced by a no-op #cloud-config`, customData === NO_OP_CLOUD_CONFIG);
        check(
          `${where}: bootstrap extensions gone, allow-listed ones kept`,
          extensions.every((extension) => !extension.bootstrap) &&
            scaleSet?.bootstrapExtensionsRemain === false,
          extensionList,
        );
      }
      const snapshots = compute
        .listSnapshots()
        .filter((snapshot) => snapshot.tags[SNAPSHOT_TAG_KEYS.sourceNode] === pool.donor);
      check(
        `${where}: snapshot deleted`,
        snapshots.length === 0,
        snapshots.map((s) => s.name).join(', ') || undefined,
      );
      if (pool.donor !== undefined) {
        const node = store.get('nodes', undefined, pool.donor) as NodeObject | undefined;
        const ready =
          node?.status?.conditions?.find((condition) => condition.type === 'Ready')?.status === 'True';
        check(`${where}: donor ${pool.donor} Ready`, ready);
        const wasCordoned = options.cordonedBefore?.has(pool.donor) === true;
        check(
          `${where}: donor ${pool.donor} ${wasCordoned ? 'still cordoned (as before)' : 'uncordoned'}`,
          (node?.spec?.unschedulable === true) === wasCordoned,
        );
      }
    }
  }
  for (const handle of running.world.clusters.values()) {
    for (const object of handle.world.store.list('nodes')) {
      const node = object as unknown as NodeObject;
      const annotations = node.metadata.annotations ?? {};
      if (annotations[CAPTURE_RUN_ANNOTATION] !== undefined) {
        check(
          `node ${node.metadata.name} released by every run`,
          false,
          `${CAPTURE_RUN_ANNOTATION} still set`,
        );
      }
      if (
        annotations[SCALE_DOWN_DISABLED_ANNOTATION] !== undefined &&
        !options.cordonedBefore?.has(node.metadata.name)
      ) {
        check(`node ${node.metadata.name} without our scale-down-disabled annotation`, false);
      }
    }
  }
  check('no node left held by a refresh', !checks.some((c) => !c.ok && c.name.startsWith('node ')));
  return checks;
}
