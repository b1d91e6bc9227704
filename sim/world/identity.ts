/**
 * What a machine is at boot, read from its OS disk model, and whether its kubelet can join as itself,
 * per bootstrap flavour. The rules (sim/README.md "Identity"):
 *
 * - machine-id: systemd writes a new one only when /etc/machine-id is empty or missing;
 * - hostname and SSH host keys follow the image's flavour (image-flavour.ts): cloud-init's per-instance
 *   `ssh` module and its hostname modules on a new instance, else what the disk holds; missing keys are
 *   generated only where the image (or a scrub) has a generator, else sshd has none (`no-ssh-host-keys`);
 * - cloud-init: an instance id cached for another VM means the donor's instance data (its user-data)
 *   is still on the disk;
 * - waagent state and journals written by another VM are the donor's, inherited;
 * - kubelet credentials per flavour: aks-engine joins under its hostname with the cluster's shared
 *   client certificate; kubeadm: a new cloud-init instance whose customData runs `kubeadm join` runs
 *   its preflight checks (leftover kubelet.conf, bootstrap-kubelet.conf, cluster CA, static pod
 *   manifests, a kubelet already listening fail it) and its token discovery (the token must name an
 *   unexpired Secret of the cluster), then the kubelet authenticates with the client certificate on the
 *   disk (the donor's, on a clone: NodeRestriction forbids registering another name) or TLS-bootstraps
 *   one for its own name (sim/world/kubeadm.ts); k3s/rke2 join with the cluster token and present
 *   /etc/rancher/node/password, which must match what the server holds for that node name (a new
 *   password is generated when the file is missing).
 */
import type { DiskContent } from '../arm/compute-state.js';
import { applyFirstBoot, type ImageFlavour, UBUNTU_CLOUD_IMAGE } from './image-flavour.js';
import { kubeadmJoinOf, runKubeadmJoin, startKubelet } from './kubeadm.js';
import {
  type BootstrapFlavour,
  exists,
  filesUnder,
  hash,
  machineIdFor,
  PATHS,
  rancherConfig,
} from './os-disk.js';

/** Something a booted machine carries that belongs to another machine, or a join that failed. */
export interface IdentityFinding {
  kind:
    | 'inherited-cloud-init-instance'
    | 'inherited-waagent-state'
    | 'inherited-journal'
    | 'no-ssh-host-keys'
    | 'kubelet-authenticates-as-another-node'
    | 'kubeadm-preflight-failed'
    | 'bootstrap-token-rejected'
    | 'no-kubelet-credential'
    | 'node-password-rejected'
    | 'takes-over-existing-node';
  /** The VM it was found on. */
  vmId: string;
  nodeName: string;
  detail: string;
  at: string;
}

export interface BootInput {
  vmId: string;
  /** The VM's computer name, lower-cased (what the node is called when /etc/hostname is absent). */
  computerName: string;
  flavour: BootstrapFlavour;
  /** What the OS image does at boot about host keys and the hostname (default: an Ubuntu cloud image). */
  image?: ImageFlavour;
  /** The cluster's name (what its CA is). */
  cluster: string;
  /** The instance's own customData (base64), which a new cloud-init instance runs. */
  customData?: string;
  /**
   * kubeadm: why the cluster refuses a bootstrap token now (kubeadm's wording), or undefined when it
   * names an unexpired token Secret of the cluster.
   */
  bootstrapTokenError: (token: string) => string | undefined;
  /** Simulated now, for the certificates the kubelet is issued. */
  nowMs: number;
  /** The cluster's k3s/rke2 agent token. */
  joinToken: string;
}

export interface Boot {
  content: DiskContent;
  machineId: string;
  hostname: string;
  sshHostKeys: string[];
  findings: Omit<IdentityFinding, 'at'>[];
  /** The node name the kubelet authenticates as, or why it has no credential. */
  kubelet: { identity: string } | { refused: string };
  /** k3s/rke2: the node password the agent presents. */
  nodePassword?: string;
}

/** Applies what happens at boot to the disk, and reads the machine's identity off it. */
export function boot(disk: DiskContent, input: BootInput): Boot {
  const content: DiskContent = structuredClone(disk);
  const files = content.files;
  const findings: Boot['findings'] = [];
  const finding = (kind: IdentityFinding['kind'], detail: string, nodeName: string): void => {
    findings.push({ kind, vmId: input.vmId, nodeName, detail });
  };

  if ((files[PATHS.machineId] ?? '') === '')
    files[PATHS.machineId] = machineIdFor(input.vmId, bootGeneration(files));
  const machineId = files[PATHS.machineId] ?? '';
  // cloud-init: the cached instance id names the instance the cache belongs to.
  const cached = files[PATHS.cloudInitInstanceId];
  const foreign = filesUnder(content, PATHS.cloudInitInstances).filter(
    (path) => !path.startsWith(`${PATHS.cloudInitInstances}/${input.vmId}/`),
  );
  const newInstance = cached !== input.vmId;
  const image = input.image ?? UBUNTU_CLOUD_IMAGE;
  const { hostname, sshHostKeys } = applyFirstBoot(content, {
    vmId: input.vmId,
    computerName: input.computerName,
    image,
    newInstance,
    generation: bootGeneration(files),
  });
  if (sshHostKeys.length === 0) {
    finding(
      'no-ssh-host-keys',
      `sshd has no host keys: /etc/ssh/ssh_host_* are missing, ${image.cloudInit ? 'cloud-init ran no ssh module (not a new instance)' : 'the image has no cloud-init'} and no key generator (sshd-keygen, or a unit running ssh-keygen -A) runs at boot: sshd: no hostkeys available -- exiting`,
      hostname,
    );
  }
  if (foreign.length > 0 || (cached !== undefined && cached !== input.vmId)) {
    finding(
      'inherited-cloud-init-instance',
      `cloud-init instance data of another machine (${cached ?? foreign[0] ?? ''}) is on the disk, its user-data included`,
      hostname,
    );
  }
  if (newInstance) {
    files[PATHS.cloudInitInstanceId] = input.vmId;
    files[PATHS.cloudInitInstanceLink] = `-> ${PATHS.cloudInitInstances}/${input.vmId}`;
    files[`${PATHS.cloudInitInstances}/${input.vmId}/user-data.txt`] = input.customData ?? '';
  }
  const waagent = [
    ...filesUnder(content, PATHS.waagentHistory),
    ...filesUnder(content, PATHS.waagentEvents),
  ].filter((path) => files[path] !== `vm:${input.vmId}`);
  if (waagent.length > 0) {
    finding(
      'inherited-waagent-state',
      `waagent history/events of another VM: ${waagent.join(', ')}`,
      hostname,
    );
  }
  const journals = filesUnder(content, PATHS.journal).filter(
    (path) => !path.startsWith(`${PATHS.journal}/${machineId}/`),
  );
  if (journals.length > 0) {
    finding(
      'inherited-journal',
      `journals written under another machine-id: ${journals.join(', ')}`,
      hostname,
    );
  }
  files[`${PATHS.journal}/${machineId}/system.journal`] = `machine:${machineId}`;

  const result: Boot = { content, machineId, hostname, sshHostKeys, findings, kubelet: { refused: '' } };
  switch (input.flavour) {
    case 'aks-engine':
      result.kubelet =
        exists(content, PATHS.aksEngineClientCert) && exists(content, PATHS.aksEngineKubeconfig)
          ? { identity: hostname }
          : {
              refused: `no kubelet credential: ${PATHS.aksEngineClientCert} (the cluster's shared client certificate) is missing`,
            };
      break;
    case 'kubeadm': {
      // cloud-init runs the new instance's customData; a kubeadm join in it goes first, then the kubelet.
      const join = newInstance
        ? kubeadmJoinOf(Buffer.from(input.customData ?? '', 'base64').toString('utf8'))
        : undefined;
      const joined =
        join === undefined
          ? undefined
          : runKubeadmJoin(content, join, input.cluster, input.bootstrapTokenError);
      if (joined !== undefined && joined.kind !== 'joined') finding(joined.kind, joined.detail, hostname);
      result.kubelet = startKubelet(content, hostname, input.nowMs, input.bootstrapTokenError);
      // kubeadm join phase kubelet-start: once the kubelet has its kubeconfig the bootstrap one goes.
      if (joined?.kind === 'joined' && exists(content, PATHS.kubeletConf))
        delete files[PATHS.bootstrapKubeletConf];
      break;
    }
    case 'k3s':
    case 'rke2': {
      if (!(files[rancherConfig(input.flavour)] ?? '').includes(`token: ${input.joinToken}`)) {
        result.kubelet = { refused: `no join token: ${rancherConfig(input.flavour)} is missing` };
        break;
      }
      files[PATHS.rancherNodePassword] ??= hash(`node-password:${input.vmId}:${bootGeneration(files)}`);
      result.nodePassword = files[PATHS.rancherNodePassword];
      result.kubelet = { identity: hostname };
      break;
    }
  }
  return result;
}

/**
 * Identities generated at boot use generation 1, so a donor whose prep emptied them gets new ones
 * (its seeded ones are generation 0), and every clone gets its own (they derive from its VM id).
 */
function bootGeneration(_files: Record<string, string>): number {
  return 1;
}

/** A duplicated identity across running VMs (machine-id, hostname or SSH host key). */
export interface IdentityViolation {
  kind: 'duplicate-machine-id' | 'duplicate-hostname' | 'duplicate-ssh-host-key';
  value: string;
  /** The VMs (vmIds) that share it. */
  vmIds: string[];
}

export interface RunningIdentity {
  vmId: string;
  machineId: string;
  hostname: string;
  sshHostKeys: string[];
}

export function identityViolations(running: readonly RunningIdentity[]): IdentityViolation[] {
  const violations: IdentityViolation[] = [];
  const group = (kind: IdentityViolation['kind'], valuesOf: (vm: RunningIdentity) => string[]): void => {
    const owners = new Map<string, Set<string>>();
    for (const vm of running) {
      for (const value of valuesOf(vm)) {
        if (value === '') continue;
        owners.set(value, (owners.get(value) ?? new Set()).add(vm.vmId));
      }
    }
    for (const [value, vmIds] of owners) {
      if (vmIds.size > 1) violations.push({ kind, value, vmIds: [...vmIds].sort() });
    }
  };
  group('duplicate-machine-id', (vm) => [vm.machineId]);
  group('duplicate-hostname', (vm) => [vm.hostname]);
  group('duplicate-ssh-host-key', (vm) => vm.sshHostKeys);
  return violations;
}
