/**
 * Auto mode's choice of the prototype node of one pool (docs/design.md#choosing-the-prototype-node): a pure function of the nodes,
 * the policy, the pool's current image and `now`, that explains its verdict on every node.
 * Over 400 lines on purpose: the rules are applied in one fixed order, readable top to bottom in one file.
 */

import {
  AUTOSCALER_DELETION_TAINTS,
  type ClusterNode,
  CONTROL_PLANE_LABELS,
  type NodeCondition,
} from './cluster-node.js';
import { formatDuration } from './duration-text.js';
import { definedOnly } from './optional.js';
import {
  describeScaleSet,
  parseComputeResourceId,
  parseProviderId,
  type ProviderIdParseResult,
  scaleSetKey,
  type ScaleSetRef,
  virtualMachineKey,
} from './resource-id.js';
import { parseRfc3339 } from './rfc3339.js';
import type { SelectionPolicy } from './selection-policy.js';
import type { RejectedBuild } from './version-verdict.js';

/**
 * The rules, in the order they are applied. A rejected node's verdict names the first rule it failed
 * (and lists the later ones it also failed). The first three are about pool membership; the four before
 * the last are the "patch rules" that the maximum-image-age fallback waives. The last one, a build whose
 * version was rejected (its canary failed, or an operator rolled back from it), is never waived: the
 * same donor with the same patch would build the same image.
 */
export const SELECTION_RULES = [
  'no-provider-id',
  'unparsable-provider-id',
  'not-in-pool',
  'excluded-by-name',
  'control-plane',
  'autoscaler-deletion',
  'unschedulable',
  'ignore-annotation',
  'pending-reboot',
  'not-ready',
  'ready-too-short',
  'missing-patch-annotation',
  'malformed-patch-timestamp',
  'patch-in-future',
  'patch-not-newer-than-image',
  'rejected-build',
] as const;

export type RejectionCode = (typeof SELECTION_RULES)[number];

const PATCH_RULES: readonly RejectionCode[] = [
  'missing-patch-annotation',
  'malformed-patch-timestamp',
  'patch-in-future',
  'patch-not-newer-than-image',
];

/** Default tolerance for a last-patch timestamp ahead of `now`: kured stamps it with the node's clock. */
const DEFAULT_CLOCK_SKEW_TOLERANCE_SECONDS = 300;

/** Label older clusters (aks-engine, kamino's target) use for masters instead of node-role labels. */
const LEGACY_ROLE_LABEL = 'kubernetes.io/role';
/** Taints the node lifecycle controller / cloud provider put on nodes that are down or shutting down. */
const NOT_READY_TAINTS: readonly string[] = [
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/shutdown',
];
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';
/** Conditions cluster-autoscaler also counts as "not ready" (`utils/kubernetes/ready.go`). */
const UNHEALTHY_CONDITIONS: readonly string[] = ['DiskPressure', 'NetworkUnavailable'];

/** Which pool the selection is for. */
export interface PoolIdentity {
  readonly scaleSet: ScaleSetRef;
  /**
   * Flexible scale sets only: ARM ids of the member VMs, resolved through ARM, because a Flex member's
   * providerID cannot be told from a standalone VM's. Uniform pools leave this undefined.
   */
  readonly flexibleMemberIds?: readonly string[];
}

/** What we know about the image the pool's new instances get today. Undefined: marketplace or unknown. */
export interface PoolImageFacts {
  /** Gallery image version, e.g. `2026.1122.1430`, for messages. */
  readonly version?: string;
  /** Last-patch time of the node the image was captured from. Nodes must be patched after it. */
  readonly patchedAt?: Date;
  /** When the image version was built; used where `patchedAt` is unknown. */
  readonly builtAt?: Date;
}

export interface PoolSelectionInput {
  readonly pool: PoolIdentity;
  readonly policy: SelectionPolicy;
  readonly image?: PoolImageFacts;
  readonly now: Date;
  /** How far a last-patch timestamp may be ahead of `now` and still count; default 300 s. */
  readonly clockSkewToleranceSeconds?: number;
  /** Donors and patches whose versions were rejected: not built from again until the node is patched anew. */
  readonly rejectedBuilds?: readonly RejectedBuild[];
}

export interface PrototypeSelectionInput extends PoolSelectionInput {
  readonly nodes: readonly ClusterNode[];
}

export interface NodeCandidate {
  readonly name: string;
  readonly status: 'candidate';
  /** now − Ready.lastTransitionTime, whole seconds. */
  readonly readyForSeconds: number;
  /** Normalised (UTC, ISO 8601) last-patch time; absent only for fallback candidates without a usable one. */
  readonly lastPatchedAt?: string;
  /** Fallback only: the patch rule this node failed and that was waived. */
  readonly waived?: { readonly rule: RejectionCode; readonly reason: string };
}

export interface NodeRejection {
  readonly name: string;
  readonly status: 'rejected';
  /** The first rule the node failed. */
  readonly rule: RejectionCode;
  readonly reason: string;
  /** Later rules it failed as well (pool membership rules stop evaluation: they have no "later"). */
  readonly alsoFailed: readonly RejectionCode[];
  /**
   * When the node was Ready too briefly and failed nothing else: the time (ISO 8601) it will have been
   * Ready for `minimumReadyTime`, i.e. become a candidate. A reboot debounce plans again then.
   */
  readonly eligibleAt?: string;
  /** Normalised last-patch time when the node's annotation has a valid one (even a rejected node's). */
  readonly lastPatchedAt?: string;
}

export type NodeVerdict = NodeCandidate | NodeRejection;

/**
 * - `chosen`: a prototype was picked;
 * - `too-few-candidates`: some candidates, fewer than `minimumCandidates`;
 * - `no-newer-patch`: healthy nodes exist but none is patched after the current image (and the fallback
 *   did not apply): the pool is up to date as far as we can tell;
 * - `no-eligible-node`: no node passed the rules before the patch rules (empty pool, all unhealthy…).
 */
export type SelectionOutcome = 'chosen' | 'too-few-candidates' | 'no-newer-patch' | 'no-eligible-node';

export interface PrototypeSelection {
  readonly pool: ScaleSetRef;
  readonly outcome: SelectionOutcome;
  /** Present exactly when `outcome` is `chosen`. */
  readonly chosen?: NodeCandidate;
  readonly reason: string;
  /** Best first: longest Ready, then newest patch, then name. A fold keeps only the best few. */
  readonly candidates: readonly NodeCandidate[];
  /** How many candidates there are (more than `candidates` holds when a fold kept only the best). */
  readonly candidateCount: number;
  /**
   * One verdict per node, in input order. `selectPrototypeNode` covers every node it was given;
   * `selectPrototypeNodeForPool` covers the pool's members only (non-members are counted in
   * `nodesOutsidePool`, so that 50 pools do not each list 20 000 "not in this pool" verdicts).
   */
  readonly verdicts: readonly NodeVerdict[];
  readonly poolNodeCount: number;
  readonly nodesOutsidePool: number;
  /** Number of pool members rejected per first-failed rule. */
  readonly rejectionCounts: Readonly<Partial<Record<RejectionCode, number>>>;
  readonly fallback: { readonly used: boolean; readonly reason: string };
}

/** A node with its providerID parsed once, and its position in the caller's list. */
export interface IndexedNode {
  readonly node: ClusterNode;
  readonly index: number;
  readonly providerId: ProviderIdParseResult;
}

/** All nodes of a cluster indexed by where they live; build once per cluster listing, use for every pool. */
export interface NodeGroups {
  readonly nodes: readonly IndexedNode[];
  /** Uniform scale set instances by `scaleSetKey`, in input order. */
  readonly byScaleSet: ReadonlyMap<string, readonly IndexedNode[]>;
  /** `virtual-machine` nodes (Flex members or standalone VMs) by `virtualMachineKey`. */
  readonly byVirtualMachine: ReadonlyMap<string, IndexedNode>;
  /** Nodes whose providerID is missing or unusable: in no pool. */
  readonly unresolved: readonly IndexedNode[];
}

/** Parses every providerID once and indexes the nodes by scale set and VM. O(nodes). */
export function groupNodesByScaleSet(nodes: readonly ClusterNode[]): NodeGroups {
  const indexed: IndexedNode[] = [];
  const byScaleSet = new Map<string, IndexedNode[]>();
  const byVirtualMachine = new Map<string, IndexedNode>();
  const unresolved: IndexedNode[] = [];
  nodes.forEach((node, index) => {
    const entry: IndexedNode = { node, index, providerId: parseProviderId(node.providerId) };
    indexed.push(entry);
    if (!entry.providerId.ok) {
      unresolved.push(entry);
      return;
    }
    const id = entry.providerId.providerId;
    if (id.kind === 'scale-set-instance') {
      const key = scaleSetKey(id.scaleSet);
      const members = byScaleSet.get(key);
      if (members === undefined) {
        byScaleSet.set(key, [entry]);
      } else {
        members.push(entry);
      }
    } else {
      byVirtualMachine.set(virtualMachineKey(id.virtualMachine), entry);
    }
  });
  return { nodes: indexed, byScaleSet, byVirtualMachine, unresolved };
}

/**
 * Chooses the prototype node of one pool from nodes already grouped by `groupNodesByScaleSet`.
 * Cost is O(pool members), so callers iterating over many pools pay O(nodes) in total.
 * Verdicts cover the pool's members only (see `PrototypeSelection.verdicts`).
 */
export function selectPrototypeNodeForPool(
  groups: NodeGroups,
  input: PoolSelectionInput,
): PrototypeSelection {
  const members = poolMembers(groups, input.pool);
  const evaluated = members.map((member) => evaluateMember(member.node, input));
  return decide(input, evaluated, evaluated, groups.nodes.length - members.length);
}

/**
 * Chooses the prototype node of one pool from all cluster nodes, rejecting those outside the pool.
 * Verdicts cover every node, in input order. For many pools, group once and use `selectPrototypeNodeForPool`.
 */
export function selectPrototypeNode(input: PrototypeSelectionInput): PrototypeSelection {
  const groups = groupNodesByScaleSet(input.nodes);
  const members = poolMembers(groups, input.pool);
  const memberIndexes = new Set(members.map((member) => member.index));
  const evaluatedMembers: Evaluated[] = [];
  const all = groups.nodes.map((entry) => {
    if (memberIndexes.has(entry.index)) {
      const evaluated = evaluateMember(entry.node, input);
      evaluatedMembers.push(evaluated);
      return evaluated;
    }
    return { verdict: membershipRejection(entry, input.pool) };
  });
  return decide(input, evaluatedMembers, all, groups.nodes.length - members.length);
}

/** A member's verdict, and the facts the fallback needs when it failed only the patch rules. */
export interface Evaluated {
  readonly verdict: NodeVerdict;
  /** Set when the node passed every rule before the patch rules (what the fallback needs). */
  readonly healthy?: {
    readonly readySinceMs: number;
    readonly readyForSeconds: number;
    readonly patchedAtMs?: number;
  };
}

function poolMembers(groups: NodeGroups, pool: PoolIdentity): IndexedNode[] {
  const uniform = groups.byScaleSet.get(scaleSetKey(pool.scaleSet)) ?? [];
  if (pool.flexibleMemberIds === undefined || pool.flexibleMemberIds.length === 0) {
    return [...uniform];
  }
  const members = [...uniform];
  const seen = new Set<number>();
  for (const id of pool.flexibleMemberIds) {
    const parsed = parseComputeResourceId(id);
    if (!parsed.ok || parsed.providerId.kind !== 'virtual-machine') {
      continue;
    }
    const entry = groups.byVirtualMachine.get(virtualMachineKey(parsed.providerId.virtualMachine));
    if (entry !== undefined && !seen.has(entry.index)) {
      seen.add(entry.index);
      members.push(entry);
    }
  }
  return members.sort((a, b) => a.index - b.index);
}

function membershipRejection(entry: IndexedNode, pool: PoolIdentity): NodeRejection {
  const name = entry.node.name;
  const parsed = entry.providerId;
  if (!parsed.ok) {
    const rule = parsed.reason === 'missing' ? 'no-provider-id' : 'unparsable-provider-id';
    return { name, status: 'rejected', rule, reason: parsed.message, alsoFailed: [] };
  }
  const poolName = describeScaleSet(pool.scaleSet);
  const id = parsed.providerId;
  const reason =
    id.kind === 'scale-set-instance'
      ? `node belongs to scale set ${describeScaleSet(id.scaleSet)}, not ${poolName}`
      : `virtual machine ${describeScaleSet(id.virtualMachine)} is not a known member of ${poolName} ` +
        `(Flexible members are resolved through ARM; it may be a standalone VM)`;
  return { name, status: 'rejected', rule: 'not-in-pool', reason, alsoFailed: [] };
}

/** Evaluates every rule after pool membership; records the first failure as the verdict. */
export function evaluateMember(node: ClusterNode, input: PoolSelectionInput): Evaluated {
  const failures: { rule: RejectionCode; reason: string }[] = [];
  const fail = (rule: RejectionCode, reason: string): void => {
    failures.push({ rule, reason });
  };
  const { policy } = input;
  const nowMs = input.now.getTime();

  if (policy.excludeNodeNames.includes(node.name)) {
    fail('excluded-by-name', 'node is listed in excludeNodeNames');
  }

  const controlPlaneLabel = CONTROL_PLANE_LABELS.find((label) => label in node.labels);
  if (controlPlaneLabel !== undefined) {
    fail('control-plane', `label ${controlPlaneLabel} marks a control-plane node`);
  } else if (node.labels[LEGACY_ROLE_LABEL] === 'master') {
    fail('control-plane', `label ${LEGACY_ROLE_LABEL}=master marks a control-plane node`);
  }

  const deletionTaint = node.taints.find((taint) => AUTOSCALER_DELETION_TAINTS.includes(taint.key));
  if (deletionTaint !== undefined) {
    fail(
      'autoscaler-deletion',
      `taint ${deletionTaint.key} shows cluster-autoscaler is removing (or about to remove) this node`,
    );
  }

  if (node.unschedulable) {
    fail(
      'unschedulable',
      'node is cordoned (spec.unschedulable): an administrator or a tool is working on it',
    );
  } else if (node.taints.some((taint) => taint.key === UNSCHEDULABLE_TAINT)) {
    fail('unschedulable', `taint ${UNSCHEDULABLE_TAINT} marks the node as cordoned`);
  }

  const ignoreAnnotation = policy.ignoreAnnotations.find((key) => key in node.annotations);
  if (ignoreAnnotation !== undefined) {
    fail('ignore-annotation', `annotation ${ignoreAnnotation} asks for this node to be ignored`);
  }

  const pending = node.annotations[policy.pendingRebootAnnotation];
  if (pending !== undefined) {
    fail(
      'pending-reboot',
      `annotation ${policy.pendingRebootAnnotation}=${pending} shows a reboot is pending or under way ` +
        `(kured removes it only after a successful reboot)`,
    );
  }

  const ready = node.conditions.find((condition) => condition.type === 'Ready');
  const notReady = describeNotReady(node, ready);
  let readySinceMs: number | undefined;
  let oldEnoughAtMs: number | undefined;
  if (notReady !== undefined) {
    fail('not-ready', notReady);
  } else {
    const since =
      ready?.lastTransitionTime === undefined ? undefined : parseRfc3339(ready.lastTransitionTime);
    const minimumMs = policy.minimumReadySeconds * 1000;
    if (since === undefined) {
      fail(
        'ready-too-short',
        `Ready condition has no valid lastTransitionTime (${ready?.lastTransitionTime ?? 'absent'}): ` +
          `cannot tell how long the node has been Ready`,
      );
    } else if (since > nowMs) {
      fail(
        'ready-too-short',
        `Ready since ${new Date(since).toISOString()}, which is after now (${input.now.toISOString()}): ` +
          `clock skew between the API server and us, so Ready time is treated as too short`,
      );
    } else if (nowMs - since < minimumMs) {
      oldEnoughAtMs = since + minimumMs;
      fail(
        'ready-too-short',
        `Ready for ${formatDuration(wholeSeconds(nowMs - since))}, less than the minimum ${formatDuration(policy.minimumReadySeconds)}`,
      );
    } else {
      readySinceMs = since;
    }
  }
  const healthyBeforePatchRules = failures.length === 0;

  const patchFailure = checkPatch(node, input, nowMs);
  if (patchFailure.failure !== undefined) {
    fail(patchFailure.failure.rule, patchFailure.failure.reason);
  }
  const rejected = rejectedBuildOf(node.name, patchFailure.patchedAtMs, input.rejectedBuilds);
  if (rejected !== undefined) {
    fail(
      'rejected-build',
      `version ${rejected.version}, built from this node with its patch of ${new Date(rejected.patchedAtMs).toISOString()}, ` +
        `was rejected (${rejected.reason}); the node is a candidate again once it is patched anew`,
    );
  }

  const [first, ...later] = failures;
  if (first === undefined && readySinceMs !== undefined) {
    const verdict: NodeCandidate = {
      name: node.name,
      status: 'candidate',
      readyForSeconds: wholeSeconds(nowMs - readySinceMs),
      ...(patchFailure.patchedAtMs === undefined
        ? {}
        : { lastPatchedAt: new Date(patchFailure.patchedAtMs).toISOString() }),
    };
    return { verdict, healthy: healthyFacts(readySinceMs, nowMs, patchFailure.patchedAtMs) };
  }
  const eligibleAt =
    first?.rule === 'ready-too-short' && later.length === 0 && oldEnoughAtMs !== undefined
      ? new Date(oldEnoughAtMs).toISOString()
      : undefined;
  const verdict: NodeRejection = {
    name: node.name,
    status: 'rejected',
    rule: first?.rule ?? 'ready-too-short',
    reason: first?.reason ?? 'node has no usable Ready time',
    alsoFailed: later.map((failure) => failure.rule),
    ...definedOnly({ eligibleAt }),
    ...(patchFailure.patchedAtMs === undefined
      ? {}
      : { lastPatchedAt: new Date(patchFailure.patchedAtMs).toISOString() }),
  };
  // A rejected build is not a patch rule: the fallback must not waive it.
  return healthyBeforePatchRules && rejected === undefined && readySinceMs !== undefined
    ? { verdict, healthy: healthyFacts(readySinceMs, nowMs, patchFailure.patchedAtMs) }
    : { verdict };
}

/** The rejected build this node would repeat: same donor, and no patch since the rejected one. */
function rejectedBuildOf(
  name: string,
  patchedAtMs: number | undefined,
  builds: readonly RejectedBuild[] | undefined,
): RejectedBuild | undefined {
  return builds?.find(
    (build) => build.sourceNode === name && (patchedAtMs === undefined || patchedAtMs <= build.patchedAtMs),
  );
}

function healthyFacts(
  readySinceMs: number,
  nowMs: number,
  patchedAtMs: number | undefined,
): Evaluated['healthy'] {
  return {
    readySinceMs,
    readyForSeconds: wholeSeconds(nowMs - readySinceMs),
    ...definedOnly({ patchedAtMs }),
  };
}

function describeNotReady(node: ClusterNode, ready: NodeCondition | undefined): string | undefined {
  if (ready === undefined) {
    return 'node has no Ready condition (kubelet never reported)';
  }
  if (ready.status !== 'True') {
    const why = ready.reason === undefined ? '' : ` (${ready.reason})`;
    return `Ready condition is ${ready.status}${why}`;
  }
  const taint = node.taints.find((candidate) => NOT_READY_TAINTS.includes(candidate.key));
  if (taint !== undefined) {
    return `taint ${taint.key} shows the node controller considers it down`;
  }
  const unhealthy = node.conditions.find(
    (condition) => UNHEALTHY_CONDITIONS.includes(condition.type) && condition.status === 'True',
  );
  if (unhealthy !== undefined) {
    return `condition ${unhealthy.type} is True (cluster-autoscaler counts this as not ready)`;
  }
  return undefined;
}

interface PatchCheck {
  readonly failure?: { readonly rule: RejectionCode; readonly reason: string };
  /** The parsed last-patch time, when the annotation is valid (even if it is not newer than the image). */
  readonly patchedAtMs?: number;
}

function checkPatch(node: ClusterNode, input: PoolSelectionInput, nowMs: number): PatchCheck {
  const key = input.policy.lastPatchAnnotation;
  const raw = node.annotations[key];
  if (raw === undefined) {
    return {
      failure: {
        rule: 'missing-patch-annotation',
        reason: `annotation ${key} is absent: no record of a patch reboot (new node, or kured without --annotate-nodes)`,
      },
    };
  }
  const patchedAtMs = parseRfc3339(raw.trim());
  if (patchedAtMs === undefined) {
    return {
      failure: {
        rule: 'malformed-patch-timestamp',
        reason: `annotation ${key}="${raw}" is not an RFC 3339 timestamp with a time zone (e.g. 2026-11-22T10:15:00Z)`,
      },
    };
  }
  const toleranceMs = (input.clockSkewToleranceSeconds ?? DEFAULT_CLOCK_SKEW_TOLERANCE_SECONDS) * 1000;
  if (patchedAtMs > nowMs + toleranceMs) {
    return {
      failure: {
        rule: 'patch-in-future',
        reason:
          `annotation ${key}=${raw} is ${formatDuration(wholeSeconds(patchedAtMs - nowMs))} after now ` +
          `(${input.now.toISOString()}): the node's clock is skewed, so the timestamp cannot be trusted`,
      },
      patchedAtMs,
    };
  }
  const image = input.image;
  const referenceMs = image?.patchedAt?.getTime() ?? image?.builtAt?.getTime();
  if (referenceMs !== undefined && patchedAtMs <= referenceMs) {
    const what = image?.patchedAt !== undefined ? 'patched at' : 'built at';
    const version = image?.version === undefined ? '' : ` ${image.version}`;
    return {
      failure: {
        rule: 'patch-not-newer-than-image',
        reason:
          `last patched ${new Date(patchedAtMs).toISOString()}, not after the current image${version} ` +
          `(${what} ${new Date(referenceMs).toISOString()})`,
      },
      patchedAtMs,
    };
  }
  return { patchedAtMs };
}

/** A candidate with what ranks it. */
export interface RankedCandidate {
  readonly candidate: NodeCandidate;
  readonly readySinceMs: number;
  readonly patchedAtMs?: number;
}

/**
 * What the decision needs of a pool's members, however it was gathered: from the whole list
 * (`decide`) or folded page by page with only the best entries kept (`pool-selection-fold.ts`).
 */
export interface SelectionTally {
  readonly members: number;
  /** Members rejected per first-failed rule (before any fallback). */
  readonly rejectionCounts: Partial<Record<RejectionCode, number>>;
  /** The candidates kept (all of them, or the best ones), in any order. */
  readonly ranked: readonly RankedCandidate[];
  readonly candidateCount: number;
  /** Members that failed only the patch rules (what the fallback may waive): all, or the best ones. */
  readonly blocked: readonly Evaluated[];
  readonly blockedCount: number;
  /** Of those, how many per first-failed rule (the fallback takes them out of `rejectionCounts`). */
  readonly blockedRules: Partial<Record<RejectionCode, number>>;
}

function decide(
  input: PoolSelectionInput,
  members: readonly Evaluated[],
  all: readonly Evaluated[],
  nodesOutsidePool: number,
): PrototypeSelection {
  const rejectionCounts: Partial<Record<RejectionCode, number>> = {};
  const blockedRules: Partial<Record<RejectionCode, number>> = {};
  const ranked: RankedCandidate[] = [];
  const blocked: Evaluated[] = [];
  for (const member of members) {
    const verdict = member.verdict;
    if (verdict.status === 'candidate') {
      ranked.push(rankedOf(verdict, member.healthy));
    } else {
      rejectionCounts[verdict.rule] = (rejectionCounts[verdict.rule] ?? 0) + 1;
      if (member.healthy !== undefined) {
        blocked.push(member);
        blockedRules[verdict.rule] = (blockedRules[verdict.rule] ?? 0) + 1;
      }
    }
  }
  const tally: SelectionTally = {
    members: members.length,
    rejectionCounts,
    ranked,
    candidateCount: ranked.length,
    blocked,
    blockedCount: blocked.length,
    blockedRules,
  };
  return concludeSelection(input, tally, all, nodesOutsidePool);
}

export function rankedOf(candidate: NodeCandidate, healthy: Evaluated['healthy']): RankedCandidate {
  return {
    candidate,
    readySinceMs: healthy?.readySinceMs ?? 0,
    ...definedOnly({ patchedAtMs: healthy?.patchedAtMs }),
  };
}

/** Best first: longest Ready, then newest patch, then name. */
export function compareRanked(a: RankedCandidate, b: RankedCandidate): number {
  return (
    a.readySinceMs - b.readySinceMs ||
    (b.patchedAtMs ?? Number.NEGATIVE_INFINITY) - (a.patchedAtMs ?? Number.NEGATIVE_INFINITY) ||
    compareNames(a.candidate.name, b.candidate.name)
  );
}

/** The candidate a member that failed only the patch rules becomes when the fallback waives them. */
export function waivedCandidateOf(member: Evaluated): NodeCandidate | undefined {
  const healthy = member.healthy;
  if (healthy === undefined || member.verdict.status !== 'rejected') return undefined;
  const rejection = member.verdict;
  return {
    name: rejection.name,
    status: 'candidate',
    readyForSeconds: healthy.readyForSeconds,
    ...(healthy.patchedAtMs === undefined
      ? {}
      : { lastPatchedAt: new Date(healthy.patchedAtMs).toISOString() }),
    waived: { rule: rejection.rule, reason: rejection.reason },
  };
}

/**
 * The decision from a tally. `verdictEntries` are the verdicts to report (every node, the pool's
 * members, or the ones a fold kept), in input order; a waived member's verdict becomes its candidate.
 */
export function concludeSelection(
  input: PoolSelectionInput,
  tally: SelectionTally,
  verdictEntries: readonly Evaluated[],
  nodesOutsidePool: number,
): PrototypeSelection {
  const { policy } = input;
  const rejectionCounts: Partial<Record<RejectionCode, number>> = { ...tally.rejectionCounts };
  let ranked: RankedCandidate[] = [...tally.ranked];
  let candidateCount = tally.candidateCount;

  let fallback = { used: false, reason: 'not needed: candidates were found with the patch rules applied' };
  let verdicts = verdictEntries.map((entry) => entry.verdict);
  if (candidateCount === 0) {
    fallback = { used: false, reason: 'not applicable: no node failed only the patch rules' };
    if (tally.blockedCount > 0) {
      fallback = fallbackDecision(input);
    }
    if (fallback.used) {
      ranked = tally.blocked.flatMap((member) => {
        const candidate = waivedCandidateOf(member);
        return candidate === undefined ? [] : [rankedOf(candidate, member.healthy)];
      });
      candidateCount = tally.blockedCount;
      for (const [rule, count] of Object.entries(tally.blockedRules) as [RejectionCode, number][]) {
        const left = (rejectionCounts[rule] ?? 0) - count;
        if (left === 0) delete rejectionCounts[rule];
        else rejectionCounts[rule] = left;
      }
      verdicts = verdictEntries.map((entry) => waivedCandidateOf(entry) ?? entry.verdict);
    }
  }

  ranked.sort(compareRanked);
  const candidates = ranked.map((entry) => entry.candidate);
  const base = {
    pool: input.pool.scaleSet,
    candidates,
    candidateCount,
    verdicts,
    poolNodeCount: tally.members,
    nodesOutsidePool,
    rejectionCounts,
    fallback,
  };
  const poolName = describeScaleSet(input.pool.scaleSet);
  const [best] = candidates;
  const minimum = Math.max(1, policy.minimumCandidates);
  if (best !== undefined && candidateCount >= minimum) {
    const patched =
      best.lastPatchedAt === undefined ? 'no usable patch time' : `last patched ${best.lastPatchedAt}`;
    return {
      ...base,
      outcome: 'chosen',
      chosen: best,
      reason:
        `${best.name} is Ready longest (${formatDuration(best.readyForSeconds)}, ${patched}) among ${candidateCount} ` +
        `candidate(s) in ${poolName}` +
        (fallback.used ? `; patch rules waived: ${fallback.reason}` : ''),
    };
  }
  if (best !== undefined) {
    return {
      ...base,
      outcome: 'too-few-candidates',
      reason: `${candidateCount} candidate(s) in ${poolName}, fewer than minimumCandidates ${policy.minimumCandidates}`,
    };
  }
  if (tally.blockedCount > 0) {
    return {
      ...base,
      outcome: 'no-newer-patch',
      reason:
        `${tally.blockedCount} healthy node(s) in ${poolName}, none patched after the current image ` +
        `(${summarise(rejectionCounts, PATCH_RULES)}); fallback ${fallback.reason}`,
    };
  }
  return {
    ...base,
    outcome: 'no-eligible-node',
    reason:
      tally.members === 0
        ? `no node of the cluster belongs to ${poolName}`
        : `no node of ${poolName} qualifies (${summarise(rejectionCounts, SELECTION_RULES)})`,
  };
}

function fallbackDecision(input: PoolSelectionInput): { used: boolean; reason: string } {
  const maximum = input.policy.maximumImageAgeSeconds;
  if (maximum === undefined) {
    return { used: false, reason: 'disabled (no maximumImageAge)' };
  }
  const image = input.image;
  const referenceMs = image?.patchedAt?.getTime() ?? image?.builtAt?.getTime();
  if (referenceMs === undefined) {
    // A marketplace image (or one without dates) cannot be shown to be fresh, and replacing it with any
    // proven node is the point of the product.
    return {
      used: true,
      reason: `the current image's age is unknown, treated as older than ${formatDuration(maximum)}`,
    };
  }
  const ageSeconds = wholeSeconds(input.now.getTime() - referenceMs);
  const basis = image?.patchedAt !== undefined ? 'patched' : 'built';
  if (ageSeconds > maximum) {
    return {
      used: true,
      reason: `the current image was ${basis} ${formatDuration(ageSeconds)} ago, more than maximumImageAge ${formatDuration(maximum)}`,
    };
  }
  return {
    used: false,
    reason: `not used: the current image was ${basis} ${formatDuration(ageSeconds)} ago, within maximumImageAge ${formatDuration(maximum)}`,
  };
}

function summarise(counts: Partial<Record<RejectionCode, number>>, order: readonly RejectionCode[]): string {
  const parts = order.flatMap((rule) => {
    const count = counts[rule];
    return count === undefined || count === 0 ? [] : [`${count} ${rule}`];
  });
  return parts.length === 0 ? 'no rejections' : parts.join(', ');
}

/** Code-unit order: deterministic across locales and ICU versions, unlike localeCompare. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
