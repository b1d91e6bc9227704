import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { computeBudget, scaledValue } from '../../../sim/kube/disruption.js';
import { createInMemoryKubeStore } from '../../../sim/kube/store.js';
import { ManualTime, pdbObject, replicaSetObject, runningPod } from './fixtures.js';

void describe('scaled IntOrString values', () => {
  const cases: { value: unknown; total: number; expected: number | undefined }[] = [
    { value: 2, total: 10, expected: 2 },
    { value: '3', total: 10, expected: 3 },
    { value: '50%', total: 3, expected: 2 },
    { value: '10%', total: 5, expected: 1 },
    { value: '0%', total: 5, expected: 0 },
    { value: 'half', total: 5, expected: undefined },
  ];
  for (const { value, total, expected } of cases) {
    void it(`${JSON.stringify(value)} of ${total} is ${String(expected)}`, () => {
      assert.equal(scaledValue(value, total), expected);
    });
  }
});

void describe('disruption budget arithmetic', () => {
  function world(
    readyPods: number,
    unreadyPods: number,
    replicas: number,
    spec: Record<string, unknown>,
  ): KubeObject[] {
    const store = createInMemoryKubeStore({ clock: new ManualTime() });
    const labels = { app: 'web' };
    const owner = store.create('replicasets', replicaSetObject('apps', 'web', replicas, labels));
    for (let index = 0; index < readyPods + unreadyPods; index += 1) {
      const pod = runningPod('apps', `web-${index}`, 'n', { labels, owner });
      if (index >= readyPods)
        pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
      store.create('pods', pod);
    }
    const pdb = store.create(
      'poddisruptionbudgets',
      pdbObject('apps', 'web', { selector: { matchLabels: labels }, ...spec }),
    );
    const status = computeBudget(store, pdb);
    return [
      {
        apiVersion: 'v1',
        kind: 'Result',
        metadata: { name: 'r' },
        result: [
          status.currentHealthy,
          status.desiredHealthy,
          status.expectedPods,
          status.disruptionsAllowed,
        ],
      },
    ];
  }

  const cases: {
    name: string;
    ready: number;
    unready: number;
    replicas: number;
    spec: Record<string, unknown>;
    expected: number[];
  }[] = [
    {
      name: 'minAvailable int',
      ready: 3,
      unready: 0,
      replicas: 3,
      spec: { minAvailable: 2 },
      expected: [3, 2, 3, 1],
    },
    {
      name: 'minAvailable equal to healthy allows none',
      ready: 2,
      unready: 1,
      replicas: 3,
      spec: { minAvailable: 2 },
      expected: [2, 2, 3, 0],
    },
    {
      name: 'minAvailable percent rounds up on scale',
      ready: 3,
      unready: 0,
      replicas: 3,
      spec: { minAvailable: '50%' },
      expected: [3, 2, 3, 1],
    },
    {
      name: 'maxUnavailable int uses controller scale',
      ready: 2,
      unready: 0,
      replicas: 3,
      spec: { maxUnavailable: 1 },
      expected: [2, 2, 3, 0],
    },
    {
      name: 'maxUnavailable percent',
      ready: 4,
      unready: 0,
      replicas: 4,
      spec: { maxUnavailable: '25%' },
      expected: [4, 3, 4, 1],
    },
    {
      name: 'no pods allows nothing',
      ready: 0,
      unready: 0,
      replicas: 0,
      spec: { minAvailable: 0 },
      expected: [0, 0, 0, 0],
    },
  ];
  for (const { name, ready, unready, replicas, spec, expected } of cases) {
    void it(`${name}: healthy/desired/expected/allowed = ${expected.join('/')}`, () => {
      assert.deepEqual(world(ready, unready, replicas, spec)[0]?.result, expected);
    });
  }
});
