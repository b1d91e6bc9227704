/**
 * What an OS image does about SSH host keys and the hostname when a machine boots from it (a scenario
 * field per scale set, `image`), and the rules that follow (sim/README.md "Identity"):
 *
 * - with cloud-init, a new instance (the cached instance id is not this VM's) runs the per-instance
 *   module `ssh`: with `ssh_deletekeys` (default true) it deletes every host key and generates new ones,
 *   without it it only generates the missing ones (canonical/cloud-init `cloudinit/config/cc_ssh.py`);
 *   `set_hostname`/`update_hostname` set the hostname from the datasource (on Azure the VM's computer
 *   name) and write /etc/hostname unless `preserve_hostname: true` (`cc_set_hostname.py`,
 *   `cc_update_hostname.py`);
 * - without cloud-init (Flatcar with Ignition, waagent-only provisioning, cloud-init disabled) nothing
 *   replaces what the disk holds;
 * - missing host keys are generated at boot only by a generator: the image's own (`sshd-keygen` on
 *   Flatcar/RHEL: `hostKeyGeneration: when-missing`) or a unit a scrub installed (a unit running
 *   `ssh-keygen -A` that an sshd unit's drop-in pulls in); otherwise sshd starts without keys.
 */
import type { DiskContent } from '../arm/compute-state.js';
import { filesUnder, PATHS, sshHostKeyFor } from './os-disk.js';

export interface ImageFlavour {
  /** cloud-init runs at boot (default true: the sample images are Ubuntu cloud images). */
  readonly cloudInit: boolean;
  /** cloud-init's `ssh_deletekeys` (default true). */
  readonly sshDeleteKeys: boolean;
  /** cloud-init's `preserve_hostname` (default false). */
  readonly preserveHostname: boolean;
  /**
   * Whether the image itself generates missing SSH host keys at boot (`when-missing`: sshd-keygen on
   * Flatcar/RHEL) or not (`never`, Ubuntu: its ssh.service only runs `sshd -t`, which fails without keys).
   */
  readonly hostKeyGeneration: 'when-missing' | 'never';
}

export const UBUNTU_CLOUD_IMAGE: ImageFlavour = {
  cloudInit: true,
  sshDeleteKeys: true,
  preserveHostname: false,
  hostKeyGeneration: 'never',
};

/** The sshd units a drop-in can pull a key generator into (Debian/Ubuntu, Flatcar/RHEL, socket-activated). */
const SSHD_UNITS = ['ssh.service', 'sshd.service', 'sshd@.service'];
const UNIT_DIR = '/etc/systemd/system';

/**
 * The units under /etc/systemd/system that run `ssh-keygen -A` and that a drop-in of an sshd unit
 * `Wants=` (a scrub's first-boot generator; no `systemctl enable` link needed).
 */
export function installedKeyGenerators(content: DiskContent): string[] {
  const generators = Object.entries(content.files)
    .filter(([path, text]) => /^\/etc\/systemd\/system\/[^/]+\.service$/.test(path) && runsKeygen(text))
    .map(([path]) => path.slice(UNIT_DIR.length + 1));
  const wanted = new Set(
    SSHD_UNITS.flatMap((unit) =>
      filesUnder(content, `${UNIT_DIR}/${unit}.d`)
        .filter((path) => path.endsWith('.conf'))
        .flatMap((path) => directiveValues(content.files[path] ?? '', 'Wants')),
    ),
  );
  return generators.filter((unit) => wanted.has(unit));
}

function runsKeygen(unit: string): boolean {
  return directiveLines(unit, 'ExecStart').some((command) =>
    /(^|[\s/=-])ssh-keygen\s+(-\S+\s+)*-A(\s|$)/.test(command),
  );
}

/** The values of a directive (`Key=…` lines); list-valued ones (`Wants=a b`) split on whitespace. */
function directiveValues(unit: string, key: string): string[] {
  return directiveLines(unit, key)
    .flatMap((value) => value.split(/\s+/))
    .filter((value) => value !== '');
}

function directiveLines(unit: string, key: string): string[] {
  return unit
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1).trim());
}

export interface FirstBootInput {
  vmId: string;
  computerName: string;
  image: ImageFlavour;
  /** cloud-init sees a new instance (its cached instance id is not this VM's). */
  newInstance: boolean;
  /** Generation of the keys generated at this boot (identity.ts `bootGeneration`). */
  generation: number;
}

export interface FirstBootIdentity {
  hostname: string;
  /** The host keys sshd has after boot (empty: sshd has none). */
  sshHostKeys: string[];
  /** Who generated missing keys, or why none were. */
  keySource: 'kept' | 'cloud-init' | 'image-generator' | 'installed-generator' | 'none';
}

/** Applies cloud-init's `ssh` and hostname modules, or the image's generator, to the disk's files. */
export function applyFirstBoot(content: DiskContent, input: FirstBootInput): FirstBootIdentity {
  const files = content.files;
  const generate = (): void => {
    for (const key of PATHS.sshHostKeys) files[key] ??= sshHostKeyFor(input.vmId, key, input.generation);
  };
  const missing = PATHS.sshHostKeys.some((key) => files[key] === undefined);
  let keySource: FirstBootIdentity['keySource'] = 'kept';
  if (input.image.cloudInit && input.newInstance) {
    if (input.image.sshDeleteKeys) {
      for (const path of Object.keys(files)) if (path.startsWith('/etc/ssh/ssh_host_')) delete files[path];
    }
    if (input.image.sshDeleteKeys || missing) keySource = 'cloud-init';
    generate();
  } else if (missing) {
    if (input.image.hostKeyGeneration === 'when-missing') keySource = 'image-generator';
    else if (installedKeyGenerators(content).length > 0) keySource = 'installed-generator';
    else keySource = 'none';
    if (keySource !== 'none') generate();
  }
  const onDisk = (files[PATHS.hostname] ?? '').trim();
  const hostname =
    input.image.cloudInit && !input.image.preserveHostname
      ? input.computerName
      : onDisk || input.computerName;
  files[PATHS.hostname] = hostname;
  const sshHostKeys = PATHS.sshHostKeys.map((key) => files[key] ?? '').filter((key) => key !== '');
  return { hostname, sshHostKeys, keySource };
}
