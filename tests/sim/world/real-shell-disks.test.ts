/**
 * Live capture's host scripts in the real shell, over a host with its OS disk's copy attached
 * (sim/world/real-shell-disks.ts with the device stand-ins of host-stand-ins-disks.ts): the product's
 * scrub removes the copy's identity and leaves the donor's disk as it was; the copy guard's unit script
 * gives a duplicate of the root temporary identifiers only while the host stops; mounts and the host's
 * /run persist between runs; the stand-ins refuse what the real tools refuse; and it is a real shell.
 * Without bwrap they skip (under CI=true they fail: bwrap-gate.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { BootstrapFlavour } from '../../../shared/domain/bootstrap-flavour.js';
import {
  buildCopyGuardScript,
  buildScrubScript,
  type CopyGuardInput,
  temporaryIdentifiersFor,
} from '../../../shared/domain/live-capture.js';
import type { DiskContent } from '../../../sim/arm/compute-state.js';
import type { HostModel } from '../../../sim/world/host-commands.js';
import { freshDisk, PATHS } from '../../../sim/world/os-disk.js';
import { applyRun, runOnHost } from '../../../sim/world/real-shell-run.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const LUN = 2;
const DEVICE = `/dev/disk/azure/scsi1/lun${LUN}`;
const MOUNT = '/run/vmss-prototype/copy-abc';
const TEMPORARY = temporaryIdentifiersFor('run-1\u0000copy');
const NSENTER = ['/usr/bin/nsenter', '-t', '1', '-m', '--', '/bin/sh', '-c'];

function donorDisk(flavour: BootstrapFlavour, type: 'ext4' | 'xfs' = 'ext4'): DiskContent {
  const disk = freshDisk({
    vmId: 'vm-1',
    nodeName: 'node-1',
    cluster: 'prod',
    flavour,
    joinToken: 'token',
    images: ['busybox:1'],
    joinedAtMs: NOW,
    image: 'ubuntu-2204',
  });
  // An XFS label has at most 12 characters.
  if (disk.filesystem && type === 'xfs') disk.filesystem = { ...disk.filesystem, type, label: 'rootfs' };
  return disk;
}

/** The donor with a crash-consistent copy of its OS disk attached at LUN. */
function hostWithCopy(root: DiskContent): HostModel {
  const copy = structuredClone(root);
  if (copy.filesystem) copy.filesystem.needsRecovery = true;
  return {
    root,
    dataDisks: new Map([[LUN, { diskId: 'copy-disk', content: copy }]]),
    mounts: new Map(),
    frozen: false,
    units: new Map(),
    tmpfs: {},
    systemState: 'running',
  };
}

/** Runs the script on the host and applies what it did, as the world does. */
function runScript(host: HostModel, script: string, argv = NSENTER) {
  const result = runOnHost([...argv, script], host, 'node-1', NOW);
  const effects = applyRun(host, result);
  return { result, effects };
}

function copyOf(host: HostModel): DiskContent {
  const copy = host.dataDisks.get(LUN)?.content;
  assert.ok(copy);
  return copy;
}

const GUARD: CopyGuardInput = {
  unit: 'vmssp-copy-guard-abc',
  scriptPath: '/run/vmss-prototype/copy-guard-abc.sh',
  lun: LUN,
  rootPartition: 1,
  temporary: TEMPORARY,
  maxSeconds: 3600,
  mountPoint: MOUNT,
};

void describe("live capture's scrub in the real shell", () => {
  for (const [flavour, type] of [
    ['k3s', 'ext4'],
    ['aks-engine', 'xfs'],
  ] as const) {
    void it(`${flavour} on ${type}: the copy's identity files are gone, the donor's disk is untouched`, (t) => {
      if (skipWithoutBwrap(t)) return;
      const root = donorDisk(flavour, type);
      const donorBefore = structuredClone(root);
      const host = hostWithCopy(root);
      const script = buildScrubScript({
        ancestry: 'built by live capture',
        flavour,
        lun: LUN,
        rootPartition: 1,
        mountPoint: MOUNT,
        temporary: TEMPORARY,
      });
      const { result, effects } = runScript(host, script);
      assert.ok(result.ok, `${result.error ?? ''}\n${result.output}`);

      const copy = copyOf(host);
      assert.equal(copy.files[PATHS.machineId], '', 'the copy machine-id is emptied');
      assert.equal(copy.files[PATHS.hostname], undefined, 'the copy hostname is removed');
      for (const key of PATHS.sshHostKeys) assert.equal(copy.files[key], undefined, key);
      assert.equal(copy.files['/var/log/vmss-prototype-ancestry.log'], 'built by live capture\n');
      assert.ok(effects.writtenDisks.has('copy-disk'));
      assert.ok(effects.changed.includes(PATHS.hostname));
      // The copy's identifiers are the root's again (clones boot by them); its journal was replayed.
      assert.deepEqual(copy.filesystem, donorBefore.filesystem);
      // The donor's disk: not one file changed.
      assert.deepEqual(root, donorBefore);
      assert.equal(effects.rootWritten, false);
      assert.deepEqual(result.changed, []);
      // Nothing is left mounted: the EXIT trap and the last umount ran for real.
      assert.deepEqual([...host.mounts], []);
      assert.ok(result.requests.some((line) => line.startsWith(`mount -o nouuid ${DEVICE}-part1 ${MOUNT}`)));
    });
  }

  void it('a scrub whose copy is not the root stops before removing anything', (t) => {
    if (skipWithoutBwrap(t)) return;
    const root = donorDisk('k3s');
    const host = hostWithCopy(root);
    const copy = copyOf(host);
    if (copy.filesystem) copy.filesystem.uuid = '00000000-0000-4000-a000-000000000000';
    const before = structuredClone(copy);
    const { result } = runScript(
      host,
      buildScrubScript({
        ancestry: 'x',
        flavour: 'k3s',
        lun: LUN,
        rootPartition: 1,
        mountPoint: MOUNT,
        temporary: TEMPORARY,
      }),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(copyOf(host), before);
  });
});

void describe("live capture's copy guard in the real shell", () => {
  void it("installs its unit and script on the host's /run; its ExecStop acts only while the host stops", (t) => {
    if (skipWithoutBwrap(t)) return;
    const root = donorDisk('kubeadm');
    const host: HostModel = { ...hostWithCopy(root), dataDisks: new Map() };
    const { result, effects } = runScript(host, buildCopyGuardScript(GUARD));
    assert.ok(result.ok, result.error);
    assert.deepEqual(effects.startedUnits, ['vmssp-copy-guard-abc.service']);
    const unit = host.units.get('vmssp-copy-guard-abc.service');
    assert.deepEqual(unit, {
      kind: 'service',
      execStop: `/bin/sh ${GUARD.scriptPath}`,
      runtimeMaxSeconds: 3600,
    });
    assert.match(host.tmpfs[GUARD.scriptPath] ?? '', /^STATE=\$\(systemctl is-system-running \|\| true\)\n/);

    // The copy is attached later; the unit's ExecStop is run by the host's systemd (no nsenter).
    const copy = structuredClone(root);
    host.dataDisks.set(LUN, { diskId: 'copy-disk', content: copy });
    const execStop = unit?.kind === 'service' ? (unit.execStop ?? '') : '';
    const stopped = runScript(host, execStop, ['/bin/sh', '-c']);
    assert.ok(stopped.result.ok, stopped.result.error);
    assert.deepEqual(copyOf(host).filesystem, root.filesystem, 'running: the guard changes nothing');

    host.systemState = 'stopping';
    const shutdown = runScript(host, execStop, ['/bin/sh', '-c']);
    assert.ok(shutdown.result.ok, shutdown.result.error);
    assert.equal(copyOf(host).filesystem?.uuid, TEMPORARY.filesystemUuid);
    assert.equal(copyOf(host).filesystem?.label, TEMPORARY.label);
    assert.equal(copyOf(host).filesystem?.partUuid, TEMPORARY.partitionUuid);
    assert.notEqual(root.filesystem?.uuid, TEMPORARY.filesystemUuid, "the root's own are kept");
  });
});

void describe('real shell: data disks, mounts and the host /run between runs', () => {
  void it('a mount persists to the next run, which reads the disk through it; umount ends it', (t) => {
    if (skipWithoutBwrap(t)) return;
    const host = hostWithCopy(donorDisk('k3s'));
    const first = runScript(host, `mkdir -p /run/m && mount ${DEVICE}-part1 /run/m && echo kept > /run/note`);
    assert.ok(first.result.ok, first.result.error);
    assert.deepEqual([...host.mounts], [['/run/m', 'copy-disk']]);
    assert.equal(host.tmpfs['/run/note'], 'kept\n');
    assert.equal(copyOf(host).filesystem?.needsRecovery, undefined, 'the mount replayed the journal');

    const second = runScript(host, 'cat /run/note /run/m/etc/hostname && umount /run/m');
    assert.ok(second.result.ok, second.result.error);
    assert.equal(second.result.output, 'kept\nnode-1');
    assert.deepEqual([...host.mounts], []);
  });

  const refusals: [string, string, RegExp][] = [
    [
      'ext4 mounted with nouuid',
      `mount -o nouuid ${DEVICE}-part1 /run`,
      /unrecognized mount option "nouuid"/,
    ],
    ['a LUN with no disk', 'blkid -s UUID -o value /dev/disk/azure/scsi1/lun9-part1', /no disk at LUN 9/],
    ['a partition with no filesystem', `mount ${DEVICE}-part3 /run`, /wrong fs type/],
    [
      'tune2fs on a copy whose journal needs recovery',
      `tune2fs -U ${TEMPORARY.filesystemUuid} ${DEVICE}-part1`,
      /journal needs recovery/,
    ],
    [
      'xfs_admin on ext4',
      `xfs_admin -U ${TEMPORARY.filesystemUuid} ${DEVICE}-part1`,
      /not an xfs filesystem/,
    ],
    [
      'sfdisk on a partition',
      `sfdisk --part-uuid ${DEVICE}-part1 1 ${TEMPORARY.partitionUuid}`,
      /not a whole disk/,
    ],
  ];
  for (const [name, script, message] of refusals) {
    void it(`refuses ${name} as the real tool does`, (t) => {
      if (skipWithoutBwrap(t)) return;
      const host = hostWithCopy(donorDisk('k3s'));
      const before = structuredClone(copyOf(host));
      const { result } = runScript(host, `set -e; ${script}`);
      assert.equal(result.ok, false);
      assert.match(result.error ?? '', message);
      assert.deepEqual(copyOf(host), before);
    });
  }

  void it('XFS: a copy with the root filesystem UUID mounts only with nouuid', (t) => {
    if (skipWithoutBwrap(t)) return;
    const host = hostWithCopy(donorDisk('k3s', 'xfs'));
    const plain = runScript(host, `set -e; mount ${DEVICE}-part1 /run`);
    assert.match(plain.result.error ?? '', /duplicate UUID/);
    const nouuid = runScript(host, `set -e; mkdir -p /run/c; mount -o nouuid ${DEVICE}-part1 /run/c`);
    assert.ok(nouuid.result.ok, nouuid.result.error);
  });

  void it("a bashism or a typo fails with the shell's own error: it is a real shell", (t) => {
    if (skipWithoutBwrap(t)) return;
    const host = hostWithCopy(donorDisk('k3s'));
    const bashism = runScript(host, `set -e; [[ -e ${DEVICE} ]]; blkid -s UUID -o value ${DEVICE}-part1`);
    assert.equal(bashism.result.ok, false);
    assert.match(bashism.result.error ?? '', /\[\[: not found/);
    const typo = runScript(host, `set -e; mkdir -p /run/c; moutn ${DEVICE}-part1 /run/c`);
    assert.equal(typo.result.ok, false);
    assert.match(typo.result.error ?? '', /moutn: not found/);
  });
});
