/**
 * CAPZ's MachinePool rolling-update strategy as pure functions:
 * azure/scope/strategies/machinepool_deployments/machinepool_deployment_strategy.go
 * (`Surge`, `maxUnavailable`, `SelectMachinesToDelete`) in
 * https://github.com/kubernetes-sigs/cluster-api-provider-azure, with the feature gate
 * SkipMachinePoolModelReconciliation off (its default).
 */

export type DeletePolicy = 'Oldest' | 'Newest' | 'Random';

/** What the strategy reads of an AzureMachinePoolMachine. */
export interface MachineView {
  name: string;
  ready: boolean;
  latestModelApplied: boolean;
  /** The instance's provisioning state (Creating, Succeeded, Deleting, Failed). */
  provisioningState: string;
  /** Being deleted (drained) already. */
  deleting: boolean;
  /** Carries `cluster.x-k8s.io/delete-machine` (copied from its Machine, capi-machines.ts). */
  deleteAnnotated?: boolean;
  /** Creation time (ms) for Oldest/Newest; rank for Random. */
  createdMs: number;
  randomRank: string;
}

/**
 * `intstr.GetScaledValueFromIntOrPercent` (k8s.io/apimachinery/pkg/util/intstr): an int as it is, a
 * percentage of `total`, rounded up for maxSurge and down for maxUnavailable.
 */
export function scaledValue(value: number | string, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const percent = Number(value.replace('%', ''));
  const exact = (percent * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

function order(machines: MachineView[], policy: DeletePolicy): MachineView[] {
  const sorted = [...machines];
  if (policy === 'Random') return sorted.sort((a, b) => (a.randomRank < b.randomRank ? -1 : 1));
  const sign = policy === 'Oldest' ? 1 : -1;
  return sorted.sort((a, b) => sign * (a.createdMs - b.createdMs) || (a.name < b.name ? -1 : 1));
}

/**
 * `SelectMachinesToDelete`: failed or deleting machines first; then, when over-provisioned (an unready
 * replacement of a ready old machine is protected during a rollout), unready old ones, then ready old
 * ones, then ready new ones; otherwise, with enough ready machines, ready machines without the latest
 * model within the disruption budget (ready − desired + maxUnavailable). Never more.
 */
export function selectMachinesToDelete(
  machines: readonly MachineView[],
  desired: number,
  maxUnavailableValue: number | string,
  policy: DeletePolicy,
  rolloutInProgress: boolean,
): MachineView[] {
  const maxUnavailable = scaledValue(maxUnavailableValue, desired, false);
  const live = machines.filter((machine) => !machine.deleting);
  const failed = order(
    live.filter((machine) => machine.provisioningState === 'Failed'),
    policy,
  );
  const deleting = order(
    live.filter((machine) => machine.provisioningState === 'Deleting'),
    policy,
  );
  if (failed.length > 0 || deleting.length > 0) return [...failed, ...deleting];
  // `getDeleteAnnotatedMachines`: machines annotated with delete-machine go next, whatever the count.
  const annotated = order(
    live.filter((machine) => machine.deleteAnnotated === true),
    policy,
  );
  if (annotated.length > 0) return annotated;
  const ready = order(
    live.filter((machine) => machine.ready && machine.provisioningState === 'Succeeded'),
    policy,
  );
  const unready = order(
    live.filter((machine) => !machine.ready),
    policy,
  );
  const withoutLatest = order(
    live.filter((machine) => !machine.latestModelApplied),
    policy,
  );
  const protectedUnready = rolloutInProgress
    ? Math.min(
        ready.filter((machine) => !machine.latestModelApplied).length,
        unready.filter((machine) => machine.latestModelApplied).length,
      )
    : 0;
  const overProvision = ready.length + unready.length - protectedUnready - desired;
  const budget = maxUnavailable > desired ? desired : ready.length - desired + maxUnavailable;

  if (overProvision > 0) {
    const toDelete: MachineView[] = [];
    const take = (machine: MachineView): boolean => {
      if (toDelete.length >= overProvision) return false;
      toDelete.push(machine);
      return true;
    };
    for (const machine of unready) if (!machine.latestModelApplied && !take(machine)) return toDelete;
    let unreadyLatest = unready.filter((machine) => machine.latestModelApplied).length - protectedUnready;
    for (const machine of unready) {
      if (toDelete.length >= overProvision || unreadyLatest <= 0) break;
      if (!machine.latestModelApplied) continue;
      take(machine);
      unreadyLatest -= 1;
    }
    for (const machine of withoutLatest)
      if (machine.ready && !toDelete.includes(machine) && !take(machine)) return toDelete;
    for (const machine of ready) if (machine.latestModelApplied && !take(machine)) return toDelete;
    return toDelete;
  }
  if (ready.length < desired || withoutLatest.length === 0 || budget <= 0) return [];
  return ready.filter((machine) => !machine.latestModelApplied).slice(0, budget);
}
