/** Live capture's scripts (freeze with its guards, scrub of the copy) and the reaper's plan for leftovers. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { identityPlan } from '../../../shared/domain/bootstrap-flavour.js';
import {
  buildCopyGuardScript,
  buildFreezeScript,
  buildScrubScript,
  dataDiskDevice,
  derivedGuid,
  freeLun,
  temporaryIdentifiersFor,
} from '../../../shared/domain/live-capture.js';
import { LIVE_POD_GRACE_SECONDS, planLiveLeftovers } from '../../../shared/domain/live-leftovers.js';

const TEMPORARY = temporaryIdentifiersFor('run-1\u0000copy');

function freezeInput(change: Partial<Parameters<typeof buildFreezeScript>[0]> = {}) {
  return {
    unit: 'vmssp-thaw-abc',
    holdSeconds: 10,
    guardSeconds: 40,
    copyGuard: {
      unit: 'vmssp-copy-guard-abc',
      scriptPath: '/run/vmss-prototype/copy-guard-abc.sh',
      lun: 2,
      rootPartition: 1,
      temporary: TEMPORARY,
      maxSeconds: 3600,
      mountPoint: '/run/vmss-prototype/copy-abc',
    },
    ...change,
  };
}

void describe('LUNs and identifiers', () => {
  const luns: [number[], number | undefined][] = [
    [[], 0],
    [[0, 1, 3], 2],
    [[1], 0],
    [Array.from({ length: 64 }, (_, lun) => lun), undefined],
  ];
  for (const [used, expected] of luns) {
    void it(`free LUN with ${used.length} used → ${String(expected)}`, () =>
      assert.equal(freeLun(used.map((lun) => ({ lun }))), expected));
  }
  void it('addresses SCSI data disks by LUN and refuses out-of-range ones', () => {
    assert.equal(dataDiskDevice(5), '/dev/disk/azure/scsi1/lun5');
    assert.throws(() => dataDiskDevice(64), /out of range/);
    assert.throws(() => dataDiskDevice(-1), /out of range/);
  });
  void it('derives stable, distinct GUIDs (a retried scrub agrees with the first attempt)', () => {
    assert.equal(derivedGuid('a'), derivedGuid('a'));
    assert.notEqual(derivedGuid('a'), derivedGuid('b'));
    assert.match(derivedGuid('a'), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(TEMPORARY.filesystemUuid, TEMPORARY.partitionUuid);
  });
});

void describe('buildFreezeScript', () => {
  void it('installs the copy guard and the thaw timer before freezing; TERM thaws at once', () => {
    const lines = buildFreezeScript(freezeInput()).split('\n');
    const index = (prefix: string): number => lines.findIndex((line) => line.startsWith(prefix));
    const guard = index('systemd-run --quiet --unit=vmssp-copy-guard-abc');
    const timer = index('systemd-run --quiet --unit=vmssp-thaw-abc --on-active=40 fsfreeze --unfreeze /');
    const trap = index("trap 'fsfreeze --unfreeze /; systemctl stop vmssp-thaw-abc.timer; exit 0' TERM INT");
    const freeze = lines.indexOf('fsfreeze --freeze /');
    assert.ok(guard > 0 && timer > guard && trap > timer && freeze > trap, lines.join('\n'));
    assert.deepEqual(lines.slice(freeze + 1), [
      'sleep 10 &',
      'wait',
      'fsfreeze --unfreeze /',
      'systemctl stop vmssp-thaw-abc.timer',
    ]);
    assert.match(
      lines[guard] ?? '',
      /RuntimeMaxSec=3600 -p "ExecStop=\/bin\/sh \/run\/vmss-prototype\/copy-guard-abc\.sh"/,
    );
    // The guard acts only while the system stops, only on a duplicate of the root at the copy's LUN.
    const guardScript = lines.filter((line) => line.startsWith('echo ')).join('\n');
    assert.match(guardScript, /\[ "\$STATE" = stopping \] \|\| exit 0/);
    assert.match(guardScript, /blkid -s UUID -o value \/dev\/disk\/azure\/scsi1\/lun2-part1/);
    assert.match(guardScript, new RegExp(`tune2fs -U ${TEMPORARY.filesystemUuid} -L vmssp-copy`));
    assert.ok(
      guardScript.indexOf('umount /run/vmss-prototype/copy-abc || true') < guardScript.indexOf('tune2fs'),
      'the guard unmounts the copy before changing its identifiers',
    );
  });

  const refused: [string, Partial<Parameters<typeof buildFreezeScript>[0]>, RegExp][] = [
    ['a unit name with a space', { unit: 'bad unit' }, /not a unit name/],
    ['a guard that does not outlast the hold', { guardSeconds: 10 }, /guard must outlast the hold/],
    ['no hold', { holdSeconds: 0, guardSeconds: 5 }, /guard must outlast the hold/],
    [
      'a guard script outside /run/vmss-prototype',
      { copyGuard: { ...freezeInput().copyGuard, scriptPath: '/etc/guard.sh' } },
      /not under \/run\/vmss-prototype/,
    ],
  ];
  for (const [name, change, message] of refused) {
    void it(`refuses ${name}`, () => assert.throws(() => buildFreezeScript(freezeInput(change)), message));
  }
});

void describe('buildCopyGuardScript', () => {
  void it('installs the same copy guard as the freeze pod, and neither freezes nor waits', () => {
    const guard = buildCopyGuardScript(freezeInput().copyGuard).split('\n');
    const freeze = buildFreezeScript(freezeInput()).split('\n');
    assert.equal(guard[0], 'set -eu');
    // Every line of the guard's install is the freeze pod's, in the same order.
    assert.deepEqual(guard.slice(1), freeze.slice(1, guard.length));
    assert.ok(guard.at(-1)?.startsWith('systemd-run --quiet --unit=vmssp-copy-guard-abc'));
    assert.ok(!guard.some((line) => /fsfreeze|sleep|wait/.test(line)), guard.join('\n'));
  });

  void it('refuses a guard script outside /run/vmss-prototype', () => {
    assert.throws(
      () => buildCopyGuardScript({ ...freezeInput().copyGuard, scriptPath: '/etc/guard.sh' }),
      /building the copy guard: \/etc\/guard\.sh is not under \/run\/vmss-prototype/,
    );
  });
});

void describe('buildScrubScript', () => {
  const input = {
    ancestry: "built 2026.1123.1 from node-1 (run 'r')",
    flavour: 'k3s' as const,
    lun: 3,
    rootPartition: 1,
    mountPoint: '/run/vmss-prototype/copy-abc',
    temporary: TEMPORARY,
  };

  void it('checks the copy is the root, gives it temporary identifiers, scrubs under the mount, restores them', () => {
    const lines = buildScrubScript(input).split('\n');
    const root = '/dev/disk/azure/scsi1/lun3-part1';
    const at = (line: string): number => {
      const found = lines.indexOf(line);
      assert.ok(found >= 0, `missing: ${line}\n${lines.join('\n')}`);
      return found;
    };
    const same = at('[ "$ROOT_UUID" = "$HOST_UUID" ]');
    const temporary = at(
      `tune2fs -U ${TEMPORARY.filesystemUuid} -L vmssp-copy ${root} || xfs_admin -U ${TEMPORARY.filesystemUuid} -L vmssp-copy ${root}`,
    );
    const proof = at('cmp -s /etc/machine-id /run/vmss-prototype/copy-abc/etc/machine-id');
    const restore = at(
      `tune2fs -U "$ROOT_UUID" -L "$ROOT_LABEL" ${root} || xfs_admin -U "$ROOT_UUID" -L "$ROOT_LABEL" ${root}`,
    );
    assert.ok(same < temporary && temporary < proof && proof < restore);
    assert.equal(lines.at(-1), `sfdisk --part-uuid /dev/disk/azure/scsi1/lun3 1 "$ROOT_PARTUUID"`);
    // The flavour's de-identification, every path under the mount point, never the host's own files.
    const plan = identityPlan('k3s');
    const removal = lines.find((line) => line.startsWith('rm -rf '));
    for (const path of plan.removes)
      assert.ok(removal?.includes(` /run/vmss-prototype/copy-abc${path}`), path);
    assert.ok(!/ \/etc\/machine-id\b/.test(removal ?? ''), 'the host machine-id is not removed');
    for (const path of plan.empties)
      assert.ok(lines.includes(`truncate -s 0 /run/vmss-prototype/copy-abc${path}`));
    assert.ok(
      lines.some((line) =>
        line.includes('>> /run/vmss-prototype/copy-abc/var/log/vmss-prototype-ancestry.log'),
      ),
    );
    assert.ok(!lines.some((line) => line.includes('poweroff')), 'the donor is never powered off');
  });

  void it('refuses a mount point outside /run and a root partition out of range', () => {
    assert.throws(() => buildScrubScript({ ...input, mountPoint: '/mnt/copy' }), /not under \/run/);
    assert.throws(() => buildScrubScript({ ...input, mountPoint: '/run/a b' }), /not under \/run/);
    assert.throws(() => buildScrubScript({ ...input, rootPartition: 0 }), /out of range/);
    assert.throws(() => buildScrubScript({ ...input, lun: 64 }), /out of range/);
  });
});

void describe('planLiveLeftovers', () => {
  const disk = (name: string, runId: string | undefined, attachedTo?: string, state = 'Succeeded') => ({
    id: `/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/${name}`,
    name,
    ...(runId === undefined ? {} : { runId }),
    ...(attachedTo === undefined ? {} : { attachedTo }),
    provisioningState: state,
  });

  void it('thaws first, then stops scrubs, detaches, deletes; keeps the live run and foreign things', () => {
    const plan = planLiveLeftovers(
      {
        copyDisks: [
          disk('copy-dead', 'dead', '/subscriptions/s/.../virtualMachines/1'),
          disk('copy-dead-2', 'dead'),
          disk('copy-alive', 'alive', '/subscriptions/s/.../virtualMachines/2'),
          disk('someone-elses', undefined),
          disk('copy-going', 'dead', undefined, 'Deleting'),
        ],
        pods: [
          { namespace: 'ns', name: 'scrub-dead', role: 'scrub', runId: 'dead', phase: 'Running' },
          { namespace: 'ns', name: 'freeze-dead', role: 'freeze', runId: 'dead', phase: 'Running' },
          { namespace: 'ns', name: 'freeze-alive', role: 'freeze', runId: 'alive', phase: 'Running' },
        ],
      },
      'alive',
    );
    assert.deepEqual(
      plan.actions.map((action) =>
        action.kind === 'delete-live-pod'
          ? `${action.kind} ${action.name} ${action.gracePeriodSeconds}`
          : action.kind === 'detach-copy-disk'
            ? `${action.kind} ${action.diskId.split('/').at(-1) ?? ''}`
            : `${action.kind} ${action.name}${action.afterDetach ? ' after detach' : ''}`,
      ),
      [
        `delete-live-pod freeze-dead ${LIVE_POD_GRACE_SECONDS}`,
        `delete-live-pod scrub-dead ${LIVE_POD_GRACE_SECONDS}`,
        'detach-copy-disk copy-dead',
        'delete-copy-disk copy-dead after detach',
        'delete-copy-disk copy-dead-2',
      ],
    );
    assert.deepEqual(
      plan.kept.map((kept) => kept.what),
      [
        'freeze pod ns/freeze-alive',
        'copy disk copy-alive',
        'copy disk someone-elses',
        'copy disk copy-going',
      ],
    );
  });
});
