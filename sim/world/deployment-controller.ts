/**
 * The Deployment controller stand-in of a simulated cluster: keeps each Deployment's ReplicaSet at the
 * Deployment's scale and the Deployment's status (replicas, availability, conditions) in step.
 */
import type { KubeStore } from '../contracts.js';
import { controllerOf, specOf, statusOf, timestamp } from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import { replicaSetFor } from './workloads.js';

export class DeploymentController {
  private deploymentSync: (() => void) | undefined;

  constructor(
    private readonly name: string,
    private readonly store: KubeStore,
    private readonly clock: WorldClock,
  ) {}

  /** Keeps each Deployment's ReplicaSet at the Deployment's scale and the Deployment's status in step. */
  queue(): void {
    if (this.deploymentSync) return;
    this.deploymentSync = this.clock.after(0, `deployments ${this.name}`, () => {
      this.deploymentSync = undefined;
      this.syncDeployments();
    });
  }

  private syncDeployments(): void {
    for (const deployment of this.store.list('deployments')) {
      const namespace = deployment.metadata.namespace ?? 'default';
      const owned = this.store
        .list('replicasets', namespace)
        .filter((replicaSet) => controllerOf(replicaSet)?.uid === deployment.metadata.uid);
      const replicas = Number(specOf(deployment).replicas ?? 1);
      if (owned.length === 0) {
        this.store.create('replicasets', replicaSetFor(deployment));
        continue;
      }
      for (const replicaSet of owned) {
        if (Number(specOf(replicaSet).replicas ?? 1) !== replicas) {
          this.store.mutate('replicasets', namespace, replicaSet.metadata.name, (target) => {
            target.spec = { ...specOf(target), replicas };
          });
        }
      }
      const sum = (field: string): number =>
        owned.reduce((total, rs) => total + Number(statusOf(rs)[field] ?? 0), 0);
      const available = sum('availableReplicas');
      const status = {
        observedGeneration: deployment.metadata.generation ?? 1,
        replicas: sum('replicas'),
        updatedReplicas: sum('replicas'),
        readyReplicas: sum('readyReplicas'),
        availableReplicas: available,
        ...(available < replicas ? { unavailableReplicas: replicas - available } : {}),
      };
      const current = statusOf(deployment);
      const same = Object.entries(status).every(([key, value]) => current[key] === value);
      if (!same) {
        this.store.mutate('deployments', namespace, deployment.metadata.name, (target) => {
          target.status = {
            ...status,
            conditions: deploymentConditions(status.availableReplicas >= replicas, this.clock.nowMs()),
          };
        });
      }
    }
  }

  stop(): void {
    this.deploymentSync?.();
  }
}

function deploymentConditions(available: boolean, nowMs: number): unknown[] {
  const at = timestamp(nowMs);
  return [
    {
      type: 'Available',
      status: available ? 'True' : 'False',
      reason: available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
      message: available
        ? 'Deployment has minimum availability.'
        : 'Deployment does not have minimum availability.',
      lastUpdateTime: at,
      lastTransitionTime: at,
    },
    {
      type: 'Progressing',
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: 'ReplicaSet has successfully progressed.',
      lastUpdateTime: at,
      lastTransitionTime: at,
    },
  ];
}
