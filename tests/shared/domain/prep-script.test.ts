/** The prep script per bootstrap flavour: what it removes, empties and keeps, and the refusal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buildPowerOffScript,
  buildPrepScript,
  deIdentificationCommands,
  PREP_REMOVED_PATHS,
} from '../../../shared/domain/prep-script.js';

void describe('buildPrepScript', () => {
  void it('appends the ancestry, removes the identity files, empties machine-id, syncs, powers off', () => {
    const script = buildPrepScript({ ancestry: "built from node-0 (run 'r1')\nsecond line" });

    assert.deepEqual(script.split('\n'), [
      'set -eu',
      `echo 'built from node-0 (run '"'"'r1'"'"') second line' >> /var/log/vmss-prototype-ancestry.log`,
      `rm -rf ${PREP_REMOVED_PATHS.join(' ')}`,
      'truncate -s 0 /etc/machine-id',
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
