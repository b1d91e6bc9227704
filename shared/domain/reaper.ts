/**
 * The reaper's decision (docs/design.md#the-reaper): given what one pool's runs left in the cluster and in Azure, and
 * the one run that is alive on the pool (the holder of its live lease, if any), what to give back and what
 * to keep, each with its reason. Pure: the caller reads the world and carries the actions out.
 *
 * What a run that is not alive (crashed, killed, its lease expired or taken) may have left, and how each is
 * given back exactly as it was:
 * - the prep pod → deleted first, so that it cannot power the VM off again after it was started;
 * - a stopped VM of a node it holds (we stopped it) → started;
 * - a VM recorded as stopped by it (domain/stop-record.ts: on the scale set, or on the pool lease for a
 *   CAPZ pool), even with its Node object deleted → started, then the record removed;
 * - the node (marker annotation) → its prior state restored from the node's own annotation: uncordoned only
 *   if it was schedulable before, scale-down-disabled put back as it was, our annotations removed;
 * - live capture's copy disk (a managed disk made from the snapshot, tag COPY_DISK_PURPOSE_TAG) → detached
 *   from the donor when still attached (a donor rebooting with it may mount the copy as its root), then
 *   deleted; the freeze and scrub pods are prep pods, deleted with a grace period so that their TERM trap
 *   thaws the filesystem or unmounts the copy (live-leftovers.ts);
 * - its snapshot → deleted;
 * - an unfinished image version (not Succeeded and published) → deleted, but never one rejected on purpose
 *   (safe promotion keeps those hidden) and never the one the model points at.
 * Whatever carries the live run's id, or no run id of ours, is kept.
 */
import type { PowerState, ProvisioningState } from './compute.js';
import type { CopyDiskHolding, LiveReapAction } from './live-leftovers.js';
import { planLiveLeftovers } from './live-leftovers.js';
import { definedOnly } from './optional.js';
import type { NodePriorState } from './ownership.js';
import type { StopRecordPlace } from './stop-record.js';

export interface HeldNode {
  readonly name: string;
  /** The run id in the node's marker annotation. */
  readonly runId: string;
  /** From the node's prior-state annotation; undefined when it is missing or unreadable. */
  readonly prior?: NodePriorState;
  readonly unschedulable: boolean;
  /** The node's instance and its power state; `gone` when the VM no longer exists. */
  readonly instance:
    | { readonly kind: 'present'; readonly instanceId: string; readonly powerState: PowerState }
    | { readonly kind: 'gone' }
    | { readonly kind: 'unknown'; readonly reason: string };
}

export interface PrepPodHolding {
  readonly namespace: string;
  readonly name: string;
  readonly runId?: string;
  readonly phase: string;
  /**
   * Live capture's freeze and scrub pods: deleted with this grace period, so the kubelet's TERM reaches
   * their trap (thaw, unmount). Absent: the drain-and-stop prep pod, deleted at once (grace 0) so that it
   * cannot power the host off after it was started again.
   */
  readonly gracePeriodSeconds?: number;
}

export interface SnapshotHolding {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
  readonly runId?: string;
  readonly provisioningState: ProvisioningState;
}

export interface VersionHolding {
  readonly versionName: string;
  /** Absent for versions we did not build (kamino's, hand-made). */
  readonly runId?: string;
  readonly provisioningState: ProvisioningState;
  readonly excludeFromLatest: boolean;
  readonly rejected: boolean;
}

/**
 * A VM a run recorded that it stops (domain/stop-record.ts), with its power state now: found even when
 * its Node object is gone.
 */
export interface StoppedVmHolding {
  readonly instanceId: string;
  readonly runId: string;
  readonly instance: HeldNode['instance'];
  /** Where the record is: absent, the scale set's tags; `pool-lease` for a CAPZ pool. */
  readonly place?: StopRecordPlace;
}

/** Everything one pool's runs may have left behind. */
export interface PoolHoldings {
  readonly nodes: readonly HeldNode[];
  /** The stopped-VM records on the scale set and the pool lease (absent: none looked for). */
  readonly stoppedVms?: readonly StoppedVmHolding[];
  readonly prepPods: readonly PrepPodHolding[];
  readonly snapshots: readonly SnapshotHolding[];
  readonly versions: readonly VersionHolding[];
  /** Live capture's copy disks of the pool (absent: none looked for). */
  readonly copyDisks?: readonly CopyDiskHolding[];
  /** The image the scale set's model points at (a definition or a version id). */
  readonly modelImageId?: string;
}

export type ReapAction =
  | {
      readonly kind: 'delete-prep-pod';
      readonly namespace: string;
      readonly name: string;
      readonly runId: string;
      /** Live capture's pods: TERM first (PrepPodHolding.gracePeriodSeconds). */
      readonly gracePeriodSeconds?: number;
    }
  // Live capture's copy disk: detached, then deleted (its pods are prep pods above).
  | Exclude<LiveReapAction, { readonly kind: 'delete-live-pod' }>
  | {
      readonly kind: 'start-instance';
      /** Absent: a recorded VM whose Node object is gone. */
      readonly node?: string;
      readonly instanceId: string;
      readonly runId: string;
    }
  // The stopped-VM record goes once the VM runs again (after the starts).
  | {
      readonly kind: 'clear-stop-record';
      readonly instanceId: string;
      readonly runId: string;
      /** Absent: on the scale set's tags. */
      readonly place?: StopRecordPlace;
    }
  | {
      readonly kind: 'restore-node';
      readonly node: string;
      readonly runId: string;
      readonly prior: NodePriorState;
    }
  | {
      readonly kind: 'delete-snapshot';
      readonly subscriptionId: string;
      readonly resourceGroup: string;
      readonly name: string;
      readonly runId: string;
    }
  | { readonly kind: 'delete-image-version'; readonly versionName: string; readonly runId: string };

export interface Kept {
  readonly what: string;
  readonly reason: string;
}

export interface ReapPlan {
  /** In the order to carry them out. */
  readonly actions: readonly ReapAction[];
  readonly kept: readonly Kept[];
}

const STOPPED: ReadonlySet<PowerState> = new Set(['stopping', 'stopped', 'deallocating', 'deallocated']);

/**
 * Decides what to give back. `aliveRunId` is the run that holds the pool's live lease (when the reaper runs
 * inside a run, that run itself): everything carrying its id is in use.
 */
export function planReaping(holdings: PoolHoldings, aliveRunId: string | undefined): ReapPlan {
  const kept: Kept[] = [];
  const prepPods: ReapAction[] = [];
  const starts: ReapAction[] = [];
  const restores: ReapAction[] = [];
  const snapshots: ReapAction[] = [];
  const versions: ReapAction[] = [];
  const clears: ReapAction[] = [];
  const inUse = (runId: string | undefined): boolean => runId !== undefined && runId === aliveRunId;

  for (const pod of holdings.prepPods) {
    const what = `prep pod ${pod.namespace}/${pod.name}`;
    if (pod.runId === undefined) kept.push({ what, reason: 'it carries no run id' });
    else if (inUse(pod.runId)) kept.push({ what, reason: `in use by the live run ${pod.runId}` });
    else
      prepPods.push({
        kind: 'delete-prep-pod',
        namespace: pod.namespace,
        name: pod.name,
        runId: pod.runId,
        ...definedOnly({ gracePeriodSeconds: pod.gracePeriodSeconds }),
      });
  }
  // Live capture's copy disks: detached, then deleted (their pods are among the prep pods above).
  const live = planLiveLeftovers({ copyDisks: holdings.copyDisks ?? [], pods: [] }, aliveRunId);
  kept.push(...live.kept);
  const copyDisks: ReapAction[] = live.actions.flatMap((action) =>
    action.kind === 'delete-live-pod' ? [] : [action],
  );

  for (const node of holdings.nodes) {
    const what = `node ${node.name}`;
    if (inUse(node.runId)) {
      kept.push({ what, reason: `held by the live run ${node.runId}` });
      continue;
    }
    if (node.prior === undefined) {
      kept.push({
        what,
        reason:
          `held by run ${node.runId}, which recorded no prior state on it: give it back by hand ` +
          '(uncordon it only if it was schedulable before, remove the vmss-prototype.io annotations)',
      });
      continue;
    }
    if (node.instance.kind === 'present' && STOPPED.has(node.instance.powerState)) {
      starts.push({
        kind: 'start-instance',
        node: node.name,
        instanceId: node.instance.instanceId,
        runId: node.runId,
      });
    } else if (node.instance.kind === 'unknown') {
      // Its VM may be one we stopped: the marker is what finds it again, so the node stays held until its
      // power state can be read (a VM stopped for good once the marker was gone).
      kept.push({
        what,
        reason:
          `its VM's power state could not be read (${node.instance.reason}): the node stays cordoned and ` +
          'marked until it can, so that a VM we stopped is started first',
      });
      continue;
    }
    restores.push({ kind: 'restore-node', node: node.name, runId: node.runId, prior: node.prior });
  }

  // VMs recorded as stopped by a run: started even when no node of theirs carries a marker any more.
  const started = new Set(
    starts.flatMap((action) => (action.kind === 'start-instance' ? [action.instanceId] : [])),
  );
  for (const record of holdings.stoppedVms ?? []) {
    const what = `the VM of instance ${record.instanceId}, recorded as stopped by run ${record.runId}`;
    if (inUse(record.runId)) {
      kept.push({ what, reason: `stopped by the live run ${record.runId}` });
      continue;
    }
    if (record.instance.kind === 'unknown') {
      kept.push({
        what,
        reason: `its power state could not be read (${record.instance.reason}): the record stays until it can`,
      });
      continue;
    }
    if (
      record.instance.kind === 'present' &&
      STOPPED.has(record.instance.powerState) &&
      !started.has(record.instanceId)
    ) {
      starts.push({ kind: 'start-instance', instanceId: record.instanceId, runId: record.runId });
      started.add(record.instanceId);
    }
    clears.push({
      kind: 'clear-stop-record',
      instanceId: record.instanceId,
      runId: record.runId,
      ...definedOnly({ place: record.place }),
    });
  }

  for (const snapshot of holdings.snapshots) {
    const what = `snapshot ${snapshot.name}`;
    if (snapshot.runId === undefined) kept.push({ what, reason: 'it carries no run id' });
    else if (inUse(snapshot.runId)) kept.push({ what, reason: `in use by the live run ${snapshot.runId}` });
    else if (snapshot.provisioningState === 'Deleting') kept.push({ what, reason: 'already being deleted' });
    else {
      snapshots.push({
        kind: 'delete-snapshot',
        subscriptionId: snapshot.subscriptionId,
        resourceGroup: snapshot.resourceGroup,
        name: snapshot.name,
        runId: snapshot.runId,
      });
    }
  }

  const modelVersion = versionNameIn(holdings.modelImageId);
  for (const version of holdings.versions) {
    const what = `image version ${version.versionName}`;
    const finished = version.provisioningState === 'Succeeded' && !version.excludeFromLatest;
    if (version.runId === undefined) continue; // not built by us: not ours to judge
    if (finished) continue; // published: a result, not a leftover
    if (inUse(version.runId)) kept.push({ what, reason: `being built by the live run ${version.runId}` });
    else if (version.rejected) kept.push({ what, reason: 'rejected on purpose (kept hidden)' });
    else if (modelVersion !== undefined && modelVersion === version.versionName.toLowerCase()) {
      kept.push({ what, reason: 'the scale set model points at it' });
    } else if (version.provisioningState === 'Deleting') kept.push({ what, reason: 'already being deleted' });
    else
      versions.push({ kind: 'delete-image-version', versionName: version.versionName, runId: version.runId });
  }

  return {
    actions: [...prepPods, ...copyDisks, ...starts, ...restores, ...clears, ...snapshots, ...versions],
    kept,
  };
}

/** The version name a model image id pins (`…/versions/<name>`), lower-cased; undefined for a definition. */
function versionNameIn(imageId: string | undefined): string | undefined {
  const match = /\/versions\/([^/]+)$/i.exec(imageId ?? '');
  return match?.[1]?.toLowerCase();
}

/** One line per action, for `release --dry-run`, the status and the logs. */
export function describeReapAction(action: ReapAction): string {
  const of = `(left by run ${action.runId})`;
  switch (action.kind) {
    case 'delete-prep-pod':
      return action.gracePeriodSeconds === undefined
        ? `delete prep pod ${action.namespace}/${action.name} ${of}`
        : `delete live capture pod ${action.namespace}/${action.name} (TERM, ${action.gracePeriodSeconds} s grace: its trap thaws or unmounts) ${of}`;
    case 'detach-copy-disk':
      return `detach live capture's copy disk ${lastSegment(action.diskId)} from ${lastSegment(action.instanceResourceId)} ${of}`;
    case 'delete-copy-disk':
      return `delete live capture's copy disk ${action.name} ${of}`;
    case 'start-instance':
      return action.node === undefined
        ? `start the VM of instance ${action.instanceId}, stopped for a capture, its node object gone ${of}`
        : `start the VM of node ${action.node} (instance ${action.instanceId}), stopped for a capture ${of}`;
    case 'clear-stop-record':
      return `remove the record that instance ${action.instanceId} was stopped, from ${action.place === 'pool-lease' ? 'the pool lease' : "the scale set's tags"} ${of}`;
    case 'restore-node': {
      const cordon = action.prior.unschedulable ? 'keep it cordoned (it was before)' : 'uncordon it';
      const scaleDown =
        action.prior.scaleDownDisabled === null
          ? 'remove scale-down-disabled'
          : `put scale-down-disabled back to "${action.prior.scaleDownDisabled}"`;
      return `give node ${action.node} back: ${cordon}, ${scaleDown}, remove our marker ${of}`;
    }
    case 'delete-snapshot':
      return `delete snapshot ${action.name} in resource group ${action.resourceGroup} ${of}`;
    case 'delete-image-version':
      return `delete unfinished image version ${action.versionName} ${of}`;
  }
}

function lastSegment(id: string): string {
  return id.split('/').filter(Boolean).at(-1) ?? id;
}
