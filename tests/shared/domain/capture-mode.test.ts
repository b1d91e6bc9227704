/** The capture mode of a pool: the setting, the flavour evidence and the scale set's facts → mode or refusal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { CaptureModeFacts, FlavourEvidence } from '../../../shared/domain/capture-mode.js';
import { chooseCaptureMode, liveCaptureBlockers } from '../../../shared/domain/capture-mode.js';

const CONFIGURED: FlavourEvidence = { kind: 'configured', flavour: 'k3s' };
const DETECTED: FlavourEvidence = {
  kind: 'detected',
  flavour: 'rke2',
  evidence: 'annotation rke2.io/node-args',
};
const UNKNOWN: FlavourEvidence = { kind: 'unknown', reason: 'no marks' };

function facts(change: Partial<CaptureModeFacts> = {}): CaptureModeFacts {
  return {
    setting: 'auto',
    flavour: CONFIGURED,
    osType: 'Linux',
    extensionTypes: ['Microsoft.Azure.Extensions/CustomScript'],
    vmSize: 'Standard_D4s_v5',
    ...change,
  };
}

void describe('liveCaptureBlockers', () => {
  const cases: { name: string; change: Partial<CaptureModeFacts>; blocker?: RegExp }[] = [
    { name: 'a plain Linux pool', change: {} },
    { name: 'Trusted Launch', change: { securityType: 'TrustedLaunch' } },
    { name: 'Windows', change: { osType: 'Windows' }, blocker: /Windows/ },
    { name: 'a confidential VM', change: { securityType: 'ConfidentialVM' }, blocker: /confidential/ },
    {
      name: 'a customer-managed key',
      change: {
        osDiskEncryptionSetId: '/subscriptions/s/resourceGroups/g/providers/x/diskEncryptionSets/des1',
      },
      blocker: /customer-managed key \(disk encryption set des1\)/,
    },
    {
      name: 'Azure Disk Encryption',
      change: { extensionTypes: ['Microsoft.Azure.Security/AzureDiskEncryptionForLinux'] },
      blocker: /Azure Disk Encryption/,
    },
    { name: 'an NVMe size (v6)', change: { vmSize: 'Standard_D4ds_v6' }, blocker: /NVMe/ },
    { name: 'a v5 size', change: { vmSize: 'Standard_E8s_v5' } },
    { name: 'no size known', change: { vmSize: undefined } },
  ];
  for (const { name, change, blocker } of cases) {
    void it(`${name}: ${blocker === undefined ? 'no blocker' : 'blocked'}`, () => {
      const blockers = liveCaptureBlockers(facts(change));
      if (blocker === undefined) assert.deepEqual(blockers, []);
      else {
        assert.equal(blockers.length, 1, blockers.join('; '));
        assert.match(blockers[0] ?? '', blocker);
      }
    });
  }
});

void describe('chooseCaptureMode', () => {
  const cases: {
    name: string;
    change: Partial<CaptureModeFacts>;
    expect: { kind: 'capture'; mode: 'live' | 'drain-and-stop'; flavour: string } | { kind: 'refuse' };
    reason: RegExp;
  }[] = [
    {
      name: 'auto, configured flavour, nothing blocks → live',
      change: {},
      expect: { kind: 'capture', mode: 'live', flavour: 'k3s' },
      reason: /^auto: live \(k3s, configured;/,
    },
    {
      name: 'auto, detected flavour → live, with the evidence',
      change: { flavour: DETECTED },
      expect: { kind: 'capture', mode: 'live', flavour: 'rke2' },
      reason: /detected from annotation rke2\.io\/node-args/,
    },
    {
      name: 'auto, unknown flavour → drain-and-stop (aks-engine plan), with the reason',
      change: { flavour: UNKNOWN },
      expect: { kind: 'capture', mode: 'drain-and-stop', flavour: 'aks-engine' },
      reason: /^auto: drain-and-stop, because the bootstrap flavour is unknown \(no marks\)/,
    },
    {
      name: 'auto, a blocker → drain-and-stop, naming it',
      change: { vmSize: 'Standard_D2s_v6' },
      expect: { kind: 'capture', mode: 'drain-and-stop', flavour: 'k3s' },
      reason: /^auto: drain-and-stop, because VM size Standard_D2s_v6 has an NVMe disk controller/,
    },
    {
      name: 'live, nothing blocks → live',
      change: { setting: 'live', flavour: UNKNOWN },
      expect: { kind: 'capture', mode: 'live', flavour: 'aks-engine' },
      reason: /^capture\.mode is live$/,
    },
    {
      name: 'live, a blocker → refused with the fix',
      change: { setting: 'live', osType: 'Windows' },
      expect: { kind: 'refuse' },
      reason:
        /live capture cannot work for this pool: the pool runs Windows.*set capture\.mode to drain-and-stop or auto/,
    },
    {
      name: 'drain-and-stop, even where live would work',
      change: { setting: 'drain-and-stop' },
      expect: { kind: 'capture', mode: 'drain-and-stop', flavour: 'k3s' },
      reason: /^capture\.mode is drain-and-stop$/,
    },
    {
      name: 'kubeadm live: the copy is scrubbed, new nodes run kubeadm join',
      change: { setting: 'live', flavour: { kind: 'configured', flavour: 'kubeadm' } },
      expect: { kind: 'capture', mode: 'live', flavour: 'kubeadm' },
      reason: /^capture\.mode is live; new nodes run the pool's bootstrap/,
    },
    {
      name: 'kubeadm drain-and-stop: the donor is snapshotted as it is, a copy is scrubbed',
      change: { setting: 'drain-and-stop', flavour: { kind: 'configured', flavour: 'kubeadm' } },
      expect: { kind: 'capture', mode: 'drain-and-stop', flavour: 'kubeadm' },
      reason: /snapshotted as it is and started at once, a copy of its disk is scrubbed/,
    },
    {
      name: 'kubeadm under run-command is refused (it prepares the donor itself)',
      change: { setting: 'run-command', flavour: { kind: 'configured', flavour: 'kubeadm' } },
      expect: { kind: 'refuse' },
      reason:
        /run-command.*kubeadm pools are de-identified on a copy only.*set capture\.mode to drain-and-stop, live or auto/,
    },
    {
      name: 'kubeadm auto with a live blocker: drain-and-stop with a scrubbed copy',
      change: {
        setting: 'auto',
        flavour: {
          kind: 'detected',
          flavour: 'kubeadm',
          evidence: 'annotation kubeadm.alpha.kubernetes.io/cri-socket',
        },
        vmSize: 'Standard_D4s_v6',
      },
      expect: { kind: 'capture', mode: 'drain-and-stop', flavour: 'kubeadm' },
      reason: /^auto: drain-and-stop, because VM size .*a copy of its disk is scrubbed/,
    },
  ];
  for (const { name, change, expect, reason } of cases) {
    void it(name, () => {
      const decision = chooseCaptureMode(facts(change));
      assert.equal(decision.kind, expect.kind, decision.reason);
      if (decision.kind === 'capture' && expect.kind === 'capture') {
        assert.equal(decision.mode, expect.mode);
        assert.equal(decision.flavour, expect.flavour);
      }
      assert.match(decision.reason, reason);
    });
  }
});
