/**
 * Prep pod timing on the kamino-observed profile: the image pull is where kamino's 49 s went (Pending),
 * the script runs right after the container starts, a node keeps pulled images (a second pod with the
 * same image starts at once), a pod deleted after its script ran has still powered the host off; and
 * the real shell: a missing command, a failing one under `set -e`, an unset variable under `set -u`, a
 * command outside the host's mount namespace, or no bwrap on the machine fails the pod with a clear
 * message and leaves the VM running.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { prepPodManifest } from '../../../shared/adapters/kubernetes/pod-manifests.js';
import { buildPrepScript } from '../../../shared/domain/prep-script.js';
import type { KubeObject } from '../../../sim/contracts.js';
import { podPhase, statusOf } from '../../../sim/kube/objects.js';
import { findBwrap, useBwrap } from '../../../sim/world/real-shell.js';
import { parseScenario } from '../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../sim/world/world.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const POOL = 'k8s-pool1-12345678-vmss';
const NODE0 = `${POOL}000000`;
const NODE1 = `${POOL}000001`;
const IMAGE = 'mcr.microsoft.com/cbl-mariner/busybox:2.0';

function makeWorld(): World {
  const world = createWorld({
    scenario: parseScenario({
      subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
      location: 'westeurope',
      start: '2026-11-22T12:00:00Z',
      clusters: [{ name: 'prod', resourceGroup: 'rg-k8s', scaleSets: [{ name: POOL, capacity: 2 }] }],
    }),
  });
  world.clock.advanceBy(5);
  return world;
}

function createPrepPod(
  world: World,
  name: string,
  nodeName: string,
  script = buildPrepScript({ ancestry: 'x' }),
): void {
  world.cluster().world.store.create(
    'pods',
    prepPodManifest({
      name,
      namespace: 'kube-system',
      nodeName,
      image: IMAGE,
      script,
      labels: {},
    }) as never,
  );
}

function pod(world: World, name: string): KubeObject | undefined {
  return world.cluster().world.store.get('pods', 'kube-system', name);
}

function powerOf(world: World, nodeName: string): string {
  const instance = world.cluster().world.instanceOfNode(nodeName);
  return instance?.powerState ?? 'missing';
}

void describe('prep pod timing (kamino-observed)', () => {
  void it('pulls the image while Pending, runs the script right after the container starts: 49 s to power-off', () => {
    const world = makeWorld();
    const { podStartSeconds, imagePullSeconds, prepScriptSeconds } = world.latency;
    createPrepPod(world, 'prep', NODE0);

    world.clock.advanceBy(podStartSeconds + 1);
    const pulling = pod(world, 'prep');
    const waiting = (
      statusOf(pulling as KubeObject).containerStatuses as { state: { waiting?: { reason: string } } }[]
    )[0];
    assert.equal(podPhase(pulling as KubeObject), 'Pending');
    assert.equal(waiting?.state.waiting?.reason, 'ContainerCreating');
    world.clock.advanceBy(imagePullSeconds - 1);
    assert.equal(podPhase(pod(world, 'prep') as KubeObject), 'Running');
    assert.equal(powerOf(world, NODE0), 'running');
    world.clock.advanceBy(prepScriptSeconds);

    assert.equal(podStartSeconds + imagePullSeconds + prepScriptSeconds, 49);
    assert.equal(podPhase(pod(world, 'prep') as KubeObject), 'Succeeded');
    assert.equal(powerOf(world, NODE0), 'stopping');
    world.stop();
  });

  void it('a node keeps a pulled image: a second pod with it starts at once', () => {
    const world = makeWorld();
    const { store } = world.cluster().world;
    store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'warm-up', namespace: 'kube-system' },
      spec: { nodeName: NODE1, containers: [{ name: 'main', image: IMAGE }] },
    });
    world.clock.advanceBy(world.latency.podStartSeconds + world.latency.imagePullSeconds + 1);

    createPrepPod(world, 'prep', NODE1);
    world.clock.advanceBy(world.latency.podStartSeconds + world.latency.prepScriptSeconds);

    assert.equal(podPhase(pod(world, 'prep') as KubeObject), 'Succeeded');
    assert.equal(powerOf(world, NODE1), 'stopping');
    const node = store.get('nodes', undefined, NODE1);
    const images = (statusOf(node as KubeObject).images as { names: string[] }[]).flatMap(
      (image) => image.names,
    );
    assert.ok(images.includes(IMAGE));
    world.stop();
  });

  void it('a pod deleted before its script ran changes nothing; deleted after, the host still powers off', () => {
    const world = makeWorld();
    const { store } = world.cluster().world;
    const { podStartSeconds, imagePullSeconds, prepScriptSeconds, instanceStopSeconds } = world.latency;
    createPrepPod(world, 'early', NODE0);
    createPrepPod(world, 'late', NODE1);

    world.clock.advanceBy(podStartSeconds + imagePullSeconds + 1);
    store.remove('pods', 'kube-system', 'early');
    world.clock.advanceBy(prepScriptSeconds);
    store.remove('pods', 'kube-system', 'late');
    world.clock.advanceBy(instanceStopSeconds + 1);

    assert.equal(powerOf(world, NODE0), 'running');
    assert.equal(powerOf(world, NODE1), 'stopped');
    assert.deepEqual(
      world.prepRecords().map((record) => record.pod),
      ['late'],
    );
    world.stop();
  });
});

void describe('prep script in the real shell', () => {
  const runs: { name: string; script: string; message: RegExp }[] = [
    {
      name: 'a command the host does not have',
      script: 'set -eu\nno-such-tool --now\nsystemctl poweroff',
      message: /exit 127: .*no-such-tool: not found/,
    },
    {
      name: 'a failing command under set -e',
      script: 'set -e\nrm /etc/not-there\npoweroff',
      message: /exit 1: .*cannot remove '\/etc\/not-there'/,
    },
    {
      name: 'an expansion of a variable the script did not set (set -u)',
      script: 'set -u\nrm -rf "$NOT_SET"/x\npoweroff',
      message: /NOT_SET: parameter not set/,
    },
  ];
  for (const { name, script, message } of runs) {
    void it(`${name} fails the pod with the shell's own message; the VM stays up`, (t) => {
      if (skipWithoutBwrap(t)) return;
      const world = makeWorld();
      createPrepPod(world, 'prep', NODE0, script);

      world.clock.advanceBy(
        world.latency.podStartSeconds + world.latency.imagePullSeconds + world.latency.prepScriptSeconds + 1,
      );

      const failed = pod(world, 'prep') as KubeObject;
      assert.equal(podPhase(failed), 'Failed');
      assert.match(String(statusOf(failed).message), message);
      assert.equal(powerOf(world, NODE0), 'running');
      assert.equal(world.prepRecords()[0]?.outcome, 'failed');
      assert.equal(world.prepRecords()[0]?.shell, 'real');
      world.stop();
    });
  }

  void it("without bwrap the modelled shell takes the product's script; one beyond its grammar fails naming bubblewrap", () => {
    const installed = findBwrap();
    useBwrap(null);
    try {
      const world = makeWorld();
      const wait = () =>
        world.clock.advanceBy(
          world.latency.podStartSeconds +
            world.latency.imagePullSeconds +
            world.latency.prepScriptSeconds +
            1,
        );
      createPrepPod(world, 'prep', NODE0);
      wait();
      assert.equal(world.prepRecords()[0]?.shell, 'modelled');
      assert.equal(
        world.prepRecords()[0]?.outcome,
        'succeeded',
        JSON.stringify({ ...world.prepRecords()[0], script: undefined }),
      );
      createPrepPod(
        world,
        'kamino',
        NODE1,
        'cp /dev/null /etc/machine-id && echo "$(date)" >> /var/log/x.log',
      );
      wait();
      const failed = pod(world, 'kamino') as KubeObject;
      assert.equal(podPhase(failed), 'Failed');
      assert.match(String(statusOf(failed).message), /bubblewrap.*apt-get install -y bubblewrap/);
      assert.equal(powerOf(world, NODE1), 'running');
      world.stop();
    } finally {
      useBwrap(installed);
    }
  });

  void it("a script that does not enter the host's mount namespace fails: nothing would reach the host disk", () => {
    const world = makeWorld();
    const manifest = prepPodManifest({
      name: 'prep',
      namespace: 'kube-system',
      nodeName: NODE0,
      image: IMAGE,
      script: 'x',
      labels: {},
    }) as unknown as { spec: { containers: { command: string[] }[] } };
    const container = manifest.spec.containers[0];
    assert.ok(container);
    container.command = [
      'nsenter',
      '--target',
      '1',
      '--pid',
      '--',
      '/bin/sh',
      '-c',
      'rm -rf /etc/hostname\npoweroff',
    ];
    world.cluster().world.store.create('pods', manifest as never);

    world.clock.advanceBy(
      world.latency.podStartSeconds + world.latency.imagePullSeconds + world.latency.prepScriptSeconds + 1,
    );

    assert.match(
      String(statusOf(pod(world, 'prep') as KubeObject).message),
      /does not enter PID 1's mount namespace .*: nothing it does would reach the host's disk/,
    );
    const instance = world.cluster().world.instanceOfNode(NODE0);
    assert.equal(world.compute.getDiskContent(instance?.osDiskId ?? '')?.files['/etc/hostname'], NODE0);
    world.stop();
  });

  void it('Run Command runs the script in the real shell on the host, and powers off after the agent reports', (t) => {
    if (skipWithoutBwrap(t)) return;
    const world = makeWorld();
    const instance = world.cluster().world.instanceOfNode(NODE1);
    assert.ok(instance);

    const output = world
      .cluster()
      .world.handleRunCommand(instance, 'truncate -s 0 /etc/machine-id\nsync\nsystemctl poweroff');
    world.clock.advanceBy(2);

    assert.equal(output.stderr, '');
    assert.equal(world.prepRecords().at(-1)?.shell, 'real');
    assert.equal(world.compute.getDiskContent(instance.osDiskId ?? '')?.files['/etc/machine-id'], '');
    assert.equal(powerOf(world, NODE1), 'stopping');
    world.stop();
  });
});
