/**
 * One CAPZ reconciler per scenario cluster with `clusterApi`, managing the clusters whose `managedBy`
 * names it (sim/README.md "Cluster API management cluster (CAPZ)").
 */
import type { ComputeState } from '../../arm/compute-state.js';
import type { WorldClock } from '../clock.js';
import type { ClusterWorld } from '../cluster.js';
import { parseDurationMs, type Scenario } from '../scenario.js';
import { CapzReconciler } from './reconciler.js';

export function createCapzReconcilers(options: {
  scenario: Scenario;
  clusters: ReadonlyMap<string, ClusterWorld>;
  clock: WorldClock;
  compute: ComputeState;
}): Map<string, CapzReconciler> {
  const { scenario, clusters } = options;
  const reconcilers = new Map<string, CapzReconciler>();
  for (const spec of scenario.clusters) {
    const clusterApi = spec.clusterApi;
    const management = clusters.get(spec.name);
    if (!clusterApi || !management) continue;
    const managed = scenario.clusters.flatMap((workload) => {
      const world = clusters.get(workload.name);
      if (workload.managedBy?.managementCluster !== spec.name || !world) return [];
      return [
        {
          clusterName: workload.managedBy.clusterName ?? workload.name,
          namespace: workload.managedBy.namespace ?? clusterApi.namespace,
          world,
          subscriptionId: scenario.subscriptionId,
        },
      ];
    });
    reconcilers.set(
      spec.name,
      new CapzReconciler({
        name: spec.name,
        management,
        managed,
        clock: options.clock,
        compute: options.compute,
        location: scenario.location,
        syncPeriodSeconds: parseDurationMs(clusterApi.syncPeriod) / 1000,
        tokenTtlSeconds: parseDurationMs(clusterApi.tokenTTL) / 1000,
      }),
    );
  }
  return reconcilers;
}
