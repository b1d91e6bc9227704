/** Tests for recognising the host power-off prep pod and reading what its script does. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { isHostPowerOffPod, prepEffects } from '../../../sim/world/prep-pod.js';

function pod(spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'prep', namespace: 'kube-system' }, spec };
}

const PRIVILEGED = { privileged: true };

void describe('isHostPowerOffPod', () => {
  const cases: { name: string; spec: Record<string, unknown>; expected: boolean }[] = [
    {
      name: 'nsenter + poweroff, hostPID, privileged',
      spec: {
        hostPID: true,
        containers: [
          {
            command: ['nsenter', '-t', '1', '-m', '--', 'sh', '-c', 'rm -f /etc/hostname; poweroff'],
            securityContext: PRIVILEGED,
          },
        ],
      },
      expected: true,
    },
    {
      name: 'systemctl poweroff in args',
      spec: {
        hostPID: true,
        containers: [
          { command: ['sh', '-c'], args: ['sync && systemctl poweroff'], securityContext: PRIVILEGED },
        ],
      },
      expected: true,
    },
    {
      name: 'shutdown -h now',
      spec: {
        hostPID: true,
        containers: [{ command: ['shutdown', '-h', 'now'], securityContext: PRIVILEGED }],
      },
      expected: true,
    },
    {
      name: 'not privileged',
      spec: { hostPID: true, containers: [{ command: ['poweroff'] }] },
      expected: false,
    },
    {
      name: 'no hostPID',
      spec: { containers: [{ command: ['poweroff'], securityContext: PRIVILEGED }] },
      expected: false,
    },
    {
      name: 'reboot is not a power-off',
      spec: {
        hostPID: true,
        containers: [{ command: ['systemctl', 'reboot'], securityContext: PRIVILEGED }],
      },
      expected: false,
    },
    {
      name: 'a word that merely contains poweroff',
      spec: {
        hostPID: true,
        containers: [{ command: ['echo', 'nopoweroffhere'], securityContext: PRIVILEGED }],
      },
      expected: false,
    },
  ];
  for (const { name, spec, expected } of cases) {
    void it(`${name} → ${expected}`, () => {
      assert.equal(isHostPowerOffPod(pod(spec)), expected);
    });
  }
});

void describe('prepEffects', () => {
  void it('reads the disk preparation steps kamino-style scripts perform', () => {
    const script = [
      'nsenter -t 1 -m -u -i -n -p -- sh -c "',
      'echo built-from=node-1 >> /etc/vmss-prototype-ancestry;',
      'rm -f /etc/hostname;',
      'truncate -s 0 /etc/machine-id;',
      'rm -rf /var/lib/cloud/instances;',
      'rm -rf /var/lib/waagent/history;',
      'journalctl --vacuum-time=1s;',
      'poweroff"',
    ].join(' ');
    assert.deepEqual(prepEffects(script), [
      'enters-host-namespaces',
      'appends-ancestry',
      'removes-hostname',
      'empties-machine-id',
      'removes-cloud-init-instance-data',
      'removes-waagent-history',
      'removes-old-journals',
      'powers-off',
    ]);
  });

  void it('finds nothing in an unrelated script', () => {
    assert.deepEqual(prepEffects('echo hello; cat /etc/hostname'), []);
  });
});
