/**
 * The real shell over a disk tree (sim/world/real-shell.ts) and its stand-ins (host-stand-ins.ts): the
 * nsenter forms that enter the host's mount namespace and those that do not, what the tree reads back
 * as (removed, emptied, appended), simulated sleeps, the image store, the `scrub-leaves` fault, and which
 * scripts still need the modelled host. Without bwrap they skip (under CI=true they fail: bwrap-gate.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { DiskContent } from '../../../sim/arm/compute-state.js';
import { runsInStages } from '../../../sim/world/host-stand-ins.js';
import { runInRealShell } from '../../../sim/world/real-shell.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');

function disk(): DiskContent {
  return {
    files: {
      '/etc/machine-id': 'abc\n',
      '/etc/hostname': 'node-1\n',
      '/var/lib/cloud/instances/i-1/user-data.txt': 'x',
      '/var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db': 'db',
    },
    images: ['busybox:1'],
  };
}

function run(argv: string[], rmLeaves?: string[]) {
  return runInRealShell({
    argv,
    disk: disk(),
    hostname: 'node-1',
    nowMs: NOW,
    ...(rmLeaves === undefined ? {} : { rmLeaves }),
  });
}

void describe('real shell: nsenter forms', () => {
  const cases: { nsenter: string[]; enters: boolean }[] = [
    { nsenter: ['nsenter', '--target', '1', '--mount', '--'], enters: true },
    { nsenter: ['nsenter', '-t', '1', '-m', '-u', '-i', '-n', '-p', '--'], enters: true },
    { nsenter: ['/usr/bin/nsenter', '-m/proc/1/ns/mnt', '--'], enters: true },
    { nsenter: ['/nsenter', '--target=1', '--mount'], enters: true },
    { nsenter: ['nsenter', '--mount=/proc/1/ns/mnt'], enters: true },
    { nsenter: ['nsenter', '-t1', '-muinp', '--'], enters: true },
    { nsenter: ['nsenter', '--target', '1', '--pid', '--'], enters: false },
    { nsenter: ['nsenter', '-m', '--'], enters: false },
  ];
  for (const { nsenter, enters } of cases) {
    void it(`${nsenter.join(' ')} → ${enters ? 'runs on the host' : 'refused'}`, (t) => {
      if (skipWithoutBwrap(t)) return;
      const argv = ['/usr/bin/nsenter', ...nsenter.slice(1), '/bin/sh', '-c', 'rm -f /etc/hostname'];
      const result = run(argv);
      assert.equal(result.ok, enters, result.error);
      assert.equal(result.changed.includes('/etc/hostname'), enters);
      if (!enters) assert.match(result.error ?? '', /does not enter PID 1's mount namespace/);
    });
  }
});

void describe('real shell: what the tree reads back as', () => {
  void it('removed, emptied and appended files; sleeps add simulated time; a power-off stops what follows', (t) => {
    if (skipWithoutBwrap(t)) return;
    const result = run([
      '/bin/sh',
      '-c',
      'set -e; sleep 3; sleep 1m; rm -rf /var/lib/cloud/instances/*; : > /etc/machine-id; echo "$(hostname) $(date -u +%F)" >> /var/log/a.log; poweroff; rm -f /etc/hostname',
    ]);
    assert.ok(result.ok, result.error);
    assert.equal(result.sleptSeconds, 63);
    assert.equal(result.poweredOff, true);
    assert.deepEqual(result.changed.sort(), [
      '/etc/machine-id',
      '/var/lib/cloud/instances/i-1/user-data.txt',
    ]);
    assert.deepEqual(result.appended, ['/var/log/a.log']);
    assert.equal(result.files['/var/log/a.log'], 'node-1 2026-11-22\n');
    assert.equal(result.files['/etc/hostname'], 'node-1\n', 'nothing after the power-off ran');
  });

  void it("removing the container runtime's store removes its images", (t) => {
    if (skipWithoutBwrap(t)) return;
    const result = run(['/bin/sh', '-c', 'rm -rf /var/lib/containerd']);
    assert.ok(result.ok);
    assert.equal(result.imagesRemoved, true);
    assert.equal(run(['/bin/sh', '-c', 'true']).imagesRemoved, false);
  });

  void it('the scrub-leaves fault: a removal leaves the path in place, and nothing says it changed', (t) => {
    if (skipWithoutBwrap(t)) return;
    const result = run(['/bin/sh', '-c', 'rm -rf /etc/machine-id /etc/hostname'], ['/etc/machine-id']);
    assert.ok(result.ok);
    assert.equal(result.files['/etc/machine-id'], 'abc\n');
    assert.deepEqual(result.changed, ['/etc/hostname']);
  });

  void it('a tool the simulated host does not model fails with a message saying so', (t) => {
    if (skipWithoutBwrap(t)) return;
    const result = run(['/bin/sh', '-c', 'set -e; reboot']);
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /reboot: a reboot from a script is not modelled/);
  });
});

void describe('real shell: which scripts run in stages over simulated time', () => {
  const cases: { script: string; staged: boolean }[] = [
    { script: 'rm -rf /etc/hostname\nsystemctl poweroff', staged: false },
    { script: 'mount -o nouuid /dev/disk/azure/scsi1/lun0-part1 /run/x', staged: false },
    { script: "trap 'exit 143' TERM INT\nrm -rf /x", staged: false },
    { script: "trap 'fsfreeze -u /; exit 0' TERM INT\nfsfreeze -f /\nsleep 30 &\nwait", staged: true },
    { script: "trap 'rm -f /tmp/x' EXIT\nsleep 3", staged: false },
  ];
  for (const { script, staged } of cases) {
    void it(`${JSON.stringify(script)} → ${staged ? 'staged' : 'one run'}`, () => {
      assert.equal(runsInStages(script), staged);
    });
  }
});
