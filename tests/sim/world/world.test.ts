/** Tests for the world's coupling of VMs and nodes: prep pod, NotReady/Ready, kured, autoscaler, joins. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { KubeObject } from '../../../sim/contracts.js';
import { isNodeReady, isUnschedulable, specOf, statusOf } from '../../../sim/kube/objects.js';
import {
  KURED_LOCK,
  KURED_MOST_RECENT_REBOOT_NEEDED,
  KURED_REBOOT_IN_PROGRESS,
  SCALE_DOWN_DISABLED,
} from '../../../sim/world/nodes.js';
import { parseScenario } from '../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../sim/world/world.js';

const POOL = 'k8s-pool1-12345678-vmss';
const NODE0 = `${POOL}000000`;
const NODE1 = `${POOL}000001`;
const NODE2 = `${POOL}000002`;

function makeWorld(extra: Record<string, unknown> = {}): World {
  const scenario = parseScenario({
    subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
    location: 'westeurope',
    start: '2026-11-22T12:00:00Z',
    latency: { profile: 'fast' },
    clusters: [
      {
        name: 'prod',
        resourceGroup: 'rg-K8s-Prod',
        scaleSets: [
          {
            name: POOL,
            capacity: 3,
            zones: ['1', '2', '3'],
            extensions: [{ name: 'vmssCSE', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' }],
            readyFor: '6h',
            kured: { mostRecentRebootNeeded: '-6h' },
            nodes: [
              { index: 1, cordoned: true },
              { index: 2, kured: { mostRecentRebootNeeded: '-20m', rebootInProgress: '-20m' } },
            ],
          },
        ],
        workloads: [
          {
            kind: 'DaemonSet',
            namespace: 'kube-system',
            name: 'kured',
            tolerations: [{ operator: 'Exists' }],
          },
          { kind: 'Deployment', name: 'web', replicas: 2, pdb: { maxUnavailable: 1 } },
        ],
      },
    ],
    ...extra,
  });
  const world = createWorld({ scenario });
  world.clock.advanceBy(5);
  return world;
}

function node(world: World, name: string): KubeObject {
  const found = world.cluster().world.store.get('nodes', undefined, name);
  assert.ok(found, `node ${name} exists`);
  return found;
}

function readyCondition(object: KubeObject): { status: string; reason: string; lastTransitionTime: string } {
  const conditions = statusOf(object).conditions as {
    type: string;
    status: string;
    reason: string;
    lastTransitionTime: string;
  }[];
  const ready = conditions.find((condition) => condition.type === 'Ready');
  assert.ok(ready);
  return ready;
}

function taintKeys(object: KubeObject): string[] {
  return ((specOf(object).taints ?? []) as { key: string; effect: string }[]).map(
    (taint) => `${taint.key}:${taint.effect}`,
  );
}

function instanceOf(world: World, name: string) {
  const instance = world.cluster().world.instanceOfNode(name);
  assert.ok(instance);
  return instance;
}

void describe('world seeding', () => {
  void it('registers every instance as a node the way cloud-provider-azure and the kubelet do', () => {
    const world = makeWorld();
    const first = node(world, NODE0);
    assert.equal(
      specOf(first).providerID,
      'azure:///subscriptions/3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f/resourceGroups/rg-k8s-prod/providers/Microsoft.Compute/virtualMachineScaleSets/k8s-pool1-12345678-vmss/virtualMachines/0',
    );
    const labels = first.metadata.labels ?? {};
    assert.equal(labels['kubernetes.io/os'], 'linux');
    assert.equal(labels['kubernetes.io/hostname'], NODE0);
    assert.equal(labels['node.kubernetes.io/instance-type'], 'Standard_D4s_v5');
    assert.equal(labels['topology.kubernetes.io/zone'], 'westeurope-1');
    assert.equal(labels.agentpool, 'pool1');
    assert.equal(readyCondition(first).lastTransitionTime, '2026-11-22T06:00:00Z');
    assert.equal(first.metadata.annotations?.[KURED_MOST_RECENT_REBOOT_NEEDED], '2026-11-22T06:00:00Z');
    assert.equal(isUnschedulable(node(world, NODE1)), true);
    assert.equal(node(world, NODE2).metadata.annotations?.[KURED_REBOOT_IN_PROGRESS], '2026-11-22T11:40:00Z');
    const nodeInfo = statusOf(first).nodeInfo as { systemUUID: string; kubeletVersion: string };
    assert.equal(nodeInfo.systemUUID, instanceOf(world, NODE0).vmId);
    assert.equal(nodeInfo.kubeletVersion, 'v1.30.6');
    const daemonPods = world
      .cluster()
      .world.store.list('pods', 'kube-system')
      .filter((pod) => pod.metadata.name.startsWith('kured-'));
    assert.equal(daemonPods.length, 3);
    world.stop();
  });
});

void describe('prep pod and node readiness', () => {
  void it('prep pod powers the VM off, the node goes NotReady, a start brings it back Ready', () => {
    const world = makeWorld();
    const { store } = world.cluster().world;
    const latency = world.latency;
    const script =
      'rm -f /etc/hostname; truncate -s 0 /etc/machine-id; rm -rf /var/lib/cloud/instances; poweroff';
    store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'vmss-prototype-prep', namespace: 'kube-system' },
      spec: {
        nodeName: NODE0,
        hostPID: true,
        restartPolicy: 'Never',
        containers: [
          {
            name: 'prep',
            image: 'busybox',
            command: ['nsenter', '-t', '1', '-m', '-u', '-i', '-n', '-p', '--', 'sh', '-c', script],
            securityContext: { privileged: true },
          },
        ],
      },
    });
    world.clock.advanceBy(latency.podStartSeconds + latency.imagePullSeconds + latency.prepScriptSeconds);
    const prep = store.get('pods', 'kube-system', 'vmss-prototype-prep');
    assert.equal(statusOf(prep as KubeObject).phase, 'Succeeded');
    const instance = instanceOf(world, NODE0);
    assert.equal(instance.powerState, 'stopping');
    const [record] = world.prepRecords();
    assert.ok(record);
    assert.equal(record.nodeName, NODE0);
    assert.deepEqual(record.effects, [
      'enters-host-namespaces',
      'removes-hostname',
      'empties-machine-id',
      'removes-cloud-init-instance-data',
      'powers-off',
    ]);

    world.clock.advanceBy(latency.instanceStopSeconds);
    assert.equal(instanceOf(world, NODE0).powerState, 'stopped');
    world.clock.advanceBy(40);
    const down = node(world, NODE0);
    assert.equal(isNodeReady(down), false);
    assert.equal(readyCondition(down).status, 'Unknown');
    assert.equal(readyCondition(down).reason, 'NodeStatusUnknown');
    assert.ok(taintKeys(down).includes('node.kubernetes.io/unreachable:NoExecute'));

    world.compute.startInstance(instanceOf(world, NODE0).id);
    world.clock.advanceBy(latency.instanceStartSeconds);
    assert.equal(instanceOf(world, NODE0).powerState, 'running');
    assert.equal(
      isNodeReady(node(world, NODE0)),
      false,
      'the kubelet needs nodeBootSeconds after the VM runs',
    );
    world.clock.advanceBy(latency.nodeBootSeconds);
    const up = node(world, NODE0);
    assert.equal(isNodeReady(up), true);
    assert.equal(
      Date.parse(readyCondition(up).lastTransitionTime),
      Math.floor(world.clock.nowMs() / 1000) * 1000,
    );
    assert.equal(
      taintKeys(up).some((key) => key.startsWith('node.kubernetes.io/unreachable')),
      false,
    );
    world.stop();
  });
});

void describe('taint-based eviction', () => {
  void it('a stopped node keeps its pods for 300 s, then they terminate and are replaced elsewhere', () => {
    const world = makeWorld();
    const { store } = world.cluster().world;
    world.clock.advanceBy(30);
    const web = (): KubeObject[] =>
      store.list('pods', 'default').filter((pod) => pod.metadata.name.startsWith('web-'));
    const victim = web()[0];
    const nodeName = String(specOf(victim as KubeObject).nodeName);
    world.compute.powerOffInstance(instanceOf(world, nodeName).id, { skipShutdown: true });
    // The kubelet stops with the shutdown; 40 s later the node is unreachable; 300 s later pods go.
    world.clock.advanceBy(40 + 299);
    assert.equal(web().filter((pod) => pod.metadata.deletionTimestamp !== undefined).length, 0);
    world.clock.advanceBy(5);
    const terminating = web().filter((pod) => pod.metadata.deletionTimestamp !== undefined);
    assert.deepEqual(
      terminating.map((pod) => specOf(pod).nodeName),
      web()
        .filter((pod) => specOf(pod).nodeName === nodeName)
        .map(() => nodeName),
    );
    assert.ok(terminating.length > 0);
    const replacements = web().filter((pod) => pod.metadata.deletionTimestamp === undefined);
    assert.equal(replacements.length, 2);
    assert.ok(replacements.every((pod) => specOf(pod).nodeName !== nodeName));
    const daemon = store
      .list('pods', 'kube-system')
      .find((pod) => specOf(pod).nodeName === nodeName && pod.metadata.name.startsWith('kured-'));
    assert.equal(daemon?.metadata.deletionTimestamp, undefined, 'DaemonSet pods tolerate unreachable');
    world.stop();
  });
});

void describe('kured stand-in', () => {
  void it('sets and clears the annotations as kured --annotate-nodes does, step by step', () => {
    const world = makeWorld();
    const { world: cluster, kured } = world.cluster();
    const store = cluster.store;
    const reboots: string[] = [];
    world.onGuestReboot((event) => reboots.push(event.nodeName));
    world.clock.advanceBy(60);
    const startedAt = new Date(Math.floor(world.clock.nowMs() / 1000) * 1000)
      .toISOString()
      .replace('.000Z', 'Z');

    const run = kured.patchAndReboot([NODE0]);
    // 1. Both annotations with the same RFC3339 timestamp, then the lock and the cordon.
    let current = node(world, NODE0);
    assert.equal(current.metadata.annotations?.[KURED_REBOOT_IN_PROGRESS], startedAt);
    assert.equal(current.metadata.annotations?.[KURED_MOST_RECENT_REBOOT_NEEDED], startedAt);
    assert.equal(isUnschedulable(current), true);
    const lock = store.get('daemonsets', 'kube-system', 'kured')?.metadata.annotations?.[KURED_LOCK];
    assert.ok(lock);
    assert.deepEqual((JSON.parse(lock) as { metadata: unknown }).metadata, { unschedulable: false });

    // 2. Drained and rebooted: the node is still cordoned and still marked in progress.
    world.clock.advanceBy(35);
    assert.equal(reboots.length, 1);
    assert.equal(cluster.workloadPodsOn(NODE0).length, 0);
    current = node(world, NODE0);
    assert.equal(isUnschedulable(current), true);
    assert.ok(current.metadata.annotations?.[KURED_REBOOT_IN_PROGRESS]);

    // 3. Back Ready: uncordoned, reboot-in-progress removed, most-recent-reboot-needed kept, lock released.
    world.clock.advanceBy(60);
    assert.equal(run.state, 'succeeded');
    current = node(world, NODE0);
    assert.equal(isNodeReady(current), true);
    assert.equal(isUnschedulable(current), false);
    assert.equal(current.metadata.annotations?.[KURED_REBOOT_IN_PROGRESS], undefined);
    assert.equal(current.metadata.annotations?.[KURED_MOST_RECENT_REBOOT_NEEDED], startedAt);
    assert.equal(
      store.get('daemonsets', 'kube-system', 'kured')?.metadata.annotations?.[KURED_LOCK],
      undefined,
    );
    assert.deepEqual(
      kured.events.filter((event) => event.step === 'notified').map((event) => event.message),
      [
        `Draining node ${NODE0}`,
        `Rebooting node ${NODE0}`,
        `Node ${NODE0} rebooted & uncordoned successfully!`,
      ],
    );
    world.stop();
  });

  void it('keeps an administrator cordon and an earlier pending timestamp, one node at a time', () => {
    const world = makeWorld();
    const { kured } = world.cluster();
    const pendingSince = node(world, NODE2).metadata.annotations?.[KURED_REBOOT_IN_PROGRESS];
    const run = kured.patchAndReboot([NODE1, NODE2]);
    assert.equal(isUnschedulable(node(world, NODE2)), false, 'the second node waits for the first');
    world.clock.advanceBy(600);
    assert.equal(run.state, 'succeeded');
    assert.deepEqual(run.rebooted, [NODE1, NODE2]);
    assert.equal(isUnschedulable(node(world, NODE1)), true, 'an admin cordon survives the reboot');
    assert.equal(node(world, NODE2).metadata.annotations?.[KURED_MOST_RECENT_REBOOT_NEEDED], pendingSince);
    assert.equal(node(world, NODE2).metadata.annotations?.[KURED_REBOOT_IN_PROGRESS], undefined);
    world.stop();
  });
});

void describe('autoscaler stand-in', () => {
  void it('removes an idle node unless it carries scale-down-disabled=true', () => {
    const world = makeWorld();
    const { world: cluster, autoscaler } = world.cluster();
    world.clock.advanceBy(30);
    const idle = autoscaler.candidates();
    assert.ok(idle.length > 0, 'with 2 web pods on 3 nodes at least one node is empty');
    for (const name of idle) {
      cluster.store.mutate('nodes', undefined, name, (target) => {
        target.metadata.annotations = {
          ...(target.metadata.annotations ?? {}),
          [SCALE_DOWN_DISABLED]: 'true',
        };
      });
    }
    assert.equal(autoscaler.scaleDownIdle(), undefined);
    const [protectedNode] = idle;
    assert.ok(protectedNode);
    cluster.store.mutate('nodes', undefined, protectedNode, (target) => {
      target.metadata.annotations = {
        ...(target.metadata.annotations ?? {}),
        [SCALE_DOWN_DISABLED]: 'false',
      };
    });
    assert.equal(autoscaler.scaleDownIdle(), protectedNode);
    assert.equal(cluster.store.get('nodes', undefined, protectedNode), undefined);
    assert.equal(world.compute.listInstances(cluster.scaleSetIds()[0] ?? '').length, 2);
    world.stop();
  });
});

void describe('autoscaler loop', () => {
  void it('removes a node only after it stayed empty for the unneeded time', () => {
    const world = makeWorld();
    const { world: cluster, autoscaler } = world.cluster();
    world.clock.advanceBy(30);
    const idle = autoscaler.candidates();
    assert.ok(idle.length > 0);
    autoscaler.enable(10);
    world.clock.advanceBy(300);
    assert.equal(autoscaler.removed.length, 0);
    world.clock.advanceBy(320);
    assert.deepEqual(
      autoscaler.removed.map((entry) => entry.node),
      idle,
    );
    for (const name of idle) assert.equal(cluster.store.get('nodes', undefined, name), undefined);
    autoscaler.disable();
    world.stop();
  });
});

void describe('scale-out', () => {
  void it('a new instance joins faster from a prototype image without bootstrap extensions', () => {
    const world = makeWorld();
    const scaleSetId = world.cluster().world.scaleSetIds()[0] ?? '';
    const [fromMarketplace] = world.compute.scaleOut(scaleSetId, 1);
    assert.ok(fromMarketplace);
    world.clock.advanceBy(world.latency.newNodeJoinFromMarketplaceSeconds);

    // What the refresh does: point the model at the gallery image and drop the bootstrap extension (one PUT).
    const model = world.compute.getScaleSetModel(scaleSetId) as {
      virtualMachineProfile: {
        storageProfile: { imageReference: Record<string, unknown> };
        extensionProfile: { extensions: unknown[] };
      };
    };
    model.virtualMachineProfile.storageProfile.imageReference = {
      id: '/subscriptions/3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f/resourceGroups/rg-K8s-Prod/providers/Microsoft.Compute/galleries/sig_prod/images/pool1',
    };
    model.virtualMachineProfile.extensionProfile.extensions = [];
    world.compute.replaceScaleSet(scaleSetId, {
      properties: model,
      tags: {},
    });
    world.clock.advanceBy(world.latency.scaleSetUpdateSeconds);
    assert.equal(world.compute.getScaleSet(scaleSetId)?.bootstrapExtensionsRemain, false);
    world.compute.scaleOut(scaleSetId, 1);
    world.clock.advanceBy(world.latency.newNodeJoinFromPrototypeSeconds);

    const joins = world.joinRecords();
    assert.deepEqual(
      joins.map((join) => [join.fromPrototype, join.seconds]),
      [
        [false, world.latency.newNodeJoinFromMarketplaceSeconds],
        [true, world.latency.newNodeJoinFromPrototypeSeconds],
      ],
    );
    assert.ok(
      world.latency.newNodeJoinFromPrototypeSeconds < world.latency.newNodeJoinFromMarketplaceSeconds,
    );
    const joined = node(world, joins[1]?.nodeName ?? '');
    assert.equal(isNodeReady(joined), true);
    world.stop();
  });
});

void describe('fault presets', () => {
  void it('applies world facts at their time: node deleted, ZRS gone, a PDB that never allows', () => {
    const world = makeWorld({
      faults: [
        { preset: 'node-deleted', at: '10m', node: NODE2 },
        { preset: 'zrs-unsupported', at: '1m' },
        { preset: 'pdb-never-allows', workload: 'web' },
        { preset: 'arm-429-storm', at: '2m', for: '1m' },
      ],
    });
    const { store } = world.cluster().world;
    assert.ok(store.get('poddisruptionbudgets', 'default', 'web-never'));
    assert.equal(world.compute.regionCapabilities('westeurope').zrs, true);
    world.clock.advanceBy(120);
    assert.equal(world.compute.regionCapabilities('westeurope').zrs, false);
    assert.equal(world.faults.check('arm', 'Microsoft.Compute/snapshots/write')?.status, 429);
    world.clock.advanceBy(500);
    assert.equal(store.get('nodes', undefined, NODE2), undefined);
    assert.equal(world.faults.check('arm', 'Microsoft.Compute/snapshots/write'), undefined);
    world.stop();
  });
});

void describe('several clusters and Flexible scale sets', () => {
  void it('keeps each cluster its own nodes; Flexible nodes carry the plain VM providerID', () => {
    const scenario = parseScenario({
      subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
      location: 'westeurope',
      start: '2026-11-22T12:00:00Z',
      latency: { profile: 'fast' },
      clusters: [
        { name: 'a', resourceGroup: 'rg-a', scaleSets: [{ name: 'k8s-pool1-1-vmss', capacity: 2 }] },
        {
          name: 'b',
          resourceGroup: 'RG-B',
          scaleSets: [
            { name: 'flexpool', orchestrationMode: 'Flexible', computerNamePrefix: 'flexpool', capacity: 1 },
          ],
        },
      ],
    });
    const world = createWorld({ scenario });
    const nodesOf = (cluster: string): KubeObject[] => world.cluster(cluster).world.store.list('nodes');
    assert.deepEqual(
      nodesOf('a').map((entry) => entry.metadata.name),
      ['k8s-pool1-1-vmss000000', 'k8s-pool1-1-vmss000001'],
    );
    const [flex] = nodesOf('b');
    assert.ok(flex);
    assert.match(flex.metadata.name, /^flexpool[0-9a-f]{6}$/);
    assert.match(
      String(specOf(flex).providerID),
      /^azure:\/\/\/subscriptions\/[^/]+\/resourceGroups\/rg-b\/providers\/Microsoft\.Compute\/virtualMachines\/flexpool_[0-9a-f]{8}$/,
    );
    assert.equal(world.clusterOfNode(flex.metadata.name)?.world.name, 'b');
    assert.throws(() => world.cluster('c'), /known clusters are a, b/);
    world.stop();
  });
});
