import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { toPodOutcome } from '../../../../shared/adapters/kubernetes/pod-manifests.js';

void describe('toPodOutcome', () => {
  void it('says when an ended pod’s container finished', () => {
    const outcome = toPodOutcome({
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'prep',
            image: 'busybox',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: 0,
                reason: 'Completed',
                finishedAt: new Date('2026-11-28T01:00:06Z'),
              },
            },
          },
        ],
      },
    });
    assert.deepEqual(outcome, {
      phase: 'Succeeded',
      message: 'exit code 0: Completed',
      endedAt: '2026-11-28T01:00:06.000Z',
    });
  });

  void it('a running pod has no end', () => {
    assert.deepEqual(toPodOutcome({ status: { phase: 'Running' } }), { phase: 'Running' });
  });
});
