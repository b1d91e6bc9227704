/**
 * The OS disk as a model of the files that decide a machine's identity, per bootstrap flavour: what a
 * node's disk holds when the world seeds it (machine-id, hostname, SSH host keys, cloud-init instance
 * data, waagent state, journals, the kubelet's credentials) and the path operations the prep script's
 * commands perform on it. Contents are short tokens (`vm:<id>`, `system:node:<name>`), not real keys:
 * what matters is which machine a file came from.
 */
import { createHash } from 'node:crypto';

import type { DiskContent, FilesystemIdentity } from '../arm/compute-state.js';

/** How the nodes of a pool get their kubelet credentials (a scenario field per scale set). */
export type BootstrapFlavour = 'aks-engine' | 'kubeadm' | 'k3s' | 'rke2';

export const BOOTSTRAP_FLAVOURS: readonly BootstrapFlavour[] = ['aks-engine', 'kubeadm', 'k3s', 'rke2'];

/** The identity files, by what they are. */
export const PATHS = {
  machineId: '/etc/machine-id',
  hostname: '/etc/hostname',
  sshHostKeys: ['ed25519', 'ecdsa', 'rsa'].map((type) => `/etc/ssh/ssh_host_${type}_key`),
  cloudInitInstanceId: '/var/lib/cloud/data/instance-id',
  cloudInitInstanceLink: '/var/lib/cloud/instance',
  cloudInitInstances: '/var/lib/cloud/instances',
  waagentHistory: '/var/lib/waagent/history',
  waagentEvents: '/var/lib/waagent/events',
  journal: '/var/log/journal',
  ancestry: '/var/log/vmss-prototype-ancestry.log',
  // aks-engine: one client certificate every node of the cluster shares.
  aksEngineClientCert: '/etc/kubernetes/certs/client.crt',
  aksEngineClientKey: '/etc/kubernetes/certs/client.key',
  aksEngineKubeconfig: '/var/lib/kubelet/kubeconfig',
  // kubeadm: `kubeadm join` (TLS bootstrap with a bootstrap token), then a per-node client certificate.
  kubeletConf: '/etc/kubernetes/kubelet.conf',
  bootstrapKubeletConf: '/etc/kubernetes/bootstrap-kubelet.conf',
  kubernetesManifests: '/etc/kubernetes/manifests',
  kubernetesCaCert: '/etc/kubernetes/pki/ca.crt',
  kubeletPki: '/var/lib/kubelet/pki',
  kubeletClientCurrent: '/var/lib/kubelet/pki/kubelet-client-current.pem',
  kubeletConfig: '/var/lib/kubelet/config.yaml',
  kubeadmFlags: '/var/lib/kubelet/kubeadm-flags.env',
  // k3s / rke2: a cluster join token and a per-node password.
  rancherNodePassword: '/etc/rancher/node/password',
} as const;

export function rancherConfig(flavour: 'k3s' | 'rke2'): string {
  return `/etc/rancher/${flavour}/config.yaml`;
}

export function rancherAgentDir(flavour: 'k3s' | 'rke2'): string {
  return `/var/lib/rancher/${flavour}/agent`;
}

export function hash(text: string, length = 32): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** A machine-id as systemd writes it: 32 lower-case hex digits, derived from the VM and its boot. */
export function machineIdFor(vmId: string, generation = 0): string {
  return hash(`machine-id:${vmId}:${generation}`);
}

export function sshHostKeyFor(vmId: string, path: string, generation = 0): string {
  return `SHA256:${Buffer.from(hash(`ssh:${vmId}:${path}:${generation}`, 43))
    .toString('base64')
    .slice(0, 43)}`;
}

export interface FreshDiskInput {
  vmId: string;
  /** The name the node registers under (the lower-cased computer name). */
  nodeName: string;
  cluster: string;
  flavour: BootstrapFlavour;
  /** Base64 customData the instance was provisioned with (cloud-init's user-data). */
  customData?: string;
  /** The cluster's k3s/rke2 agent token. */
  joinToken: string;
  /** Container images already on the disk. */
  images: readonly string[];
  /** When the node joined (kubeadm: when its client certificate was issued). */
  joinedAtMs: number;
  /** kubeadm: a control-plane node also holds its static pod manifests. */
  role?: 'agent' | 'control-plane';
  /**
   * What the OS image was (its reference, as text): every VM built from one image shares its root
   * filesystem's UUID, label and partition UUID, as clones of a marketplace image do.
   */
  image: string;
}

/** The root filesystem identity of an OS image (Ubuntu cloud images: ext4, `cloudimg-rootfs`, partition 1). */
export function imageFilesystem(image: string): FilesystemIdentity {
  const uuid = (seed: string): string => {
    const hex = hash(seed, 32);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  };
  return {
    type: 'ext4',
    uuid: uuid(`filesystem:${image}`),
    label: 'cloudimg-rootfs',
    partUuid: uuid(`partition:${image}`),
    partition: 1,
  };
}

/** The disk of a node that was provisioned and joined normally: its own identity everywhere. */
export function freshDisk(input: FreshDiskInput): DiskContent {
  const machineId = machineIdFor(input.vmId);
  const files: Record<string, string> = {
    [PATHS.machineId]: machineId,
    [PATHS.hostname]: input.nodeName,
    [PATHS.cloudInitInstanceId]: input.vmId,
    [PATHS.cloudInitInstanceLink]: `-> ${PATHS.cloudInitInstances}/${input.vmId}`,
    [`${PATHS.cloudInitInstances}/${input.vmId}/user-data.txt`]: input.customData ?? '',
    [`${PATHS.waagentHistory}/2026-provisioning.zip`]: `vm:${input.vmId}`,
    [`${PATHS.waagentEvents}/1700000000000.tld`]: `vm:${input.vmId}`,
    [`${PATHS.journal}/${machineId}/system.journal`]: `machine:${machineId}`,
  };
  for (const key of PATHS.sshHostKeys) files[key] = sshHostKeyFor(input.vmId, key);
  switch (input.flavour) {
    case 'aks-engine':
      files[PATHS.aksEngineClientCert] = `subject:system:nodes shared-by:${input.cluster}`;
      files[PATHS.aksEngineClientKey] = `key-of:${input.cluster}`;
      files[PATHS.aksEngineKubeconfig] = `client-certificate: ${PATHS.aksEngineClientCert}`;
      break;
    case 'kubeadm':
      // What `kubeadm join` leaves on a worker (sim/world/kubeadm.ts): bootstrap-kubelet.conf is gone again.
      writeKubeadmNode(files, input.cluster, input.nodeName, input.joinedAtMs);
      if (input.role === 'control-plane') {
        for (const component of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
          files[`${PATHS.kubernetesManifests}/${component}.yaml`] = `static-pod:${component}`;
      }
      break;
    case 'k3s':
    case 'rke2':
      files[rancherConfig(input.flavour)] = `token: ${input.joinToken}`;
      files[PATHS.rancherNodePassword] = hash(`node-password:${input.vmId}`);
      files[`${rancherAgentDir(input.flavour)}/client-kubelet.crt`] = `system:node:${input.nodeName}`;
      break;
  }
  return { files, images: [...new Set(input.images)], filesystem: imageFilesystem(input.image) };
}

/**
 * What `kubeadm join` leaves on a worker: the files of its phase kubelet-start (`writeKubeadmJoinFiles`)
 * and the kubelet's client certificate for `nodeName` from its TLS bootstrap; bootstrap-kubelet.conf is
 * removed again once kubelet.conf exists.
 */
export function writeKubeadmNode(
  files: Record<string, string>,
  cluster: string,
  nodeName: string,
  issuedAtMs: number,
): void {
  writeKubeadmJoinFiles(files, cluster);
  writeKubeletClientCert(files, nodeName, issuedAtMs);
}

/** kubeadm join phase kubelet-start: the cluster CA, the kubelet's configuration and its flags. */
export function writeKubeadmJoinFiles(files: Record<string, string>, cluster: string): void {
  files[PATHS.kubernetesCaCert] = `ca:${cluster}`;
  files[PATHS.kubeletConfig] = 'kind: KubeletConfiguration';
  files[PATHS.kubeadmFlags] =
    'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock"';
}

/** The kubelet's certificate store after a CSR for `nodeName` was issued, and the kubeconfig that uses it. */
export function writeKubeletClientCert(
  files: Record<string, string>,
  nodeName: string,
  issuedAtMs: number,
): void {
  const issued = new Date(issuedAtMs).toISOString().slice(0, 19).replaceAll(':', '-');
  files[`${PATHS.kubeletPki}/kubelet-client-${issued}.pem`] = `system:node:${nodeName}`;
  files[PATHS.kubeletClientCurrent] = `system:node:${nodeName}`;
  files[PATHS.kubeletConf] = `client-certificate: ${PATHS.kubeletClientCurrent}`;
}

/** `*` matches within one path segment, like the shell's glob. */
function segmentPattern(segment: string): RegExp {
  const escaped = segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*');
  return new RegExp(`^${escaped}$`);
}

/** The paths (files, and directories implied by them) a glob names. */
export function expandGlob(content: DiskContent, pattern: string): string[] {
  const wanted = pattern.split('/').slice(1).map(segmentPattern);
  const matches = new Set<string>();
  for (const path of Object.keys(content.files)) {
    const segments = path.split('/').slice(1);
    if (segments.length < wanted.length) continue;
    if (wanted.every((regex, index) => regex.test(segments[index] ?? ''))) {
      matches.add(`/${segments.slice(0, wanted.length).join('/')}`);
    }
  }
  return [...matches].sort();
}

/**
 * `rm -rf`: removes each matched path and everything under it. Returns the files removed. `leaves` are
 * paths `rm` fails to remove (the world's `scrub-leaves` fault): they and what is under them stay.
 */
export function removeTree(content: DiskContent, pattern: string, leaves: readonly string[] = []): string[] {
  const removed: string[] = [];
  const kept = (path: string): boolean =>
    leaves.some((leave) => path === leave || path.startsWith(`${leave}/`));
  for (const root of expandGlob(content, pattern)) {
    for (const path of Object.keys(content.files)) {
      if ((path === root || path.startsWith(`${root}/`)) && !kept(path)) {
        delete content.files[path];
        removed.push(path);
      }
    }
    // The container runtime's image store is on the same disk.
    if ((root === '/var/lib/containerd' || root.startsWith('/var/lib/containerd/')) && !kept(root))
      content.images = [];
  }
  return removed;
}

/** True when a path is a file in the model or a directory with files under it. */
export function exists(content: DiskContent, path: string): boolean {
  return path in content.files || Object.keys(content.files).some((file) => file.startsWith(`${path}/`));
}

export function filesUnder(content: DiskContent, directory: string): string[] {
  return Object.keys(content.files).filter((file) => file.startsWith(`${directory}/`));
}
