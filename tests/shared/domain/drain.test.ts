// A pod that blocks a drain is reported with what the operator can do (force is no setting), and that the
// node is given back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { planDrain, type PodOnNode } from '../../../shared/domain/drain.js';

function pod(overrides: Partial<PodOnNode>): PodOnNode {
  return {
    namespace: 'apps',
    name: 'p',
    uid: 'u',
    phase: 'Running',
    mirror: false,
    usesEmptyDir: false,
    terminating: false,
    ...overrides,
  };
}

const CASES: readonly [string, PodOnNode, RegExp][] = [
  ['no controller', pod({}), /run it under a Deployment or StatefulSet, or delete it/],
  [
    'orphan of a deleted DaemonSet',
    pod({ controller: { kind: 'DaemonSet', name: 'gone', apiVersion: 'apps/v1' } }),
    /delete the pod, or recreate its DaemonSet/,
  ],
];

void describe('drain blockers', () => {
  for (const [name, given, advice] of CASES) {
    void it(name, () => {
      const plan = planDrain([given], { deleteEmptyDirData: true, force: false }, () => false);
      const [blocker] = plan.blockers;
      assert.match(blocker?.reason ?? '', advice);
      assert.match(blocker?.reason ?? '', /the node is given back/);
      assert.doesNotMatch(blocker?.reason ?? '', /enable force/);
    });
  }
});
