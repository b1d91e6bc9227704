/**
 * Kubernetes workload objects (Deployments, ReplicaSets, DaemonSets, bare Pods, PodDisruptionBudgets)
 * built from a scenario, and the pod template the world's controllers stamp pods from.
 */
import type { KubeObject } from '../contracts.js';
import { sha } from './nodes.js';
import type { PdbSpec, Workload } from './scenario.js';

export const DAEMONSET_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** The 10-character hash the Deployment controller puts in ReplicaSet and pod names. */
export function templateHash(seed: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const hex = sha(seed);
  let out = '';
  for (let index = 0; index < 10; index++)
    out += alphabet[Number.parseInt(hex.slice(index * 2, index * 2 + 2), 16) % 27];
  return out;
}

/** A 5-character suffix like the API server's generateName. */
export function nameSuffix(seed: string): string {
  return templateHash(seed).slice(0, 5);
}

function podTemplate(workload: Workload, extraLabels: Record<string, string>): Record<string, unknown> {
  const labels = { app: workload.name, ...(workload.labels ?? {}), ...extraLabels };
  const spec: Record<string, unknown> = {
    containers: [
      {
        name: workload.name,
        image: workload.image,
        imagePullPolicy: 'IfNotPresent',
        resources: { requests: { cpu: '10m', memory: '32Mi' } },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        ...(workload.emptyDir ? { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] } : {}),
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    serviceAccountName: 'default',
    securityContext: {},
  };
  if (workload.emptyDir) spec.volumes = [{ name: 'scratch', emptyDir: {} }];
  if (workload.nodeSelector) spec.nodeSelector = { ...workload.nodeSelector };
  const tolerations: unknown[] = [...(workload.tolerations ?? [])];
  if (workload.kind === 'DaemonSet') tolerations.push(...DAEMONSET_TOLERATIONS);
  if (tolerations.length > 0) spec.tolerations = tolerations;
  return { metadata: { labels }, spec };
}

export function selectorOf(workload: Workload): { matchLabels: Record<string, string> } {
  return { matchLabels: { app: workload.name } };
}

/** Top-level objects for a workload (controllers create the pods). */
export function buildWorkloadObjects(
  workload: Workload,
): { resource: 'deployments' | 'replicasets' | 'daemonsets' | 'pods'; object: KubeObject }[] {
  const metadata = {
    name: workload.name,
    namespace: workload.namespace,
    labels: { app: workload.name, ...(workload.labels ?? {}) },
  };
  switch (workload.kind) {
    case 'Deployment':
      return [
        {
          resource: 'deployments',
          object: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { ...metadata, annotations: { 'deployment.kubernetes.io/revision': '1' } },
            spec: {
              replicas: workload.replicas,
              selector: selectorOf(workload),
              template: podTemplate(workload, {}),
              strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
              revisionHistoryLimit: 10,
              progressDeadlineSeconds: 600,
            },
            status: {},
          },
        },
      ];
    case 'ReplicaSet':
      return [
        {
          resource: 'replicasets',
          object: {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            metadata,
            spec: {
              replicas: workload.replicas,
              selector: selectorOf(workload),
              template: podTemplate(workload, {}),
            },
            status: { replicas: 0 },
          },
        },
      ];
    case 'DaemonSet':
      return [
        {
          resource: 'daemonsets',
          object: {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            metadata: {
              ...metadata,
              ...(workload.annotations ? { annotations: { ...workload.annotations } } : {}),
            },
            spec: {
              selector: selectorOf(workload),
              template: podTemplate(workload, {}),
              updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
              revisionHistoryLimit: 10,
            },
            status: {},
          },
        },
      ];
    case 'Pod': {
      const template = podTemplate(workload, {});
      const spec = { ...(template.spec as Record<string, unknown>) };
      if (workload.nodeName) spec.nodeName = workload.nodeName;
      return [
        {
          resource: 'pods',
          object: { apiVersion: 'v1', kind: 'Pod', metadata, spec, status: { phase: 'Pending' } },
        },
      ];
    }
  }
}

/** The ReplicaSet a Deployment controller creates for its template. */
export function replicaSetFor(deployment: KubeObject): KubeObject {
  const spec = (deployment.spec ?? {}) as {
    replicas?: number;
    selector?: unknown;
    template?: { metadata?: { labels?: Record<string, string> } };
  };
  const hash = templateHash(
    `${deployment.metadata.namespace ?? ''}/${deployment.metadata.name}:${JSON.stringify(spec.template)}`,
  );
  const template = structuredClone(spec.template ?? {});
  template.metadata = {
    ...(template.metadata ?? {}),
    labels: { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash },
  };
  const selector = structuredClone(spec.selector ?? {}) as { matchLabels?: Record<string, string> };
  selector.matchLabels = { ...(selector.matchLabels ?? {}), 'pod-template-hash': hash };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${deployment.metadata.name}-${hash}`,
      namespace: deployment.metadata.namespace ?? 'default',
      labels: { ...(template.metadata.labels ?? {}) },
      annotations: {
        'deployment.kubernetes.io/desired-replicas': String(spec.replicas ?? 1),
        'deployment.kubernetes.io/revision': '1',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: deployment.metadata.name,
          uid: deployment.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: { replicas: spec.replicas ?? 1, selector, template },
    status: { replicas: 0 },
  };
}

/** A pod stamped from a controller's template. */
export function podFromTemplate(owner: KubeObject, name: string, nodeName: string | undefined): KubeObject {
  const template =
    (
      (owner.spec ?? {}) as {
        template?: { metadata?: { labels?: Record<string, string> }; spec?: Record<string, unknown> };
      }
    ).template ?? {};
  const spec = structuredClone(template.spec ?? {});
  if (nodeName) {
    spec.nodeName = nodeName;
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.metadata.namespace ?? 'default',
      labels: { ...(template.metadata?.labels ?? {}) },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: owner.kind,
          name: owner.metadata.name,
          uid: owner.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec,
    status: { phase: 'Pending', qosClass: 'Burstable' },
  };
}

export function buildPdb(
  name: string,
  namespace: string,
  matchLabels: Record<string, string>,
  pdb: PdbSpec,
): KubeObject {
  const spec: Record<string, unknown> = { selector: { matchLabels } };
  if (pdb.minAvailable !== undefined) spec.minAvailable = pdb.minAvailable;
  if (pdb.maxUnavailable !== undefined) spec.maxUnavailable = pdb.maxUnavailable;
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace }, spec };
}
