/**
 * The power-off wait of a drain-and-stop capture on the local durable runner (every event replays the
 * orchestration from its history): the cluster is read until it says the guest went down, ARM is read
 * first a guest halt later, and every failure path still ends the wait.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { EXPECTED, POLL } from '../../../../functions/orchestrations/timing.js';
import type { ClusterNode } from '../../../../shared/domain/cluster-node.js';
import { createFakeWorld, failureOf, type FakeWorld, nodeName, poolRef } from '../fake-world.js';

const POOL = 'pool1';
const DONOR = nodeName(POOL, 0);

/** When the prep pod was created, and the ARM instance reads from then until the snapshot was asked. */
function powerOffWaitOf(world: FakeWorld): { createdAt: number; instanceReads: number[] } {
  const createdAt = world.kube.callsTo('pods.createPrepPod')[0]?.at;
  assert.ok(createdAt !== undefined, 'the prep pod was created');
  const snapshotAt = world.compute.callsTo('snapshots.request')[0]?.at ?? Number.POSITIVE_INFINITY;
  const instanceReads = world.compute
    .callsTo('instances.get')
    .map((call) => call.at)
    .filter((at) => at > createdAt && at <= snapshotAt)
    .map((at) => (at - createdAt) / 1000);
  return { createdAt, instanceReads };
}

/** The node lifecycle controller: the donor's Ready turns Unknown `graceSeconds` after the pod ended. */
function nodeGoesUnknown(world: FakeWorld, podRunMs: number, graceSeconds = 40): void {
  const wrapped = world.kube.nodes.get.bind(world.kube.nodes);
  world.kube.nodes.get = (name: string): Promise<ClusterNode> => {
    const createdAt = world.kube.callsTo('pods.createPrepPod')[0]?.at;
    const node = world.kube.nodes.node(name);
    if (name === DONOR && createdAt !== undefined && node !== undefined) {
      const unknownAt = createdAt + podRunMs + graceSeconds * 1000;
      if (world.clock.now() >= unknownAt && world.compute.callsTo('instances.requestStart').length === 0) {
        world.kube.nodes.add({
          ...node,
          conditions: node.conditions.map((condition) =>
            condition.type === 'Ready'
              ? { ...condition, status: 'Unknown', lastTransitionTime: new Date(unknownAt).toISOString() }
              : condition,
          ),
        });
      }
    }
    return wrapped(name);
  };
}

void describe('the power-off wait', () => {
  void it('reads ARM first a guest halt after the cluster dated the power-off: once, when it is done', async () => {
    const podRunMs = 6_000;
    const world = createFakeWorld({ cluster: { prepPodRunMs: podRunMs } });
    nodeGoesUnknown(world, podRunMs);

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const { instanceReads } = powerOffWaitOf(world);
    // The pod ended 6 s after its creation: ARM is read 114 s later (not at 135 s, the old first read).
    assert.deepEqual(instanceReads, [6 + EXPECTED.guestHalt.expectedSeconds]);
  });

  void it('a stop slower than the usual is read every 8 s until seen: the donor waits at most 8 s for the read', async () => {
    const podRunMs = 6_000;
    const world = createFakeWorld({ cluster: { prepPodRunMs: podRunMs } });
    nodeGoesUnknown(world, podRunMs);
    const endedAt = (): number => (world.kube.callsTo('pods.createPrepPod')[0]?.at ?? 0) + podRunMs;
    world.onStep = (step) => {
      // The host takes 150 s from the guest's power-off to stopped…
      if (step === 'waiting-for-power-off')
        world.compute.schedulePowerOff(poolRef(POOL), '0', endedAt() + 150_000);
    };
    // …and ARM shows it stopping meanwhile.
    const get = world.compute.instances.get.bind(world.compute.instances);
    world.compute.instances.get = async (scaleSet, instanceId) => {
      const instance = await get(scaleSet, instanceId);
      const stopping = instance.powerState === 'running' && world.clock.now() >= endedAt();
      return stopping && world.compute.callsTo('instances.requestStart').length === 0
        ? { ...instance, powerState: 'stopping' }
        : instance;
    };

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    // Before: reads at 115 and 161 s, the stop seen 11 s after it was done.
    const reads = powerOffWaitOf(world).instanceReads;
    assert.deepEqual(
      reads,
      [114, 122, 130, 138, 146, 154].map((seconds) => 6 + seconds),
    );
    assert.ok((reads.at(-1) ?? 0) - (6 + 150) <= 8);
  });

  void it('a prep pod that fails is seen by the cluster reads, before any ARM read', async () => {
    const world = createFakeWorld({ cluster: { prepPodOutcome: 'Failed', prepPodRunMs: 12_000 } });

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Failed');
    assert.match(failureOf(status), /^preparing-disk: prep pod .* failed before powering the host off/);
    const { createdAt } = powerOffWaitOf(world);
    const deletedAt =
      world.kube
        .callsTo('pods.delete')
        .map((call) => call.at)
        .find((at) => at > createdAt) ?? Number.POSITIVE_INFINITY;
    // Seen at the first cluster read after its end (every 5 s), not at the old first ARM read (135 s).
    assert.equal((deletedAt - createdAt) / 1000, 15);
  });

  void it('a script that ended while its node stays Ready gets the power-off through the API a minute later', async () => {
    const world = createFakeWorld({ cluster: { prepPodRunMs: 20_000 } });
    world.onStep = (step) => {
      // The guest ignores the prep pod's poweroff: only the API call stops it.
      if (step === 'waiting-for-power-off') {
        world.compute.schedulePowerOff(poolRef(POOL), '0', Number.POSITIVE_INFINITY);
      }
    };

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    const { createdAt, instanceReads } = powerOffWaitOf(world);
    const [powerOff] = world.compute.callsTo('instances.requestPowerOff');
    assert.equal(((powerOff?.at ?? 0) - createdAt) / 1000, 20 + POLL.powerOffSignals.stillUpAfter);
    // The power-off's own read, then read first when an API stop is usually done, not on the backoff of
    // the wait so far.
    assert.deepEqual(instanceReads, [80, 80, 80 + EXPECTED.powerOff.expectedSeconds]);
  });

  void it('without any signal from the cluster ARM is read when it always was', async () => {
    const world = createFakeWorld({ cluster: { prepPodRunMs: 10 * 60_000 } });
    world.onStep = (step) => {
      // The pod stays Running (its kubelet died with the host) and nothing turns the node Unknown.
      if (step === 'waiting-for-power-off') {
        const createdAt = world.kube.callsTo('pods.createPrepPod')[0]?.at ?? 0;
        world.compute.schedulePowerOff(poolRef(POOL), '0', createdAt + 120_000);
      }
    };

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Completed', failureOf(status));
    assert.deepEqual(powerOffWaitOf(world).instanceReads, [EXPECTED.powerOff.expectedSeconds]);
  });

  void it('times out the whole wait from the prep pod, its signal reads counted, with what it saw', async () => {
    // The host never goes down and its pod never ends (a script stuck before its power-off).
    const world = createFakeWorld({ cluster: { prepPodRunMs: 2 * POLL.powerOff.timeout * 1000 } });

    const status = await world.refreshPool(POOL);

    assert.equal(status.runtimeStatus, 'Failed');
    assert.match(
      failureOf(status),
      new RegExp(
        `waiting-for-power-off: timed out after ${POLL.powerOff.timeout} s: instance 0 is running, prep pod Running`,
      ),
    );
    const { instanceReads } = powerOffWaitOf(world);
    assert.equal(instanceReads.at(-1), POLL.powerOff.timeout);
  });
});
