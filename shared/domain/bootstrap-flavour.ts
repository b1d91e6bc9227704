/**
 * How a pool's nodes get their kubelet credentials ("bootstrap flavour"), and what that means for
 * capturing one node's disk as the image of every new node: which identity files the prep script must
 * remove, which files joining needs and must be kept, whether only a copy of the disk may be scrubbed
 * and how new nodes join. Every flavour can be captured; a pool whose flavour is unknown is refused.
 * Also the detection of the flavour from a node's labels and annotations. Pure: the
 * plan and the settings supply the inputs.
 */
import type { ClusterNode } from './cluster-node.js';

export const BOOTSTRAP_FLAVOURS = ['aks-engine', 'kubeadm', 'k3s', 'rke2'] as const;
export type BootstrapFlavour = (typeof BOOTSTRAP_FLAVOURS)[number];

/** A file or directory the prep script leaves in place, and why a clone needs it. */
export interface KeptPath {
  readonly path: string;
  readonly why: string;
}

/**
 * Where the de-identification may run: on the donor's own disk before its snapshot (drain-and-stop, Run
 * Command) or on a copy of it (live capture), or only ever on a copy, because what it removes cannot be
 * given back to the donor (kubeadm: the donor's per-node certificate, obtained with a bootstrap token
 * that has long expired).
 */
export type ScrubTarget = 'donor-or-copy' | 'copy-only';

/**
 * How a new node from the image becomes a node: it boots from what the image holds (the model's
 * customData becomes a no-op and its bootstrap extensions go), or it still runs the pool's own bootstrap
 * from customData and extensions, which the model keeps (kubeadm: `kubeadm join` with a fresh token, on
 * a disk whose packages and images are already there).
 */
export const NEW_NODE_BOOTSTRAPS = ['boot-from-image', 'run-pool-bootstrap'] as const;
export type NewNodeBootstrap = (typeof NEW_NODE_BOOTSTRAPS)[number];

/** What a new node from the image does to join, in an operator's words (plan, status page). */
export function describeNewNodes(newNodes: NewNodeBootstrap): string {
  return newNodes === 'run-pool-bootstrap'
    ? "run the pool's bootstrap (customData and bootstrap extensions kept: kubeadm join with a fresh token) on the warm image"
    : 'boot from the image (customData replaced by a no-op, bootstrap extensions removed)';
}

/** What the prep script does to the donor's disk (or its copy) for one flavour. */
export interface IdentityPlan {
  readonly flavour: BootstrapFlavour;
  readonly scrub: ScrubTarget;
  readonly newNodes: NewNodeBootstrap;
  /** Removed (`rm -rf`, globs allowed). */
  readonly removes: readonly string[];
  /** Emptied (`truncate -s 0`): regenerated at the next boot when empty. */
  readonly empties: readonly string[];
  readonly keeps: readonly KeptPath[];
}

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

/**
 * What `kubeadm reset` removes from a node (kubernetes/kubernetes, cmd/kubeadm/app/cmd/phases/reset/
 * cleanupnode.go: `runCleanupNode` cleans the contents of /etc/kubernetes/manifests, the kubelet's run
 * directory /var/lib/kubelet and the certificates directory /etc/kubernetes/pki; `resetConfigDir` deletes
 * admin.conf, super-admin.conf, kubelet.conf, bootstrap-kubelet.conf, controller-manager.conf and
 * scheduler.conf under /etc/kubernetes). The same paths are what `kubeadm join`'s preflight refuses to
 * find (cmd/kubeadm/app/preflight/checks.go `RunJoinNodeChecks`: DirAvailable--etc-kubernetes-manifests,
 * FileAvailable--etc-kubernetes-kubelet.conf, FileAvailable--etc-kubernetes-bootstrap-kubelet.conf,
 * FileAvailable--etc-kubernetes-pki-ca.crt): a clone that kept any of them fails its join.
 * /var/lib/kubelet holds the per-node client certificate (pki/kubelet-client-current.pem) and what join
 * wrote for this node (config.yaml, kubeadm-flags.env). Reset's other steps (stop the kubelet, unmount
 * under /var/lib/kubelet, remove the containers) concern a running node, not a copy of its disk.
 */
const KUBEADM_RESET_REMOVED: readonly string[] = [
  '/etc/kubernetes/manifests/*',
  '/var/lib/kubelet/*',
  '/etc/kubernetes/pki/*',
  '/etc/kubernetes/admin.conf',
  '/etc/kubernetes/super-admin.conf',
  '/etc/kubernetes/kubelet.conf',
  '/etc/kubernetes/bootstrap-kubelet.conf',
  '/etc/kubernetes/controller-manager.conf',
  '/etc/kubernetes/scheduler.conf',
];

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

/** What capturing a pool of this flavour removes, empties and keeps, and how its new nodes join. */
export function identityPlan(flavour: BootstrapFlavour): IdentityPlan {
  switch (flavour) {
    case 'aks-engine':
      return {
        flavour,
        scrub: 'donor-or-copy',
        newNodes: 'boot-from-image',
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
      };
    case 'k3s':
    case 'rke2':
      return {
        flavour,
        scrub: 'donor-or-copy',
        newNodes: 'boot-from-image',
        removes: COMMON_REMOVED,
        empties: COMMON_EMPTIED,
        keeps: rancherKeeps(flavour),
      };
    case 'kubeadm':
      // A kubeadm node authenticates with a per-node certificate from TLS bootstrap: a clone that kept it
      // would authenticate as the donor (NodeRestriction refuses it its own name), and a donor that lost
      // it could not rejoin (its bootstrap token expired long ago). So only a copy is scrubbed, and new
      // nodes still run `kubeadm join` from the model's customData, with the packages and images there.
      return {
        flavour,
        scrub: 'copy-only',
        newNodes: 'run-pool-bootstrap',
        removes: [...COMMON_REMOVED, ...KUBEADM_RESET_REMOVED],
        empties: COMMON_EMPTIED,
        keeps: [
          {
            path: '/var/lib/containerd',
            why: "the container image cache: a new node's kubeadm join starts with its images already pulled",
          },
          {
            path: '/etc/systemd/system/kubelet.service.d',
            why: 'the kubelet drop-in kubeadm installs with its packages: the kubelet waits for kubeadm join to configure it',
          },
        ],
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
  | { readonly kind: 'refuse'; readonly reason: string };

/**
 * The pool's flavour: the configured one when set, else what the donor shows
 * (`pool.bootstrapFlavour ?? detectBootstrapFlavour(donor)`); refused when neither says. Without a configured flavour and without a donor there is nothing to decide yet:
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
  return { kind: 'capture', flavour, source, evidence };
}
