/**
 * The identity side of one simulated cluster: each VM's OS disk model (seeded per bootstrap flavour,
 * copied by snapshots and images, changed by prep scripts), what every boot reads off it, whether the
 * kubelet may then join and under which name (the kubeadm NodeRestriction check, the k3s/rke2 server's
 * node passwords), and the findings and live violations tests read (`world.identity()`).
 */
import type { ComputeState, DiskContent, InstanceInfo } from '../arm/compute-state.js';
import type { KubeObject } from '../contracts.js';
import type { WorldClock } from './clock.js';
import {
  boot,
  type IdentityFinding,
  type IdentityViolation,
  identityViolations,
  type RunningIdentity,
} from './identity.js';
import type { ImageFlavour } from './image-flavour.js';
import { bootstrapTokenError } from './kubeadm.js';
import { type BootstrapFlavour, freshDisk, hash } from './os-disk.js';

/** What a boot decided for the kubelet. */
export type KubeletOutcome =
  | { kind: 'joins'; nodeName: string }
  | { kind: 'takes-over'; nodeName: string; reason: string }
  | { kind: 'refused'; reason: string };

export interface NodeIdentityOptions {
  cluster: string;
  compute: ComputeState;
  clock: WorldClock;
  /** The pool's flavour. */
  flavourOf: (instance: InstanceInfo) => BootstrapFlavour;
  /** What the pool's OS image does at boot about host keys and the hostname (default: Ubuntu with cloud-init). */
  imageOf?: (instance: InstanceInfo) => ImageFlavour | undefined;
  /** The pool's role (a kubeadm control-plane node's disk holds static pod manifests). */
  roleOf?: (instance: InstanceInfo) => 'agent' | 'control-plane';
  /** kubeadm: the cluster's Secret `kube-system/bootstrap-token-<id>`, if it holds one. */
  bootstrapTokenSecret?: (tokenId: string) => KubeObject | undefined;
  /** The VM (id) whose node currently has this name, if any. */
  nodeOwner: (nodeName: string) => string | undefined;
}

export class NodeIdentities {
  readonly findings: IdentityFinding[] = [];
  /** The cluster's k3s/rke2 agent token (every node's config carries it). */
  readonly joinToken: string;
  private readonly running = new Map<string, RunningIdentity>();
  /** What the k3s/rke2 server holds per node name (`<node>.node-password.k3s` secrets). */
  private readonly nodePasswords = new Map<string, string>();

  constructor(private readonly options: NodeIdentityOptions) {
    this.joinToken = `K10${hash(`join-token:${options.cluster}`, 40)}::server:${hash(`server:${options.cluster}`, 24)}`;
  }

  /** Writes the disk of a node provisioned normally (seeded, or bootstrapped from a marketplace image). */
  provision(
    instance: InstanceInfo,
    images: readonly string[],
    joinedAtMs = this.options.clock.nowMs(),
  ): void {
    if (!instance.osDiskId) return;
    const flavour = this.options.flavourOf(instance);
    const customData = this.customDataOf(instance);
    const disk = freshDisk({
      vmId: instance.vmId,
      nodeName: instance.computerName.toLowerCase(),
      cluster: this.options.cluster,
      flavour,
      ...(customData === undefined ? {} : { customData }),
      joinToken: this.joinToken,
      images,
      joinedAtMs,
      image: JSON.stringify(instance.imageReference),
      role: this.options.roleOf?.(instance) ?? 'agent',
    });
    this.options.compute.setDiskContent(instance.osDiskId, disk);
    this.remember(instance, disk);
    const password = disk.files['/etc/rancher/node/password'];
    if (password !== undefined) this.nodePasswords.set(instance.computerName.toLowerCase(), password);
  }

  /** Whether the instance's disk already holds content (a gallery image's, or a provisioned one). */
  hasDisk(instance: InstanceInfo): boolean {
    return (
      instance.osDiskId !== undefined && this.options.compute.getDiskContent(instance.osDiskId) !== undefined
    );
  }

  /**
   * Boots the instance from its disk: applies what boot regenerates, records what it inherited, and
   * decides whether its kubelet can join, and as which node.
   */
  boot(instance: InstanceInfo): KubeletOutcome {
    const disk = instance.osDiskId ? this.options.compute.getDiskContent(instance.osDiskId) : undefined;
    if (!instance.osDiskId || !disk) return { kind: 'joins', nodeName: instance.computerName.toLowerCase() };
    const flavour = this.options.flavourOf(instance);
    const customData = this.customDataOf(instance);
    const image = this.options.imageOf?.(instance);
    const booted = boot(disk, {
      vmId: instance.vmId,
      computerName: instance.computerName.toLowerCase(),
      flavour,
      ...(image === undefined ? {} : { image }),
      cluster: this.options.cluster,
      ...(customData === undefined ? {} : { customData }),
      bootstrapTokenError: (token) =>
        bootstrapTokenError(
          token,
          this.options.bootstrapTokenSecret?.(token.split('.')[0] ?? ''),
          this.options.clock.nowMs(),
        ),
      nowMs: this.options.clock.nowMs(),
      joinToken: this.joinToken,
    });
    this.options.compute.setDiskContent(instance.osDiskId, booted.content);
    this.running.set(instance.vmId, {
      vmId: instance.vmId,
      machineId: booted.machineId,
      hostname: booted.hostname,
      sshHostKeys: booted.sshHostKeys,
    });
    const at = new Date(this.options.clock.nowMs()).toISOString();
    this.findings.push(...booted.findings.map((finding) => ({ ...finding, at })));
    const outcome = this.kubeletOutcome(
      instance,
      flavour,
      booted.hostname,
      booted.kubelet,
      booted.nodePassword,
    );
    if (outcome.kind !== 'joins') {
      this.findings.push({
        kind:
          outcome.kind === 'takes-over'
            ? 'takes-over-existing-node'
            : /NodeRestriction|is not allowed to modify node/.test(outcome.reason)
              ? 'kubelet-authenticates-as-another-node'
              : /password/.test(outcome.reason)
                ? 'node-password-rejected'
                : 'no-kubelet-credential',
        vmId: instance.vmId,
        nodeName: booted.hostname,
        detail: outcome.reason,
        at,
      });
    }
    return outcome;
  }

  private kubeletOutcome(
    instance: InstanceInfo,
    flavour: BootstrapFlavour,
    hostname: string,
    kubelet: { identity: string } | { refused: string },
    nodePassword: string | undefined,
  ): KubeletOutcome {
    if ('refused' in kubelet) return { kind: 'refused', reason: kubelet.refused };
    if (flavour === 'kubeadm' && kubelet.identity !== hostname) {
      // The NodeRestriction admission plugin: a node credential may only write its own Node.
      return {
        kind: 'refused',
        reason: `the kubelet authenticates as system:node:${kubelet.identity} (the client certificate under /var/lib/kubelet/pki came from that node; its CSR for system:node:${hostname}, signed by another node, is not approved); NodeRestriction: nodes "${hostname}" is forbidden: node "${kubelet.identity}" is not allowed to modify node "${hostname}"`,
      };
    }
    if ((flavour === 'k3s' || flavour === 'rke2') && nodePassword !== undefined) {
      const held = this.nodePasswords.get(hostname);
      if (held !== undefined && held !== nodePassword) {
        return {
          kind: 'refused',
          reason: `Node password rejected, duplicate hostname or contents of '/etc/rancher/node/password' may not match server node-passwd entry (node ${hostname})`,
        };
      }
      this.nodePasswords.set(hostname, nodePassword);
    }
    const owner = this.options.nodeOwner(hostname);
    if (owner !== undefined && owner !== instance.vmId) {
      return {
        kind: 'takes-over',
        nodeName: hostname,
        reason: `the machine boots as ${hostname}, the name of the running node of VM ${owner}: its kubelet writes that node's status`,
      };
    }
    return { kind: 'joins', nodeName: hostname };
  }

  /** The VM is gone (deleted): it no longer counts for violations. */
  forget(instance: InstanceInfo): void {
    this.running.delete(instance.vmId);
  }

  /** The identities of the given running VMs, for violations across clusters. */
  identitiesOf(vmIds: ReadonlySet<string>): RunningIdentity[] {
    return [...this.running.values()].filter((identity) => vmIds.has(identity.vmId));
  }

  violations(runningVmIds: ReadonlySet<string>): IdentityViolation[] {
    return identityViolations(this.identitiesOf(runningVmIds));
  }

  /** The images a node's disk holds (what its kubelet reports in status.images). */
  imagesOf(instance: InstanceInfo): string[] {
    return instance.osDiskId ? (this.options.compute.getDiskContent(instance.osDiskId)?.images ?? []) : [];
  }

  /** Keeps the disk's image store in step with what the node pulled. */
  syncImages(instance: InstanceInfo, images: readonly string[]): void {
    if (!instance.osDiskId) return;
    const merged = [...new Set(images)];
    // Every status report of every node lands here: compare with the stored list before copying the disk.
    const held = this.options.compute.peekDiskImages(instance.osDiskId);
    if (held === undefined || sameList(merged, held)) return;
    const disk = this.options.compute.getDiskContent(instance.osDiskId);
    if (!disk) return;
    this.options.compute.setDiskContent(instance.osDiskId, { ...disk, images: merged });
  }

  /** The disk of an instance, for the prep script and tests. */
  diskOf(instance: InstanceInfo): DiskContent | undefined {
    return instance.osDiskId ? this.options.compute.getDiskContent(instance.osDiskId) : undefined;
  }

  /** What the instance booted with: its own model's customData (a later model change is not applied). */
  private customDataOf(instance: InstanceInfo): string | undefined {
    return this.options.compute.getInstanceBootModel(instance.id)?.customData;
  }

  /** Seeds the running identity of a VM from its provisioned disk (no boot needed). */
  private remember(instance: InstanceInfo, disk: DiskContent): void {
    this.running.set(instance.vmId, {
      vmId: instance.vmId,
      machineId: disk.files['/etc/machine-id'] ?? '',
      hostname: disk.files['/etc/hostname'] ?? '',
      sshHostKeys: Object.entries(disk.files)
        .filter(([path]) => path.startsWith('/etc/ssh/ssh_host_'))
        .map(([, value]) => value),
    });
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
