/**
 * The script the one-shot prep pod runs in the host's namespaces before the OS disk is captured
 * (DESIGN.md §2 step 4d; kamino's `image_tweaks`). It makes the disk boot as a new machine: cloud-init
 * and the Azure agent must treat every clone as a fresh instance, and nothing that identifies the
 * donor may survive. The last command powers the host off, so the script must be idempotent and quick.
 */

export interface PrepScriptInput {
  /** One line appended to /var/log/vmss-prototype-ancestry.log: which node, run and time built this image. */
  readonly ancestry: string;
}

/** Paths removed so that clones re-run provisioning and get their own identity. */
const PREP_REMOVED_PATHS: readonly string[] = [
  // The hostname comes from osProfile/DHCP on the clone; a stale file would name every clone after the donor.
  '/etc/hostname',
  // cloud-init decides "new instance" by instance id; without its cache it runs per-instance modules again.
  '/var/lib/cloud/data/*',
  '/var/lib/cloud/instance',
  '/var/lib/cloud/instances/*',
  // The Azure Linux agent's provisioning history and event queue belong to the donor VM.
  '/var/lib/waagent/history/*',
  '/var/lib/waagent/events/*',
  // Journals of the donor: noise on every clone, and they can contain secrets from the donor's workloads.
  '/var/log/journal/*',
];

/** Quotes a string for a POSIX shell single-quoted context. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}

/**
 * Builds the script. `machine-id` is emptied (not removed): systemd regenerates an empty one at first
 * boot, while a missing file makes some distributions boot read-only. `systemctl poweroff --force`
 * stops the VM without waiting for the kubelet; the node was drained before.
 */
export function buildPrepScript(input: PrepScriptInput): string {
  const ancestry = input.ancestry.replaceAll(/[\r\n]+/g, ' ');
  return [
    'set -eu',
    `echo ${shellQuote(ancestry)} >> /var/log/vmss-prototype-ancestry.log`,
    `rm -rf ${PREP_REMOVED_PATHS.join(' ')}`,
    'truncate -s 0 /etc/machine-id',
    'sync',
    'systemctl poweroff --force --message=vmss-prototype',
  ].join('\n');
}
