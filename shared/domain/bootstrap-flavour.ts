/**
 * How a pool's nodes get their kubelet credentials ("bootstrap flavour"), and what that means for
 * capturing one node's disk as the image of every new node: which identity files the prep script must
 * remove, which files joining needs and must be kept, and which flavours cannot be captured safely at
 * all (refused with the reason). Also the detection of the flavour from a node's labels and
 * annotations. Pure: the plan and the settings supply the inputs.
 */
import type { ClusterNode } from './cluster-node.js';

export const BOOTSTRAP_FLAVOURS = ['aks-engine', 'kubeadm', 'k3s', 'rke2'] as const;
export type BootstrapFlavour = (typeof BOOTSTRAP_FLAVOURS)[number];

/** A file or directory the prep script leaves in place, and why a clone needs it. */
export interface KeptPath {
  readonly path: string;
  readonly why: string;
}

/** What the prep script does to the donor's disk for one flavour. */
export interface IdentityPlan {
  readonly flavour: BootstrapFlavour;
  /** Removed (`rm -rf`, globs allowed). */
  readonly removes: readonly string[];
  /** Emptied (`truncate -s 0`): regenerated at the next boot when empty. */
  readonly empties: readonly string[];
  readonly keeps: readonly KeptPath[];
}

export type CaptureDecision =
  | { readonly kind: 'capture'; readonly plan: IdentityPlan }
  | { readonly kind: 'refuse'; readonly flavour: BootstrapFlavour; readonly reason: string };

/**
 * Identity every flavour must not pass on. Each clone would otherwise boot as the donor:
 * the hostname it registers under, cloud-init's instance data (the donor's user-data and instance id),
 * the Azure agent's provisioning history and event queue, the donor's journals (which may hold secrets
 * of its workloads) and its SSH host keys (every clone would present the donor's host key).
 */
const COMMON_REMOVED: readonly string[] = [
  '/etc/hostname',
  '/var/lib/cloud/data/*',
  '/var/lib/cloud/instance',
  '/var/lib/cloud/instances/*',
  '/var/lib/waagent/history/*',
  '/var/lib/waagent/events/*',
  '/var/log/journal/*',
  '/etc/ssh/ssh_host_*',
];

/** machine-id is emptied, not removed: systemd writes a new one at first boot, a missing file can boot read-only. */
const COMMON_EMPTIED: readonly string[] = ['/etc/machine-id'];

function rancherKeeps(flavour: 'k3s' | 'rke2'): KeptPath[] {
  return [
    {
      path: `/etc/rancher/${flavour}/config.yaml`,
      why: 'holds the cluster join token every agent joins with',
    },
    {
      path: '/etc/rancher/node/password',
      why: `the server binds it to the donor's node name: the donor must present it again when it restarts (a new one is rejected until its ${flavour === 'k3s' ? '<node>.node-password.k3s' : '<node>.node-password.rke2'} secret is deleted), while each clone registers its own name with it`,
    },
  ];
}

/** The capture decision for a flavour: the plan, or why the product cannot capture it safely. */
export function captureDecision(flavour: BootstrapFlavour): CaptureDecision {
  switch (flavour) {
    case 'aks-engine':
      return {
        kind: 'capture',
        plan: {
          flavour,
          removes: COMMON_REMOVED,
          empties: COMMON_EMPTIED,
          keeps: [
            {
              path: '/etc/kubernetes/certs',
              why: 'the client certificate every node of the cluster shares: a clone joins with it under its own hostname',
            },
            {
              path: '/var/lib/kubelet/kubeconfig',
              why: "the kubelet's kubeconfig that points at that certificate",
            },
          ],
        },
      };
    case 'k3s':
    case 'rke2':
      return {
        kind: 'capture',
        plan: { flavour, removes: COMMON_REMOVED, empties: COMMON_EMPTIED, keeps: rancherKeeps(flavour) },
      };
    case 'kubeadm':
      return {
        kind: 'refuse',
        flavour,
        reason:
          'kubeadm nodes (Cluster API Provider Azure) authenticate with a per-node client certificate obtained by TLS bootstrap: ' +
          "a clone of the donor's disk authenticates as the donor (/var/lib/kubelet/pki) and NodeRestriction forbids it to register " +
          "its own name; without that certificate it needs a fresh bootstrap token from customData, which the product replaces, and the donor's own " +
          'token has expired, so removing it would also keep the donor from rejoining. Change the image of the AzureMachinePool instead (CAPZ reconciles the scale set anyway)',
      };
  }
}

export type FlavourDetection =
  | { readonly kind: 'detected'; readonly flavour: BootstrapFlavour; readonly evidence: string }
  | { readonly kind: 'unknown'; readonly reason: string };

/**
 * Reads the flavour off a node, from what each distribution writes on its nodes: k3s and rke2 annotate
 * their node args (`k3s.io/node-args`, `rke2.io/node-args`); Cluster API marks the nodes of its machines
 * (`cluster.x-k8s.io/*` annotations) and kubeadm its CRI socket annotation; aks-engine nodes carry the
 * `kubernetes.azure.com/role` label without AKS's `kubernetes.azure.com/cluster`.
 */
export function detectBootstrapFlavour(
  node: Pick<ClusterNode, 'name' | 'labels' | 'annotations'>,
): FlavourDetection {
  const annotations = Object.keys(node.annotations);
  const has = (prefix: string): string | undefined => annotations.find((key) => key.startsWith(prefix));
  const rke2 = has('rke2.io/');
  if (rke2) return { kind: 'detected', flavour: 'rke2', evidence: `annotation ${rke2}` };
  const k3s = has('k3s.io/');
  if (k3s) return { kind: 'detected', flavour: 'k3s', evidence: `annotation ${k3s}` };
  const clusterApi = has('cluster.x-k8s.io/') ?? has('kubeadm.alpha.kubernetes.io/');
  if (clusterApi) return { kind: 'detected', flavour: 'kubeadm', evidence: `annotation ${clusterApi}` };
  if (
    node.labels['kubernetes.azure.com/role'] !== undefined &&
    node.labels['kubernetes.azure.com/cluster'] === undefined
  ) {
    return {
      kind: 'detected',
      flavour: 'aks-engine',
      evidence: 'label kubernetes.azure.com/role without kubernetes.azure.com/cluster',
    };
  }
  return {
    kind: 'unknown',
    reason: `node ${node.name} carries none of the marks of aks-engine, kubeadm/Cluster API, k3s or rke2; set pools[].bootstrapFlavour`,
  };
}
