/**
 * The Kubernetes objects the canary gate reads and writes, converted to and from the domain: DaemonSets
 * (what decides where they run), the check pod's manifest, and a pod's outcome. Pure.
 */
import type { V1DaemonSet, V1Pod, V1Taint } from '@kubernetes/client-node';

import type { DaemonSetTarget, NodeSelectorRequirement, TolerationLike } from '../../domain/canary.js';
import type { NodeTaint } from '../../domain/cluster-node.js';
import type { CheckPodSpec, PodOutcome } from '../../ports/cluster-gateway.js';
import { toPodPhase } from './to-domain.js';

const CHECK_CONTAINER = 'check';

export function toDaemonSetTarget(daemonSet: V1DaemonSet): DaemonSetTarget {
  const spec = daemonSet.spec?.template.spec;
  const terms =
    spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return {
    namespace: daemonSet.metadata?.namespace ?? '',
    name: daemonSet.metadata?.name ?? '',
    uid: daemonSet.metadata?.uid ?? '',
    nodeSelector: { ...spec?.nodeSelector },
    requiredNodeAffinity: terms.map((term) =>
      (term.matchExpressions ?? []).map((expression): NodeSelectorRequirement => ({
        key: expression.key,
        operator: expression.operator,
        values: [...(expression.values ?? [])],
      })),
    ),
    tolerations: (spec?.tolerations ?? []).map((toleration): TolerationLike => ({
      ...(toleration.key === undefined ? {} : { key: toleration.key }),
      ...(toleration.operator === undefined ? {} : { operator: toleration.operator }),
      ...(toleration.value === undefined ? {} : { value: toleration.value }),
      ...(toleration.effect === undefined ? {} : { effect: toleration.effect }),
    })),
  };
}

/**
 * The check pod: bound to the canary node (bypassing the scheduler), never privileged, no host
 * namespaces, no service account token, run once. It tolerates every taint so that a node the canary
 * tainted for itself (or cordoned) still runs it.
 */
export function checkPodManifest(spec: CheckPodSpec): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: spec.name, namespace: spec.namespace, labels: { ...spec.labels } },
    spec: {
      nodeName: spec.nodeName,
      restartPolicy: 'Never',
      activeDeadlineSeconds: spec.deadlineSeconds,
      terminationGracePeriodSeconds: 5,
      automountServiceAccountToken: false,
      tolerations: [{ operator: 'Exists' }],
      containers: [
        {
          name: CHECK_CONTAINER,
          image: spec.image,
          imagePullPolicy: 'IfNotPresent',
          // A failed check's last output lines become its message, and so the canary's reason: what an
          // operator needs to see why. Scrubbed before it is kept (shared/application/sensitive-text.ts).
          terminationMessagePolicy: 'FallbackToLogsOnError',
          command: [...spec.command],
          ...(spec.args.length === 0 ? {} : { args: [...spec.args] }),
          ...(spec.env.length === 0 ? {} : { env: spec.env.map((entry) => ({ ...entry })) }),
          securityContext: {
            privileged: false,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          },
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}

/** The phase and, for an ended pod, what its container said (exit code and reason, or the pod's message). */
export function toPodOutcome(pod: V1Pod): PodOutcome {
  const phase = toPodPhase(pod.status?.phase);
  const terminated = pod.status?.containerStatuses?.find((status) => status.state?.terminated !== undefined)
    ?.state?.terminated;
  const parts = [
    ...(terminated === undefined ? [] : [`exit code ${terminated.exitCode}`]),
    ...(terminated?.reason === undefined ? [] : [terminated.reason]),
    ...(terminated?.message === undefined || terminated.message === '' ? [] : [terminated.message]),
    ...(pod.status?.message === undefined || pod.status.message === '' ? [] : [pod.status.message]),
  ];
  return { phase, ...(parts.length === 0 ? {} : { message: parts.join(': ').slice(0, 300) }) };
}

/** The node's taints with `key`'s replaced by `taint` (or removed), others kept as they were. */
export function withTaint(current: readonly V1Taint[], key: string, taint: NodeTaint | null): V1Taint[] {
  const others = current.filter((entry) => entry.key !== key);
  return taint === null
    ? others
    : [
        ...others,
        {
          key: taint.key,
          effect: taint.effect,
          ...(taint.value === undefined ? {} : { value: taint.value }),
        },
      ];
}
