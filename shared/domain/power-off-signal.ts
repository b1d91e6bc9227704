/**
 * When the power-off wait of a drain-and-stop capture reads Azure Resource Manager: the prep pod's script
 * ends with the guest's power-off, and the cluster says when that happened for free (reads through the
 * scoped service account spend nothing of ARM's read budget), so the first ARM read can come when the
 * guest has had the time to halt, counted from then, not from the pod's creation (whose start and script
 * vary by seconds to a minute). Pure: the orchestrator passes what its activities read and its own now.
 *
 * What the cluster shows of a guest going down:
 * - the prep pod `Succeeded` with its container's `finishedAt`: the script ran to its end, power-off last
 *   (a kubelet that dies with its host may never report it: the pod then stays `Running`);
 * - the node's `Ready` condition leaving `True` after the pod was made: `Unknown` once the node lifecycle
 *   controller saw no lease renewal for `--node-monitor-grace-period` (40 s, 50 s from Kubernetes 1.32;
 *   the kubelet renews its Lease every 10 s, a quarter of `nodeLeaseDurationSeconds` 40 s:
 *   https://kubernetes.io/docs/concepts/architecture/leases/,
 *   https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/), so the
 *   kubelet stopped about a grace period before the transition; `False` from a kubelet that reports its
 *   own shutdown (graceful node shutdown), at the transition.
 * A pod that ended while its node stays Ready long after is a script that did not power off: the guest is
 * up, and the wait reads ARM at once (then powers it off through the API).
 */

/** What one cheap read of the cluster saw (activity readPowerOffSignals); times in ms since the epoch. */
export interface PowerOffSignals {
  readonly podPhase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown' | 'Absent';
  /** When the pod's container ended (`finishedAt`), when the pod has ended. */
  readonly podEndedAtMs?: number;
  /** The node's Ready condition; absent when the node is gone or reports none. */
  readonly nodeReady?: { readonly status: 'True' | 'False' | 'Unknown'; readonly sinceMs?: number };
}

/** The wait's figures (functions/orchestrations/timing.ts POWER_OFF_SIGNALS, EXPECTED.guestHalt). */
export interface PowerOffWatch {
  /** When the prep pod was created (orchestration time, ms). */
  readonly prepPodCreatedAtMs: number;
  /** Seconds between cheap reads while no signal is seen. */
  readonly signalIntervalSeconds: number;
  /** The node lifecycle controller's grace period assumed (s): a Ready `Unknown` dates the kubelet's end. */
  readonly nodeMonitorGraceSeconds: number;
  /** Seconds after the pod's end at which a node still Ready means the guest did not go down. */
  readonly stillUpAfterSeconds: number;
  /** Guest power-off → ARM reports `stopped` (s): the first ARM read, counted from the signal. */
  readonly guestHaltSeconds: number;
  /** Without any signal, the first ARM read this long after the pod's creation (s): the old schedule. */
  readonly fallbackFirstReadSeconds: number;
}

/** What the wait does next: another cheap read, or the first ARM read (its schedule counts from `sinceMs`). */
export type PowerOffNext =
  | { readonly kind: 'read-signals'; readonly atMs: number }
  | {
      readonly kind: 'read-instance';
      readonly atMs: number;
      readonly sinceMs: number;
      readonly why: 'guest-down' | 'guest-still-up' | 'no-signal';
    };

/**
 * When the guest went down, as far as the cluster tells (ms), or undefined while nothing says it did. Never
 * before the pod was created, nor after `nowMs` (another clock's timestamps, skewed).
 */
export function guestDownSinceMs(
  signals: PowerOffSignals,
  watch: PowerOffWatch,
  nowMs: number,
): number | undefined {
  const ready = signals.nodeReady;
  const createdAt = watch.prepPodCreatedAtMs;
  if (ready === undefined || ready.status === 'True' || ready.sinceMs === undefined) return undefined;
  if (ready.sinceMs < createdAt) return undefined;
  const kubeletEnd =
    ready.status === 'Unknown' ? ready.sinceMs - watch.nodeMonitorGraceSeconds * 1000 : ready.sinceMs;
  // The pod's end is exact when the kubelet reported it before it stopped.
  const ended = signals.podPhase === 'Succeeded' ? signals.podEndedAtMs : undefined;
  const since = ended !== undefined && ended <= ready.sinceMs ? ended : kubeletEnd;
  return Math.min(nowMs, Math.max(createdAt, since));
}

/**
 * The wait's next move after a cheap read at `nowMs` (a prep pod that failed is the caller's: it throws).
 * The first ARM read comes `guestHaltSeconds` after the guest went down; a pod that ended without the node
 * going down is checked once more when the node would have turned Unknown; without any signal, the cheap
 * reads go on until the old schedule's first ARM read.
 */
export function nextPowerOffStep(
  signals: PowerOffSignals,
  watch: PowerOffWatch,
  nowMs: number,
): PowerOffNext {
  const down = guestDownSinceMs(signals, watch, nowMs);
  if (down !== undefined) {
    return {
      kind: 'read-instance',
      atMs: down + watch.guestHaltSeconds * 1000,
      sinceMs: down,
      why: 'guest-down',
    };
  }
  const fallbackAt = watch.prepPodCreatedAtMs + watch.fallbackFirstReadSeconds * 1000;
  const ended = signals.podPhase === 'Succeeded' ? signals.podEndedAtMs : undefined;
  if (ended !== undefined) {
    const endedAt = Math.min(nowMs, Math.max(watch.prepPodCreatedAtMs, ended));
    const checkAt = endedAt + watch.stillUpAfterSeconds * 1000;
    if (nowMs >= checkAt)
      return { kind: 'read-instance', atMs: nowMs, sinceMs: nowMs, why: 'guest-still-up' };
    const haltAt = endedAt + watch.guestHaltSeconds * 1000;
    return checkAt < haltAt
      ? { kind: 'read-signals', atMs: checkAt }
      : { kind: 'read-instance', atMs: haltAt, sinceMs: endedAt, why: 'guest-down' };
  }
  const nextAt = nowMs + watch.signalIntervalSeconds * 1000;
  return nextAt < fallbackAt
    ? { kind: 'read-signals', atMs: nextAt }
    : {
        kind: 'read-instance',
        atMs: Math.max(nowMs, fallbackAt),
        sinceMs: watch.prepPodCreatedAtMs,
        why: 'no-signal',
      };
}
