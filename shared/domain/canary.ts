/**
 * The canary gate of a new image version: what a canary instance must do before the version
 * is published — provision, register as a node under its own name, become Ready, stay Ready for the
 * soak, run every DaemonSet pod that targets it, and (optionally) pass the operator's check pod — and
 * the verdict over what was observed. Pure: observations and `now` come in as arguments.
 */
import { formatDuration } from './duration-text.js';
import { definedOnly } from './optional.js';
import { parseRfc3339 } from './rfc3339.js';

/** What is done with canary instances once the version passed. */
/** `keep-size` (default): the canary stays and one oldest-generation node is retired in its place (docs/retirement.md). */
export type CanaryAfterPass = 'keep-size' | 'keep' | 'remove';
/** What is done with canary instances once the version failed. */
export type CanaryAfterFail = 'delete' | 'keep-cordoned';
/**
 * What is done, once the version failed and the model is back, with the instances an outsider (the
 * cluster-autoscaler, an admin) added from it while it was pinned: `replace` (default) retires them at once
 * under retirement's rules, a replacement first; `keep` leaves them to a later retirement.
 */
export type CanaryOthersAfterFail = 'replace' | 'keep';

/** The operator's check: a container run once on each canary, which must exit 0. */
export interface CheckPodTemplate {
  readonly image: string;
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  /** From the check pod's creation to its end. */
  readonly timeoutSeconds: number;
}

export interface CanaryPolicy {
  readonly enabled: boolean;
  /** Canary instances added for the test. */
  readonly instances: number;
  /** How long each canary must stay Ready, without a break, before it counts. */
  readonly soakSeconds: number;
  /** From the scale-out request to the last canary passing; beyond it the version fails. */
  readonly deadlineSeconds: number;
  readonly afterPass: CanaryAfterPass;
  readonly afterFail: CanaryAfterFail;
  readonly othersAfterFail: CanaryOthersAfterFail;
  readonly checkPod?: CheckPodTemplate;
}

export const DEFAULT_CANARY_POLICY: CanaryPolicy = {
  enabled: true,
  instances: 1,
  soakSeconds: 300,
  deadlineSeconds: 1_800,
  afterPass: 'keep-size',
  afterFail: 'delete',
  othersAfterFail: 'replace',
};

/** A Kubernetes taint, as DaemonSet scheduling compares it. */
export interface TaintLike {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

export interface TolerationLike {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
}

/** One `matchExpressions` entry of a node selector term. */
export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}

/** What the DaemonSet controller reads to decide whether a DaemonSet runs a pod on a node. */
export interface DaemonSetTarget {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms` (ORed), each a list of ANDed requirements. */
  readonly requiredNodeAffinity: readonly (readonly NodeSelectorRequirement[])[];
  readonly tolerations: readonly TolerationLike[];
}

/** Tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util). */
const DAEMON_POD_TOLERATIONS: readonly TolerationLike[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' },
];

function tolerates(toleration: TolerationLike, taint: TaintLike): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) {
    return false;
  }
  if (toleration.operator === 'Exists') {
    return toleration.key === undefined || toleration.key === '' || toleration.key === taint.key;
  }
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

function matchesRequirement(labels: Readonly<Record<string, string>>, requirement: NodeSelectorRequirement) {
  const value = labels[requirement.key];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const [bound] = requirement.values;
      if (value === undefined || bound === undefined || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(bound)) {
        return false;
      }
      return requirement.operator === 'Gt' ? Number(value) > Number(bound) : Number(value) < Number(bound);
    }
    default:
      // An operator we do not know: not matched, so the DaemonSet is not counted on the node.
      return false;
  }
}

/**
 * Whether the DaemonSet controller places a pod of `daemonSet` on a node with these labels and taints:
 * the node selector and required node affinity match, and every NoSchedule/NoExecute taint is tolerated
 * (by the DaemonSet's tolerations or the ones the controller adds). PreferNoSchedule never keeps it off.
 */
export function daemonSetTargetsNode(
  daemonSet: DaemonSetTarget,
  node: { readonly labels: Readonly<Record<string, string>>; readonly taints: readonly TaintLike[] },
): boolean {
  for (const [key, value] of Object.entries(daemonSet.nodeSelector)) {
    if (node.labels[key] !== value) return false;
  }
  if (daemonSet.requiredNodeAffinity.length > 0) {
    const anyTerm = daemonSet.requiredNodeAffinity.some(
      (term) => term.length > 0 && term.every((requirement) => matchesRequirement(node.labels, requirement)),
    );
    if (!anyTerm) return false;
  }
  const tolerations = [...daemonSet.tolerations, ...DAEMON_POD_TOLERATIONS];
  return node.taints
    .filter((taint) => taint.effect === 'NoSchedule' || taint.effect === 'NoExecute')
    .every((taint) => tolerations.some((toleration) => tolerates(toleration, taint)));
}

/** Phases of the check pod as the observation reports them; `Absent` before it was created. */
export type CheckPodPhase = 'Absent' | 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** What one read of one canary instance saw (ARM and the cluster). */
export interface CanaryObservation {
  /** Uniform instance id or Flexible VM name. */
  readonly instanceId: string;
  readonly instance: {
    readonly exists: boolean;
    readonly provisioningState?: string;
    readonly powerState?: string;
    /** The name the machine registers its node under (the computer name, lowercased). */
    readonly computerName?: string;
    /** ARM resource id of the instance (Uniform) or VM (Flexible). */
    readonly resourceId?: string;
    /** The pool label its scale set's nodes carry, when looked for: where a node under another name is sought. */
    readonly poolLabels?: Readonly<Record<string, string>>;
  };
  /** The node that registered for this instance, if any. */
  readonly node?: {
    readonly name: string;
    /** False when the node's providerID names another machine (a clone that took over someone's name). */
    readonly ownsName: boolean;
    readonly ready: 'True' | 'False' | 'Unknown';
    /** RFC 3339 time of the Ready condition's last transition. */
    readonly readySince?: string;
    readonly notReadyReason?: string;
  };
  /** DaemonSets that target the node (`namespace/name`) and which of them have no Running, Ready pod there. */
  readonly daemonSets: {
    readonly expected: readonly string[];
    readonly missing: readonly string[];
    readonly notReady: readonly string[];
  };
  readonly checkPod: CheckPodPhase;
  /** The check pod's own message when it failed (exit code, reason). */
  readonly checkPodMessage?: string;
}

/** What the orchestrator remembers between reads, per canary (plain JSON, replayed deterministically). */
export interface CanaryMemory {
  /** Instances seen Ready at least once (a later NotReady is a failed soak). */
  readonly everReady: readonly string[];
  /** When each canary's check pod was created (epoch ms). */
  readonly checkPodStartedAt: Readonly<Record<string, number>>;
  /**
   * The Ready condition's transition time first seen on each canary's node. A later one on a Ready node
   * means it was NotReady in between, even if no read saw it: the soak is not watched continuously.
   */
  readonly readySince?: Readonly<Record<string, string>>;
}

export const EMPTY_CANARY_MEMORY: CanaryMemory = { everReady: [], checkPodStartedAt: {}, readySince: {} };

/** Per canary, the furthest stage reached, for progress and for the failure message. */
export type CanaryStage =
  'provisioning' | 'registering' | 'becoming-ready' | 'soaking' | 'daemon-pods' | 'check-pod' | 'passed';

export type CanaryVerdict =
  | {
      readonly kind: 'waiting';
      /** `<instance>: <stage>`, one per canary. */
      readonly progress: string;
      /** Canaries whose check pod should be created now. */
      readonly startCheckPods: readonly string[];
      /**
       * When every canary still short of passing is soaking, seconds until the first soak is due:
       * nothing can be decided before (a NotReady in between shows in the Ready condition's time).
       */
      readonly nextObservationInSeconds?: number;
    }
  | { readonly kind: 'passed'; readonly progress: string }
  | { readonly kind: 'failed'; readonly reason: string; readonly instanceId?: string };

export interface CanaryJudgement {
  readonly verdict: CanaryVerdict;
  readonly memory: CanaryMemory;
}

interface StageResult {
  readonly stage: CanaryStage;
  /** Why the canary has failed for good (fail fast). */
  readonly failed?: string;
  /** What is still missing, in words, for progress and the deadline message. */
  readonly missing?: string;
  /** Soaking: seconds until the soak is done. */
  readonly dueInSeconds?: number;
}

function stageOf(
  observation: CanaryObservation,
  memory: CanaryMemory,
  policy: CanaryPolicy,
  nowMs: number,
): StageResult {
  const { instance, node } = observation;
  const label = `instance ${observation.instanceId}`;
  if (!instance.exists) {
    return { stage: 'provisioning', failed: `${label} was deleted during the canary` };
  }
  if (instance.provisioningState === 'Failed') {
    return { stage: 'provisioning', failed: `${label} failed to provision (provisioningState Failed)` };
  }
  if (instance.provisioningState !== 'Succeeded' || instance.powerState !== 'running') {
    return {
      stage: 'provisioning',
      missing: `${label} is ${instance.provisioningState ?? 'unknown'}/${instance.powerState ?? 'unknown'}`,
    };
  }
  const ownName = instance.computerName;
  if (node === undefined) {
    return {
      stage: 'registering',
      missing: `${label} never registered as a node${ownName === undefined ? '' : ` (${ownName})`}`,
    };
  }
  if (!node.ownsName || (ownName !== undefined && node.name !== ownName)) {
    return {
      stage: 'registering',
      failed:
        `${label} registered as node ${node.name}, not under its own name${ownName === undefined ? '' : ` ${ownName}`}: ` +
        `the image carries another machine's identity`,
    };
  }
  const everReady = memory.everReady.includes(observation.instanceId);
  if (node.ready !== 'True') {
    const why = node.notReadyReason === undefined ? '' : ` (${node.notReadyReason})`;
    if (everReady) {
      return { stage: 'soaking', failed: `node ${node.name} went NotReady during the soak${why}` };
    }
    return { stage: 'becoming-ready', missing: `node ${node.name} is not Ready${why}` };
  }
  const firstReadySince = memory.readySince?.[observation.instanceId];
  if (
    everReady &&
    firstReadySince !== undefined &&
    node.readySince !== undefined &&
    node.readySince !== firstReadySince
  ) {
    return {
      stage: 'soaking',
      failed: `node ${node.name} went NotReady during the soak (Ready since ${firstReadySince}, again since ${node.readySince})`,
    };
  }
  const since = node.readySince === undefined ? undefined : parseRfc3339(node.readySince);
  const readyForSeconds = since === undefined ? 0 : Math.max(0, Math.floor((nowMs - since) / 1000));
  if (readyForSeconds < policy.soakSeconds) {
    return {
      stage: 'soaking',
      missing: `node ${node.name} Ready for ${formatDuration(readyForSeconds)} of ${formatDuration(policy.soakSeconds)}`,
      dueInSeconds: policy.soakSeconds - readyForSeconds,
    };
  }
  const { missing, notReady } = observation.daemonSets;
  if (missing.length > 0 || notReady.length > 0) {
    const parts = [
      ...(missing.length > 0 ? [`no pod of ${missing.join(', ')}`] : []),
      ...(notReady.length > 0 ? [`not ready: ${notReady.join(', ')}`] : []),
    ];
    return { stage: 'daemon-pods', missing: `DaemonSet pods on node ${node.name}: ${parts.join('; ')}` };
  }
  if (policy.checkPod === undefined) return { stage: 'passed' };
  const startedAt = memory.checkPodStartedAt[observation.instanceId];
  if (observation.checkPod === 'Succeeded') return { stage: 'passed' };
  if (observation.checkPod === 'Failed') {
    const message = observation.checkPodMessage === undefined ? '' : `: ${observation.checkPodMessage}`;
    return { stage: 'check-pod', failed: `the check pod failed on node ${node.name}${message}` };
  }
  if (startedAt !== undefined && nowMs - startedAt >= policy.checkPod.timeoutSeconds * 1000) {
    return {
      stage: 'check-pod',
      failed:
        `the check pod on node ${node.name} did not finish within ` +
        `${formatDuration(policy.checkPod.timeoutSeconds)} (${observation.checkPod})`,
    };
  }
  return {
    stage: 'check-pod',
    missing: `the check pod on node ${node.name} is ${startedAt === undefined ? 'not started' : observation.checkPod}`,
  };
}

/**
 * Judges the canaries of one version from the latest observations. Fails at once on what cannot get
 * better (an instance deleted or failed, a node under another machine's name, a node that went NotReady
 * after being Ready, a failed check pod); fails when `nowMs` passes the deadline with any canary short
 * of passing; passes when every canary passed; otherwise waits and says which check pods to start.
 */
export function judgeCanaries(input: {
  readonly observations: readonly CanaryObservation[];
  readonly memory: CanaryMemory;
  readonly policy: CanaryPolicy;
  readonly startedAtMs: number;
  readonly nowMs: number;
}): CanaryJudgement {
  const { observations, policy, nowMs } = input;
  const everReady = new Set(input.memory.everReady);
  const readySince: Record<string, string> = { ...input.memory.readySince };
  const stages = observations.map((observation) => ({
    observation,
    result: stageOf(observation, input.memory, policy, nowMs),
  }));
  for (const observation of observations) {
    if (observation.node?.ready === 'True' && observation.node.ownsName) {
      everReady.add(observation.instanceId);
      if (observation.node.readySince !== undefined)
        readySince[observation.instanceId] ??= observation.node.readySince;
    }
  }
  const memory: CanaryMemory = {
    everReady: [...everReady].sort(),
    checkPodStartedAt: { ...input.memory.checkPodStartedAt },
    readySince,
  };
  const failed = stages.find((entry) => entry.result.failed !== undefined);
  if (failed !== undefined) {
    return {
      verdict: {
        kind: 'failed',
        reason: failed.result.failed ?? 'failed',
        instanceId: failed.observation.instanceId,
      },
      memory,
    };
  }
  const progress = stages.map((entry) => `${entry.observation.instanceId}: ${entry.result.stage}`).join(', ');
  if (observations.length > 0 && stages.every((entry) => entry.result.stage === 'passed')) {
    return { verdict: { kind: 'passed', progress }, memory };
  }
  if (nowMs >= input.startedAtMs + policy.deadlineSeconds * 1000) {
    const pending = stages.filter((entry) => entry.result.stage !== 'passed');
    const first = pending[0];
    const reason =
      observations.length === 0
        ? 'no canary instance appeared'
        : pending.map((entry) => entry.result.missing ?? entry.result.stage).join('; ');
    return {
      verdict: {
        kind: 'failed',
        reason: `not healthy within the deadline of ${formatDuration(policy.deadlineSeconds)}: ${reason}`,
        ...(first === undefined ? {} : { instanceId: first.observation.instanceId }),
      },
      memory,
    };
  }
  const startCheckPods = stages
    .filter(
      (entry) =>
        entry.result.stage === 'check-pod' &&
        entry.observation.checkPod === 'Absent' &&
        memory.checkPodStartedAt[entry.observation.instanceId] === undefined,
    )
    .map((entry) => entry.observation.instanceId);
  for (const instanceId of startCheckPods) {
    (memory.checkPodStartedAt as Record<string, number>)[instanceId] = nowMs;
  }
  const pending = stages.filter((entry) => entry.result.stage !== 'passed');
  const soakDue = pending.map((entry) => entry.result.dueInSeconds);
  // Never past the deadline: a soak due later is judged there.
  const untilDeadline = Math.ceil((input.startedAtMs + policy.deadlineSeconds * 1000 - nowMs) / 1000);
  const nextObservationInSeconds = soakDue.every((due) => due !== undefined)
    ? Math.max(1, Math.min(untilDeadline, ...soakDue))
    : undefined;
  return {
    verdict: {
      kind: 'waiting',
      progress,
      startCheckPods,
      ...definedOnly({ nextObservationInSeconds }),
    },
    memory,
  };
}
