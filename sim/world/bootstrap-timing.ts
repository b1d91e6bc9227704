/**
 * How long a new node takes from a scale-out request to Ready and schedulable, per bootstrap flavour,
 * when its instance boots our captured image ("ours": packages and images are on the disk, only the
 * join is left) and when it boots the pool's original image with its full bootstrap ("original":
 * package install, image pulls, then the join). Each part names its source; "estimate" marks a figure
 * reasoned from the source rather than measured in it. The aks-engine and kubeadm totals are the
 * latency profile's join figures (sim/contracts.ts `KAMINO_OBSERVED`, sim/README.md "Time to Ready"),
 * which the world uses for those pools; tests/sim/world/bootstrap-timing.test.ts keeps them equal.
 */

export type BootstrapFlavour = 'aks-engine' | 'kubeadm' | 'k3s' | 'rke2';

export const BOOTSTRAP_FLAVOURS: readonly BootstrapFlavour[] = ['aks-engine', 'kubeadm', 'k3s', 'rke2'];

/** The parts of one flavour's bootstrap, seconds. */
export interface BootstrapParts {
  /** Installing the node's packages or binaries (the original image only). */
  readonly install: number;
  /** Pulling the system images a node needs before it is Ready (the original image only). */
  readonly imagePulls: number;
  /** Joining from an image whose packages and images are there: credentials, kubelet start, CNI Ready. */
  readonly joinWarm: number;
  /** Joining on a fresh node: as joinWarm, plus writing the configuration the image did not have. */
  readonly joinCold: number;
}

/**
 * The instance created and booted to a running kubelet host: the profile's instance start (30 s, kamino's
 * log, docs/design.md#timings) and boot (30 s) — the same for every flavour and both images.
 */
export const PROVISION_AND_BOOT_SECONDS = 60;

export const BOOTSTRAP_PARTS: Readonly<Record<BootstrapFlavour, BootstrapParts>> = {
  // aks-engine's CustomScript extension installs the runtime and the kubelet on a marketplace image
  // (apt installs dominate a cold node: https://github.com/kubernetes-sigs/cluster-api/issues/97), pulls
  // the system images (a 129 MB image takes 16 s on a fresh node:
  // https://the-gigi.github.io/gigi-zone/posts/2025/12/blazing_fast_pods_image_preloading; aks-engine
  // pulls several, estimate 150 s), then writes the kubelet's configuration and starts it. The warm join
  // is the kubelet starting with what the image holds and the CNI pod from cached images (estimate).
  'aks-engine': { install: 150, imagePulls: 150, joinWarm: 30, joinCold: 60 },
  // kubeadm on a plain image: containerd, kubelet and kubeadm from packages (the reason image-builder
  // bakes them: https://image-builder.sigs.k8s.io/), pause, kube-proxy and the CNI pulled (estimate
  // 120 s), then `kubeadm join` (discovery, kubelet-start, the TLS bootstrap's CSR:
  // https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-join/; estimate 60 s warm, 90 s
  // cold with the configuration written first).
  kubeadm: { install: 150, imagePulls: 120, joinWarm: 60, joinCold: 90 },
  // k3s is one binary of under 70 MB fetched by its install script (https://docs.k3s.io/quick-start,
  // https://k3s.io/): estimate 20 s; its agent pulls few images (pause, the service load balancer; flannel
  // is built in: https://docs.k3s.io/installation/airgap lists the images): estimate 30 s; the agent
  // joins with its token and node password (https://docs.k3s.io/architecture): estimate 20 s.
  k3s: { install: 20, imagePulls: 30, joinWarm: 20, joinCold: 20 },
  // rke2's install script fetches its tarball (https://docs.rke2.io/install/quickstart): estimate 45 s;
  // the agent pulls its runtime image and the CNI's (canal by default; the image list is in
  // https://docs.rke2.io/install/airgap): estimate 90 s; the agent joins with its token: estimate 40 s.
  rke2: { install: 45, imagePulls: 90, joinWarm: 40, joinCold: 40 },
};

export interface NewNodeReadySeconds {
  /** From our captured image: provision and boot, then the warm join. */
  readonly ours: number;
  /** From the pool's original image: provision and boot, install, image pulls, the cold join. */
  readonly original: number;
}

/** A new node's scale-out request → Ready and schedulable, per image, for `flavour`. */
export function newNodeReadySeconds(flavour: BootstrapFlavour): NewNodeReadySeconds {
  const parts = BOOTSTRAP_PARTS[flavour];
  return {
    ours: PROVISION_AND_BOOT_SECONDS + parts.joinWarm,
    original: PROVISION_AND_BOOT_SECONDS + parts.install + parts.imagePulls + parts.joinCold,
  };
}

/** The table for every flavour. */
export function newNodeReadyTable(): Readonly<Record<BootstrapFlavour, NewNodeReadySeconds>> {
  return Object.fromEntries(
    BOOTSTRAP_FLAVOURS.map((flavour) => [flavour, newNodeReadySeconds(flavour)]),
  ) as Record<BootstrapFlavour, NewNodeReadySeconds>;
}
