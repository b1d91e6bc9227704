/**
 * The first-boot SSH host key generator the scrub installs with the image. The scrub removes the donor's
 * host keys (`/etc/ssh/ssh_host_*`, bootstrap-flavour.ts) so that no clone presents them; what creates
 * new ones depends on the image: cloud-init's per-instance `ssh` module on a new instance
 * (canonical/cloud-init `cloudinit/config/cc_ssh.py`), `sshd-keygen` on Flatcar and RHEL. An image with
 * neither (Ubuntu with cloud-init disabled, waagent-only provisioning) would boot with sshd refusing to
 * start (`sshd: no hostkeys available -- exiting`). So the scrub installs a oneshot unit that runs
 * `ssh-keygen -A` (creates only the missing key types) when no host key exists, and drop-ins that make
 * every sshd unit (`ssh.service` on Debian/Ubuntu, `sshd.service` on Flatcar/RHEL, `sshd@.service` for
 * socket activation) want it and start after it. Drop-ins need no `systemctl enable` link; a drop-in for
 * a unit the image does not have is ignored. Ordered after cloud-init, so where cloud-init generated keys
 * the unit's condition skips it. docs/design.md#capture says what an operator sees.
 */

/** The unit's name (under /etc/systemd/system). */
export const HOST_KEY_GENERATOR_UNIT = 'vmss-prototype-ssh-host-keys.service';

/** The sshd units whose drop-in pulls the generator in. */
export const SSHD_UNITS: readonly string[] = ['ssh.service', 'sshd.service', 'sshd@.service'];

export const HOST_KEY_GENERATOR_LINES: readonly string[] = [
  '[Unit]',
  'Description=Generate missing SSH host keys (vmss-prototype: the image was captured without any)',
  'ConditionPathExistsGlob=!/etc/ssh/ssh_host_*_key',
  'After=cloud-init.service cloud-init-network.service',
  '[Service]',
  'Type=oneshot',
  'ExecStart=/usr/bin/ssh-keygen -A',
];

export const SSHD_DROP_IN_LINES: readonly string[] = [
  '[Unit]',
  `Wants=${HOST_KEY_GENERATOR_UNIT}`,
  `After=${HOST_KEY_GENERATOR_UNIT}`,
];

/** Single-quotes each line for `printf '%s\n' …`. */
function quoted(lines: readonly string[]): string {
  return lines.map((line) => `'${line.replaceAll("'", `'"'"'`)}'`).join(' ');
}

/** The commands that install the generator under `root` (`''`: the host's own `/`). */
export function hostKeyGeneratorCommands(root: string): string[] {
  const units = `${root}/etc/systemd/system`;
  const dropIn = (unit: string): string =>
    `${units}/${unit}.d/${HOST_KEY_GENERATOR_UNIT.replace(/\.service$/, '.conf')}`;
  return [
    `mkdir -p ${SSHD_UNITS.map((unit) => `${units}/${unit}.d`).join(' ')}`,
    `printf '%s\\n' ${quoted(HOST_KEY_GENERATOR_LINES)} > ${units}/${HOST_KEY_GENERATOR_UNIT}`,
    ...SSHD_UNITS.map((unit) => `printf '%s\\n' ${quoted(SSHD_DROP_IN_LINES)} > ${dropIn(unit)}`),
  ];
}
