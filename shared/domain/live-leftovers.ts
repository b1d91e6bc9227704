/**
 * What a live capture (capture-mode.ts, live-capture.ts) that died may have left, and how the reaper gives
 * it back (docs/design.md#the-reaper). Pure: the caller lists the world and carries the
 * actions out, in order:
 *
 * 1. A freeze pod → deleted with a grace period: its TERM trap thaws the root filesystem at once. Without
 *    it, the freeze still ends by itself (the pod's hold, then the host's systemd guard), so nothing stays
 *    frozen longer than the guard's bound even when the reaper never runs.
 * 2. A scrub pod → deleted with a grace period: it stops writing to the copy, and its EXIT trap unmounts it.
 * 3. A copy disk attached to an instance (the donor) → detached: a donor that reboots with it attached
 *    may mount the copy as its root (same filesystem UUID).
 * 4. A copy disk → deleted once detached. The snapshot it came from is an ordinary run snapshot (run and
 *    lease tags, ownership.ts), deleted by the reaper's snapshot rule.
 * Whatever belongs to the run that holds the pool (`aliveRunId`), or carries no run of ours, is kept.
 */

/**
 * The tag that marks live capture's copy disk (besides the snapshot's run and lease tags, ownership.ts);
 * Azure tag names allow no `/`.
 */
export const COPY_DISK_PURPOSE_TAG = { key: 'vmss-prototype.purpose', value: 'live-capture-copy' } as const;

/** A managed disk made by a live capture (tag COPY_DISK_PURPOSE_TAG). */
export interface CopyDiskHolding {
  readonly id: string;
  readonly name: string;
  /** From the run tag (ownership.ts SNAPSHOT_TAG_KEYS.runId); undefined when the disk has none. */
  readonly runId?: string;
  /** The instance (resource id) the disk is attached to (`managedBy`), if any. */
  readonly attachedTo?: string;
  readonly provisioningState: string;
}

/** A freeze or scrub pod (label `app.kubernetes.io/component`). */
export interface LivePodHolding {
  readonly namespace: string;
  readonly name: string;
  readonly role: 'freeze' | 'scrub';
  readonly runId?: string;
  readonly phase: string;
}

export interface LiveHoldings {
  readonly copyDisks: readonly CopyDiskHolding[];
  readonly pods: readonly LivePodHolding[];
}

/** The label that tells live capture's freeze and scrub pods (`freeze`, `scrub`) from the prep pod. */
export const LIVE_POD_COMPONENT_LABEL = 'app.kubernetes.io/component';

/** Long enough for a shell to run its trap (thaw, unmount); short enough not to hold the reaper. */
export const LIVE_POD_GRACE_SECONDS = 10;

export type LiveReapAction =
  | {
      readonly kind: 'delete-live-pod';
      readonly role: 'freeze' | 'scrub';
      readonly namespace: string;
      readonly name: string;
      readonly gracePeriodSeconds: number;
      readonly runId: string;
    }
  | {
      readonly kind: 'detach-copy-disk';
      readonly diskId: string;
      readonly instanceResourceId: string;
      readonly runId: string;
    }
  | {
      readonly kind: 'delete-copy-disk';
      readonly diskId: string;
      readonly name: string;
      /** The disk is attached now: delete it once the detach above has completed. */
      readonly afterDetach: boolean;
      readonly runId: string;
    };

export interface LiveReapPlan {
  readonly actions: readonly LiveReapAction[];
  readonly kept: readonly { readonly what: string; readonly reason: string }[];
}

export function planLiveLeftovers(holdings: LiveHoldings, aliveRunId: string | undefined): LiveReapPlan {
  const kept: { what: string; reason: string }[] = [];
  const pods: LiveReapAction[] = [];
  const detaches: LiveReapAction[] = [];
  const deletions: LiveReapAction[] = [];
  const owner = (what: string, runId: string | undefined): string | undefined => {
    if (runId === undefined) {
      kept.push({ what, reason: 'it carries no run of ours' });
      return undefined;
    }
    if (runId === aliveRunId) {
      kept.push({ what, reason: `run ${runId} holds the pool and uses it` });
      return undefined;
    }
    return runId;
  };
  // Freeze pods first: a thaw must not wait behind anything.
  const byRole = [...holdings.pods].sort((a, b) => Number(a.role === 'scrub') - Number(b.role === 'scrub'));
  for (const pod of byRole) {
    const runId = owner(`${pod.role} pod ${pod.namespace}/${pod.name}`, pod.runId);
    if (runId === undefined) continue;
    pods.push({
      kind: 'delete-live-pod',
      role: pod.role,
      namespace: pod.namespace,
      name: pod.name,
      gracePeriodSeconds: LIVE_POD_GRACE_SECONDS,
      runId,
    });
  }
  for (const disk of holdings.copyDisks) {
    const runId = owner(`copy disk ${disk.name}`, disk.runId);
    if (runId === undefined) continue;
    if (disk.provisioningState === 'Deleting') {
      kept.push({ what: `copy disk ${disk.name}`, reason: 'its deletion is under way' });
      continue;
    }
    if (disk.attachedTo !== undefined) {
      detaches.push({
        kind: 'detach-copy-disk',
        diskId: disk.id,
        instanceResourceId: disk.attachedTo,
        runId,
      });
    }
    deletions.push({
      kind: 'delete-copy-disk',
      diskId: disk.id,
      name: disk.name,
      afterDetach: disk.attachedTo !== undefined,
      runId,
    });
  }
  return { actions: [...pods, ...detaches, ...deletions], kept };
}
