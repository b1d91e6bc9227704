/** The prep script per bootstrap flavour: what it removes, empties and keeps, and the refusal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { hostKeyGeneratorCommands } from '../../../shared/domain/host-key-generator.js';
import {
  buildPowerOffScript,
  buildPrepScript,
  deIdentificationCommands,
  PREP_REMOVED_PATHS,
  prepScriptReport,
} from '../../../shared/domain/prep-script.js';

void describe('buildPrepScript', () => {
  void it('appends the ancestry, removes the identity files, empties machine-id, syncs, powers off', () => {
    const script = buildPrepScript({ ancestry: "built from node-0 (run 'r1')\nsecond line" });

    assert.deepEqual(script.split('\n'), [
      'set -eu',
      `echo 'built from node-0 (run '"'"'r1'"'"') second line' >> /var/log/vmss-prototype-ancestry.log`,
      `rm -rf ${PREP_REMOVED_PATHS.join(' ')}`,
      'truncate -s 0 /etc/machine-id',
      ...hostKeyGeneratorCommands(''),
      'sync',
      'systemctl poweroff --force --message=vmss-prototype',
    ]);
    assert.ok(PREP_REMOVED_PATHS.includes('/etc/ssh/ssh_host_*'));
  });

  const flavours: { flavour: 'aks-engine' | 'k3s' | 'rke2'; kept: string[] }[] = [
    { flavour: 'aks-engine', kept: ['/etc/kubernetes', '/var/lib/kubelet'] },
    { flavour: 'k3s', kept: ['/etc/rancher'] },
    { flavour: 'rke2', kept: ['/etc/rancher'] },
  ];
  for (const { flavour, kept } of flavours) {
    void it(`${flavour}: never touches what joining needs`, () => {
      const script = buildPrepScript({ ancestry: 'a', flavour });

      for (const path of kept) assert.ok(!script.includes(path), `${path} untouched`);
    });
  }

  void it('for Azure Run Command: the same script without the power-off (the API powers the VM off)', () => {
    const guest = buildPrepScript({ ancestry: 'a', flavour: 'k3s' }).split('\n');
    const runCommand = buildPrepScript({ ancestry: 'a', flavour: 'k3s', powerOff: false }).split('\n');

    assert.deepEqual(runCommand, guest.slice(0, -1));
    assert.equal(runCommand.at(-1), 'sync');
  });

  void it("never scrubs a kubeadm donor's own disk (its copy only)", () => {
    assert.throws(
      () => buildPrepScript({ ancestry: 'a', flavour: 'kubeadm' }),
      /kubeadm identity is removed from a copy of the disk only/,
    );
    assert.match(
      deIdentificationCommands({ ancestry: 'a', flavour: 'kubeadm' }, '/run/x').join('\n'),
      /rm -rf .*\/run\/x\/var\/lib\/kubelet\/\*/,
    );
  });

  void it('the power-off script of a copy-scrubbed donor changes nothing on its disk', () => {
    assert.deepEqual(buildPowerOffScript().split('\n'), [
      'set -eu',
      'sync',
      'systemctl poweroff --force --message=vmss-prototype',
    ]);
  });
});

void describe('prepScriptReport (Run Command: only the exit status line the script prints last decides)', () => {
  void it('prints its exit status last from an EXIT trap when asked', () => {
    const script = buildPrepScript({ ancestry: 'a', powerOff: false, reportExitStatus: true }).split('\n');

    assert.deepEqual(script.slice(0, 2), [
      'set -eu',
      `trap 'echo "vmss-prototype-prep-exit-status=$?"' EXIT`,
    ]);
    assert.equal(script.at(-1), 'sync');
  });

  const cases: {
    name: string;
    stdout: string;
    stderr: string;
    expected: ReturnType<typeof prepScriptReport>;
  }[] = [
    {
      name: 'status 0, nothing else',
      stdout: 'vmss-prototype-prep-exit-status=0\n',
      stderr: '',
      expected: { kind: 'succeeded' },
    },
    {
      name: 'status 0 with a warning on stderr',
      stdout: 'vmss-prototype-prep-exit-status=0\n',
      stderr: 'sync: warning\n',
      expected: { kind: 'succeeded' },
    },
    {
      name: 'status 1, silent',
      stdout: 'vmss-prototype-prep-exit-status=1\n',
      stderr: '',
      expected: { kind: 'failed', exitStatus: 1, detail: 'it printed nothing' },
    },
    {
      name: 'status 2 with an error',
      stdout: 'vmss-prototype-prep-exit-status=2\r\n',
      stderr: 'sh: 3: X: parameter not set\n',
      expected: { kind: 'failed', exitStatus: 2, detail: 'it printed: sh: 3: X: parameter not set' },
    },
    {
      name: 'no status line, nothing printed (the old "empty stderr is success")',
      stdout: '',
      stderr: '',
      expected: { kind: 'unreported', detail: 'it printed nothing' },
    },
    {
      name: 'the status line not last',
      stdout: 'vmss-prototype-prep-exit-status=0\nmore\n',
      stderr: '',
      expected: { kind: 'unreported', detail: 'it printed: vmss-prototype-prep-exit-status=0\nmore' },
    },
    {
      name: 'a malformed status',
      stdout: 'vmss-prototype-prep-exit-status=ok\n',
      stderr: '',
      expected: { kind: 'unreported', detail: 'its last line was vmss-prototype-prep-exit-status=ok' },
    },
  ];
  for (const { name, stdout, stderr, expected } of cases) {
    void it(name, () => {
      assert.deepEqual(prepScriptReport(stdout, stderr), expected);
    });
  }
});
