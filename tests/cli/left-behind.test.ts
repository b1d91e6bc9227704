// What an interrupted run left, as read from the world: only what carries the run's id, the lease as it
// is now, the command that gives back what is left, and a published version with the way back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { InterruptedRun } from '../../cli/left-behind.js';
import { describeLeftBehind } from '../../cli/left-behind.js';
import type { PoolHoldingsView } from '../../shared/application/pool-holdings.js';
import type { PoolHoldings } from '../../shared/domain/reaper.js';

const NOW = new Date('2026-11-20T10:00:00Z');
const RUN: InterruptedRun = { cluster: 'prod', pool: 'pool1', runId: 'run-1' };
const DEFINITION = '/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/galleries/gal/images/pool1';

function view(holdings: Partial<PoolHoldings>, extra: Partial<PoolHoldingsView> = {}): PoolHoldingsView {
  return {
    scope: {
      cluster: 'prod',
      pool: 'pool1',
      scaleSet: { subscriptionId: 's', resourceGroup: 'g', name: 'pool1' },
      lease: { namespace: 'vmss-prototype', name: 'vmssp-pool1' },
      definition: { subscriptionId: 's', resourceGroup: 'g', galleryName: 'gal', imageName: 'pool1' },
    },
    holdings: { nodes: [], prepPods: [], snapshots: [], versions: [], copyDisks: [], ...holdings },
    ...extra,
  };
}

void describe('describeLeftBehind', () => {
  void it('nothing of the run left: says so, and that the lease is free', () => {
    const lines = describeLeftBehind(
      view({
        // Another run's leftovers are not this run's.
        snapshots: [
          {
            subscriptionId: 's',
            resourceGroup: 'g',
            name: 'old',
            runId: 'run-0',
            provisioningState: 'Succeeded',
          },
        ],
      }),
      RUN,
      NOW,
    );
    assert.deepEqual(lines, [
      'pool pool1 (run run-1), read just now:',
      "  the pool's lease is free",
      '  nothing of the run is left: no node marked, no VM it stopped, no pod, snapshot, copy disk or unpublished version',
    ]);
  });

  void it('a held node, its stopped VM, its snapshot and an unfinished version: each named, with release', () => {
    const lines = describeLeftBehind(
      view({
        nodes: [
          {
            name: 'node-1',
            runId: 'run-1',
            unschedulable: true,
            instance: { kind: 'present', instanceId: '1', powerState: 'stopped' },
          },
        ],
        snapshots: [
          {
            subscriptionId: 's',
            resourceGroup: 'g',
            name: 'snap-1',
            runId: 'run-1',
            provisioningState: 'Succeeded',
          },
        ],
        versions: [
          {
            versionName: '2026.1120.1',
            runId: 'run-1',
            provisioningState: 'Creating',
            excludeFromLatest: true,
            rejected: false,
          },
        ],
      }),
      RUN,
      NOW,
    );
    assert.deepEqual(lines.slice(2), [
      '  left: node node-1: cordoned, marked by the run, its VM stopped',
      '  left: snapshot snap-1 (Succeeded)',
      '  left: image version 2026.1120.1 (Creating, hidden from `latest`)',
      "  give it back: vmss-prototype release --pool pool1 (once the run's lease is released or expired)",
    ]);
  });

  void it('a published version of the run: named with rollback, not as something to give back', () => {
    const lines = describeLeftBehind(
      view({
        versions: [
          {
            versionName: '2026.1120.1',
            runId: 'run-1',
            provisioningState: 'Succeeded',
            excludeFromLatest: false,
            rejected: false,
          },
        ],
        modelImageId: `${DEFINITION}/versions/2026.1120.1`,
      }),
      RUN,
      NOW,
    );
    assert.deepEqual(lines.slice(2), [
      '  nothing of the run is left: no node marked, no VM it stopped, no pod, snapshot, copy disk or unpublished version',
      '  published: image version 2026.1120.1 is in `latest` and the model is pinned to it; vmss-prototype rollback --pool pool1 points the pool back at the version before',
    ]);
  });

  void it('the lease still held by the run is said so', () => {
    const lines = describeLeftBehind(
      view(
        {},
        {
          lease: {
            namespace: 'vmss-prototype',
            name: 'vmssp-pool1',
            holder: 'cli/laptop/run-1',
            acquiredAt: '2026-11-20T09:50:00Z',
            renewedAt: '2026-11-20T09:55:00Z',
            durationSeconds: 900,
            annotations: {},
          },
        },
      ),
      RUN,
      NOW,
    );
    assert.match(
      lines[1] ?? '',
      /^ {2}the pool's lease is still held by this run: run run-1 of cli on laptop/,
    );
  });

  void it('a run stopped before it took the pool changed nothing', () => {
    const lines = describeLeftBehind(view({}), { cluster: 'prod', pool: 'pool1' }, NOW);
    assert.deepEqual(lines, [
      'pool pool1, read just now:',
      "  the pool's lease is free",
      '  the run stopped before it took the pool: it changed nothing',
    ]);
  });
});
