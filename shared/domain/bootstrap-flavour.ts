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
 * `kubernetes.azure.com/role` label (and `kubernetes.azure.com/cluster=<resource group>`, aks-engine's
 * labels.sh sets both) without what only AKS writes: `kubernetes.azure.com/agentpool`,
 * `kubernetes.azure.com/node-image-version`, a `kubernetes.azure.com/cluster` of an `MC_` resource group.
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
  if (node.labels['kubernetes.azure.com/role'] !== undefined && !isAksNode(node.labels)) {
    return {
      kind: 'detected',
      flavour: 'aks-engine',
      evidence: 'label kubernetes.azure.com/role without the labels only AKS writes',
    };
  }
  return {
    kind: 'unknown',
    reason: `node ${node.name} carries none of the marks of aks-engine, kubeadm/Cluster API, k3s or rke2; set pools[].bootstrapFlavour`,
  };
}

/** Labels only AKS itself writes on its nodes (aks-engine writes the role and cluster labels too). */
function isAksNode(labels: Readonly<Record<string, string>>): boolean {
  return (
    labels['kubernetes.azure.com/agentpool'] !== undefined ||
    labels['kubernetes.azure.com/node-image-version'] !== undefined ||
    /^MC_/i.test(labels['kubernetes.azure.com/cluster'] ?? '')
  );
}

/** The flavour a pool is captured with, and where it came from; or why the pool cannot be captured. */
export type FlavourChoice =
  | {
      readonly kind: 'capture';
      readonly flavour: BootstrapFlavour;
      /** `configured` (pools[].bootstrapFlavour) or `detected` from the donor's labels and annotations. */
      readonly source: 'configured' | 'detected';
      readonly evidence: string;
    }
  | { readonly kind: 'refuse'; readonly flavour?: BootstrapFlavour; readonly reason: string };

/**
 * The pool's flavour: the configured one when set, else what the donor shows
 * (`pool.bootstrapFlavour ?? detectBootstrapFlavour(donor)`), then whether that flavour can be captured
 * (`captureDecision`). Without a configured flavour and without a donor there is nothing to decide yet:
 * `undefined`.
 */
export function chooseCaptureFlavour(input: {
  readonly configured?: BootstrapFlavour;
  readonly donor?: Pick<ClusterNode, 'name' | 'labels' | 'annotations'>;
}): FlavourChoice | undefined {
  let flavour: BootstrapFlavour;
  let source: 'configured' | 'detected';
  let evidence: string;
  if (input.configured !== undefined) {
    flavour = input.configured;
    source = 'configured';
    evidence = `pools[].bootstrapFlavour is ${input.configured}`;
  } else {
    if (input.donor === undefined) return undefined;
    const detection = detectBootstrapFlavour(input.donor);
    if (detection.kind === 'unknown') {
      return { kind: 'refuse', reason: `the bootstrap flavour is unknown: ${detection.reason}` };
    }
    flavour = detection.flavour;
    source = 'detected';
    evidence = `node ${input.donor.name}: ${detection.evidence}`;
  }
  const decision = captureDecision(flavour);
  if (decision.kind === 'refuse') {
    return {
      kind: 'refuse',
      flavour,
      reason: `bootstrap flavour ${flavour} (${evidence}): ${decision.reason}`,
    };
  }
  return { kind: 'capture', flavour, source, evidence };
}
