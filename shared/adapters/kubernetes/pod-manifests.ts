/**
 * The product's own pods as client-node objects, and what an ended pod says: the one-shot privileged pod
 * (prep, freeze and scrub pods), the canary's unprivileged check pod, and a pod's outcome. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';

import type { CheckPodSpec, PodOutcome, PrepPodSpec } from '../../ports/kubernetes/index.js';
import { toPodPhase } from './to-domain.js';

/** The prep pod's container: nsenter needs util-linux; the image is the operator's choice. */
const PREP_CONTAINER = 'prep';
const CHECK_CONTAINER = 'check';

/**
 * The one-shot privileged pod: runs `script` in the host's namespaces, on the node whatever its taints.
 * Exported for the simulator's tests, which run the product's own manifest on the world.
 */
export function prepPodManifest(spec: PrepPodSpec): V1Pod {
  const namespaces =
    spec.hostNamespaces === 'mount' ? ['--mount'] : ['--mount', '--uts', '--ipc', '--net', '--pid'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      labels: { ...spec.labels },
      ...(spec.annotations === undefined ? {} : { annotations: { ...spec.annotations } }),
    },
    spec: {
      // Bound directly, bypassing the scheduler: the node is cordoned by then.
      nodeName: spec.nodeName,
      hostPID: true,
      hostNetwork: true,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 0,
      automountServiceAccountToken: false,
      // The kubelet still rejects pods that do not tolerate the node's NoExecute taints.
      tolerations: [{ operator: 'Exists' }],
      containers: [
        {
          name: PREP_CONTAINER,
          image: spec.image,
          imagePullPolicy: 'IfNotPresent',
          command: ['nsenter', '--target', '1', ...namespaces, '--', '/bin/sh', '-c', spec.script],
          securityContext: { privileged: true },
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
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
  const endedAt = terminated?.finishedAt;
  return {
    phase,
    ...(parts.length === 0 ? {} : { message: parts.join(': ').slice(0, 300) }),
    ...(endedAt === undefined ? {} : { endedAt: new Date(endedAt).toISOString() }),
  };
}
