/**
 * The CAPZ-like reconciler (sim/world/capz/) on the manual clock: the objects made at load, a template
 * change written to the model and rolled out per the strategy, a direct model write reverted at the
 * resync, a broken image stalling the rollout, replicas, canary pools, CABPK's token rotation.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';

import type { KubeObject, KubeResource, KubeStore } from '../../../../sim/contracts.js';
import { CAPZ_SCENARIO } from '../../../../sim/index.js';
import { isNodeReady } from '../../../../sim/kube/objects.js';
import { loadScenarioFile, type Scenario } from '../../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../../sim/world/world.js';

const SUBSCRIPTION = '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f';
const RG = 'rg-capz-lab';
const POOL = 'capz-lab-mp-0';
const POOL_ID = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/${POOL}`;
const NEW_MARKETPLACE = {
  publisher: 'Canonical',
  offer: '0001-com-ubuntu-server-jammy',
  sku: '22_04-lts-gen2',
  version: '22.04.202612010',
};

async function makeWorld(change?: (scenario: Scenario) => void): Promise<World> {
  const scenario = await loadScenarioFile(CAPZ_SCENARIO);
  scenario.start = '2026-11-22T12:00:00Z';
  scenario.latency = { ...scenario.latency, profile: 'fast' };
  const mgmt = scenario.clusters.find((cluster) => cluster.name === 'mgmt');
  if (mgmt?.clusterApi) mgmt.clusterApi.syncPeriod = '2m';
  change?.(scenario);
  return createWorld({ scenario });
}

function mgmtStore(world: World): KubeStore {
  return world.cluster('mgmt').world.store;
}

function labStore(world: World): KubeStore {
  return world.cluster('capz-lab').world.store;
}

/** A spec write as the API server makes it: generation + 1. */
function patchSpec(
  store: KubeStore,
  resource: KubeResource,
  name: string,
  change: (spec: Record<string, unknown>) => void,
): void {
  store.mutate(resource, 'default', name, (object) => {
    const spec = (object.spec ?? {}) as Record<string, unknown>;
    change(spec);
    object.spec = spec;
    object.metadata.generation = (object.metadata.generation ?? 1) + 1;
  });
}

function setImage(world: World, image: Record<string, unknown>): void {
  patchSpec(mgmtStore(world), 'azuremachinepools', POOL, (spec) => {
    (spec.template as Record<string, unknown>).image = image;
  });
}

function poolNodes(world: World, prefix = POOL): KubeObject[] {
  return labStore(world)
    .list('nodes')
    .filter((node) => node.metadata.name.startsWith(prefix));
}

function imageOf(world: World, id = POOL_ID): unknown {
  return world.compute.getScaleSet(id)?.imageReference;
}

const IMAGE_ID = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/gallery/images/workers`;
/** A private gallery version: CAPZ writes its ARM id only with subscriptionID and resourceGroup. */
const GALLERY_IMAGE = {
  computeGallery: {
    gallery: 'gallery',
    name: 'workers',
    version: '1.0.0',
    subscriptionID: SUBSCRIPTION,
    resourceGroup: RG,
  },
};
/** What a capture must not carry for a clone to join as itself (the product's kubeadm scrub, roughly). */
const SCRUB = [
  /^\/etc\/kubernetes\/(kubelet|bootstrap-kubelet)\.conf$/,
  /^\/etc\/kubernetes\/(pki|manifests)\//,
  /^\/var\/lib\/kubelet\//,
  /^\/etc\/(machine-id|hostname)$/,
  /^\/etc\/ssh\/ssh_host_/,
  /^\/var\/lib\/cloud\//,
];

/** Gallery image version 1.0.0 captured from the pool's first node, scrubbed or as it runs. */
function captureImage(world: World, scrubbed: boolean): void {
  world.compute.addGallery({
    subscriptionId: SUBSCRIPTION,
    resourceGroup: RG,
    name: 'gallery',
    images: [{ name: 'workers' }],
  });
  const disk = world.compute.listInstances(POOL_ID)[0]?.osDiskId ?? '';
  const original = world.compute.getDiskContent(disk);
  assert.ok(original);
  if (scrubbed) {
    const copy = structuredClone(original);
    for (const path of Object.keys(copy.files))
      if (SCRUB.some((pattern) => pattern.test(path))) delete copy.files[path];
    world.compute.setDiskContent(disk, copy);
  }
  const snapshot = world.compute.createSnapshot(SUBSCRIPTION, RG, 'snap', {
    location: 'westeurope',
    sourceResourceId: disk,
    incremental: true,
    tags: {},
  });
  world.compute.setDiskContent(disk, original);
  world.compute.createImageVersion(
    IMAGE_ID,
    '1.0.0',
    {
      location: 'westeurope',
      tags: {},
      properties: { storageProfile: { osDiskImage: { source: { id: snapshot.id } } } },
    },
    {},
  );
  world.clock.advanceBy(world.latency.imageVersionCreateSeconds + 10);
}

void describe('CAPZ reconciler', () => {
  void it('creates the Cluster API objects of every CAPZ pool at load, and none for the control plane', async () => {
    const world = await makeWorld();
    try {
      const store = mgmtStore(world);
      assert.deepEqual(
        store.list('clusters').map((object) => object.metadata.name),
        ['capz-lab'],
      );
      for (const resource of ['machinepools', 'azuremachinepools', 'kubeadmconfigs'] as const) {
        assert.deepEqual(
          store.list(resource).map((object) => object.metadata.name),
          [POOL],
          resource,
        );
      }
      const machinePool = store.get('machinepools', 'default', POOL);
      assert.equal(machinePool?.metadata.labels?.['cluster.x-k8s.io/cluster-name'], 'capz-lab');
      assert.deepEqual((machinePool?.spec as { replicas: number }).replicas, 3);
      const amp = store.get('azuremachinepools', 'default', POOL);
      assert.deepEqual((amp?.spec as { template: { image: unknown } }).template.image, {
        marketplace: {
          publisher: 'Canonical',
          offer: '0001-com-ubuntu-server-jammy',
          sku: '22_04-lts-gen2',
          version: 'latest',
        },
      });
      assert.equal(amp?.metadata.ownerReferences?.[0]?.kind, 'MachinePool');
      const secret = store.get('secrets', 'default', POOL);
      const value = Buffer.from((secret?.data as { value: string }).value, 'base64').toString();
      assert.equal(Buffer.from(value).toString('base64'), world.compute.getScaleSet(POOL_ID)?.customData);
      const machines = store.list('azuremachinepoolmachines', 'default');
      assert.deepEqual(
        machines.map((machine) => machine.metadata.name),
        [`${POOL}-0`, `${POOL}-1`, `${POOL}-2`],
      );
      assert.equal(
        machines[0]?.metadata.labels?.['azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool'],
        POOL,
      );
      assert.deepEqual(machines[0]?.status, {
        ready: true,
        latestModelApplied: true,
        provisioningState: 'Succeeded',
        version: 'v1.30.6',
        nodeRef: {
          apiVersion: 'v1',
          kind: 'Node',
          name: `${POOL}000000`,
          uid: labStore(world).get('nodes', undefined, `${POOL}000000`)?.metadata.uid,
        },
      });
      const status = store.get('machinepools', 'default', POOL)?.status as Record<string, unknown>;
      assert.equal(status.phase, 'Running');
      const providerIDs = world.compute
        .listInstances(POOL_ID)
        .map((instance) => instance.providerId)
        .sort();
      for (const resource of ['machinepools', 'azuremachinepools'] as const) {
        const spec = store.get(resource, 'default', POOL)?.spec as { providerIDList?: string[] };
        assert.deepEqual(spec.providerIDList, providerIDs, resource);
      }
      assert.equal(status.readyReplicas, 3);
      world.clock.advanceBy(60);
      assert.deepEqual(world.capzEvents(), [], 'a consistent world needs no write');
    } finally {
      world.stop();
    }
  });

  void it('writes a template change to the model and rolls the pool within maxSurge/maxUnavailable', async () => {
    const world = await makeWorld();
    try {
      const before = new Set(poolNodes(world).map((node) => node.metadata.name));
      setImage(world, { marketplace: NEW_MARKETPLACE });
      world.clock.advanceBy(3);
      assert.deepEqual(imageOf(world), NEW_MARKETPLACE);
      const scaleSet = world.compute.getScaleSet(POOL_ID);
      const data = Buffer.from(scaleSet?.customData ?? '', 'base64').toString();
      assert.equal(scaleSet?.tags['capz-custom-data-hash'], createHash('sha256').update(data).digest('hex'));
      assert.equal(scaleSet?.capacity, 4, 'surged by maxSurge 1');
      let minReady = Infinity;
      for (let second = 0; second < 1200; second += 5) {
        world.clock.advanceBy(5);
        minReady = Math.min(minReady, poolNodes(world).filter(isNodeReady).length);
      }
      assert.ok(minReady >= 3, `never below replicas − maxUnavailable Ready (saw ${minReady})`);
      const instances = world.compute.listInstances(POOL_ID);
      assert.equal(instances.length, 3);
      assert.ok(instances.every((instance) => instance.latestModelApplied));
      const after = poolNodes(world).map((node) => node.metadata.name);
      assert.equal(after.length, 3);
      assert.ok(
        after.every((name) => !before.has(name)),
        'every old node is gone',
      );
      const machines = mgmtStore(world).list('azuremachinepoolmachines', 'default');
      assert.equal(machines.length, 3);
      assert.ok(
        machines.every(
          (machine) => (machine.status as { ready: boolean; latestModelApplied: boolean }).ready,
        ),
      );
      const kinds = world.capzEvents().map((event) => event.kind);
      assert.equal(kinds.filter((kind) => kind === 'instance-delete').length, 3);
      assert.ok(!kinds.includes('revert'));
    } finally {
      world.stop();
    }
  });

  void it("a template naming a missing image: CAPZ's PUT fails, the model and machines stay, the condition says why", async () => {
    const world = await makeWorld();
    try {
      const before = imageOf(world);
      const instances = world.compute.listInstances(POOL_ID).map((instance) => instance.instanceId);
      // No subscriptionID/resourceGroup: CAPZ writes a community gallery reference (converters/image.go).
      setImage(world, { computeGallery: { gallery: 'gallery', name: 'workers', version: '1.0.0' } });
      world.clock.advanceBy(600);

      assert.deepEqual(imageOf(world), before);
      assert.deepEqual(
        world.compute.listInstances(POOL_ID).map((instance) => instance.instanceId),
        instances,
      );
      const failed = world.capzEvents().filter((event) => event.kind === 'model-write-failed');
      assert.equal(failed.length, 1, 'recorded once, retried at every reconcile');
      assert.match(
        failed[0]?.detail ?? '',
        /404 GalleryImageNotFound: The gallery image \/CommunityGalleries\/gallery\/Images\/workers\/Versions\/1.0.0 is not available/,
      );
      const amp = world.cluster('mgmt').world.store.get('azuremachinepools', 'default', POOL) as {
        status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      };
      const condition = amp.status?.conditions?.find((entry) => entry.type === 'BootstrapSucceeded');
      assert.equal(condition?.status, 'False');
      assert.equal(condition?.reason, 'Failed');
      assert.match(
        condition?.message ?? '',
        /^scalesets failed to create or update. err: GalleryImageNotFound/,
      );
      assert.ok(
        !world.capzEvents().some((event) => event.kind === 'model-write' || event.kind === 'machine-delete'),
      );
    } finally {
      world.stop();
    }
  });

  void it('rolls onto a captured gallery image version: the clones join with the kubeadm join in customData', async () => {
    const world = await makeWorld();
    try {
      captureImage(world, true);
      setImage(world, GALLERY_IMAGE);
      world.clock.advanceBy(1200);
      assert.deepEqual(imageOf(world), { id: `${IMAGE_ID}/versions/1.0.0` });
      assert.deepEqual(
        world.compute
          .listInstances(POOL_ID)
          .map((instance) => [instance.instanceId, instance.latestModelApplied]),
        [
          ['3', true],
          ['4', true],
          ['5', true],
        ],
      );
      assert.equal(poolNodes(world).filter(isNodeReady).length, 3);
      assert.deepEqual(
        world.joinRecords().map((record) => record.bootstrap),
        ['image-kubeadm-join', 'image-kubeadm-join', 'image-kubeadm-join'],
      );
    } finally {
      world.stop();
    }
  });

  void it('reverts a direct model write at the next resync, not before', async () => {
    const world = await makeWorld();
    try {
      const seeded = imageOf(world);
      const model = world.compute.getScaleSetModel(POOL_ID) ?? {};
      const profile = model.virtualMachineProfile as { storageProfile: { imageReference: unknown } };
      profile.storageProfile.imageReference = { ...NEW_MARKETPLACE, version: '22.04.209901010' };
      world.compute.replaceScaleSet(POOL_ID, {
        properties: model,
        tags: world.compute.getScaleSet(POOL_ID)?.tags ?? {},
      });
      world.clock.advanceBy(60);
      assert.equal(
        (imageOf(world) as { version: string }).version,
        '22.04.209901010',
        'the requeue leaves it',
      );
      world.clock.advanceBy(61);
      assert.deepEqual(imageOf(world), seeded);
      const reverts = world.capzEvents().filter((event) => event.kind === 'revert');
      assert.equal(reverts.length, 1);
      assert.equal(reverts[0]?.pool, POOL);
      // The machines run the template's image all along: CAPZ replaces none of them (the write back
      // surges, as the model it replaced was not the instances', and the surplus machine goes again).
      world.clock.advanceBy(600);
      const deleted = world
        .capzEvents()
        .filter((event) => event.kind === 'machine-delete')
        .map((event) => event.detail);
      assert.ok(
        deleted.every((detail) => detail.startsWith(`deleting machine ${POOL}-3 `)),
        deleted.join('; '),
      );
      assert.deepEqual(
        world.compute.listInstances(POOL_ID).map((instance) => instance.instanceId),
        ['0', '1', '2'],
      );
    } finally {
      world.stop();
    }
  });

  void it('stalls when the new machines never join: old machines are kept, nothing rolls back', async () => {
    const world = await makeWorld();
    try {
      // A capture of a node that was not scrubbed: kubeadm join's preflight refuses it on every clone.
      captureImage(world, false);
      setImage(world, GALLERY_IMAGE);
      world.clock.advanceBy(1200);
      assert.deepEqual(imageOf(world), { id: `${IMAGE_ID}/versions/1.0.0` });
      const instances = world.compute.listInstances(POOL_ID);
      assert.equal(instances.length, 4, 'three old and one surge instance');
      assert.equal(poolNodes(world).filter(isNodeReady).length, 3);
      assert.ok(!world.capzEvents().some((event) => event.kind === 'machine-delete'));
      const status = mgmtStore(world).get('machinepools', 'default', POOL)?.status as Record<string, unknown>;
      assert.equal(status.readyReplicas, 3);
      assert.equal(status.replicas, 4);
    } finally {
      world.stop();
    }
  });

  void it('rolls a stalled rollout back when the template gets its old image: the broken machine goes, the old stay', async () => {
    const world = await makeWorld();
    try {
      const seededImage = (
        mgmtStore(world).get('azuremachinepools', 'default', POOL)?.spec as {
          template: { image: Record<string, unknown> };
        }
      ).template.image;
      const before = poolNodes(world).map((node) => node.metadata.name);
      captureImage(world, false);
      setImage(world, GALLERY_IMAGE);
      world.clock.advanceBy(600);
      assert.equal(world.compute.listInstances(POOL_ID).length, 4);
      setImage(world, seededImage);
      world.clock.advanceBy(600);
      assert.deepEqual(imageOf(world), {
        publisher: 'Canonical',
        offer: '0001-com-ubuntu-server-jammy',
        sku: '22_04-lts-gen2',
        version: 'latest',
      });
      assert.deepEqual(
        world.compute.listInstances(POOL_ID).map((instance) => instance.instanceId),
        ['0', '1', '2'],
      );
      assert.deepEqual(
        poolNodes(world).map((node) => node.metadata.name),
        before,
      );
      const machines = mgmtStore(world).list('azuremachinepoolmachines', 'default');
      assert.ok(
        machines.every((machine) => (machine.status as { latestModelApplied: boolean }).latestModelApplied),
      );
    } finally {
      world.stop();
    }
  });

  void it('follows MachinePool replicas: scale out, then drain and delete the oldest on scale in', async () => {
    const world = await makeWorld();
    try {
      patchSpec(mgmtStore(world), 'machinepools', POOL, (spec) => {
        spec.replicas = 4;
      });
      world.clock.advanceBy(3);
      assert.equal(world.compute.getScaleSet(POOL_ID)?.capacity, 4);
      world.clock.advanceBy(120);
      assert.equal(poolNodes(world).filter(isNodeReady).length, 4);
      patchSpec(mgmtStore(world), 'machinepools', POOL, (spec) => {
        spec.replicas = 2;
      });
      world.clock.advanceBy(300);
      assert.deepEqual(
        world.compute.listInstances(POOL_ID).map((instance) => instance.instanceId),
        ['2', '3'],
      );
      assert.equal(mgmtStore(world).list('azuremachinepoolmachines', 'default').length, 2);
    } finally {
      world.stop();
    }
  });

  void it('creates a canary pool from its objects and deletes it with them', async () => {
    const world = await makeWorld();
    try {
      const store = mgmtStore(world);
      const name = `${POOL}-canary-1a2b3c`;
      const labels = { 'cluster.x-k8s.io/cluster-name': 'capz-lab', 'vmss-prototype.io/canary-of': POOL };
      const amp = store.get('azuremachinepools', 'default', POOL);
      store.create('kubeadmconfigs', {
        apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1',
        kind: 'KubeadmConfig',
        metadata: { name, namespace: 'default', labels },
        spec: {},
      });
      store.create('azuremachinepools', {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'AzureMachinePool',
        metadata: { name, namespace: 'default', labels },
        spec: {
          ...(amp?.spec as object),
          template: {
            ...(amp?.spec as { template: object }).template,
            image: { marketplace: NEW_MARKETPLACE },
          },
        },
      });
      store.create('machinepools', {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'MachinePool',
        metadata: { name, namespace: 'default', labels },
        spec: {
          clusterName: 'capz-lab',
          replicas: 1,
          template: {
            spec: {
              clusterName: 'capz-lab',
              bootstrap: {
                configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', name },
              },
              infrastructureRef: {
                apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
                kind: 'AzureMachinePool',
                name,
              },
            },
          },
        },
      });
      world.clock.advanceBy(3);
      const canaryId = POOL_ID.replace(/[^/]+$/, name);
      const canary = world.compute.getScaleSet(canaryId);
      assert.ok(canary, 'the canary scale set exists');
      assert.deepEqual(canary.imageReference, NEW_MARKETPLACE);
      assert.equal(canary.tags['sigs.k8s.io_cluster-api-provider-azure_cluster_capz-lab'], 'owned');
      // CABPK issues the canary's config a token of its own; the data is otherwise the pool's.
      const config = store.get('kubeadmconfigs', 'default', name);
      const token = (
        config?.spec as { joinConfiguration: { discovery: { bootstrapToken: { token: string } } } }
      ).joinConfiguration.discovery.bootstrapToken.token;
      assert.notEqual(token, 'q4w8e2.r6t1y5u9i3o7p0as');
      assert.ok(
        labStore(world).get('secrets', 'kube-system', `bootstrap-token-${token.split('.')[0] ?? ''}`),
      );
      const poolData = Buffer.from(world.compute.getScaleSet(POOL_ID)?.customData ?? '', 'base64').toString();
      assert.equal(
        Buffer.from(canary.customData ?? '', 'base64').toString(),
        poolData.replace('q4w8e2.r6t1y5u9i3o7p0as', token),
      );
      world.clock.advanceBy(120);
      assert.equal(poolNodes(world, name).filter(isNodeReady).length, 1, 'its node joined');
      assert.equal(
        (store.get('machinepools', 'default', name)?.status as { readyReplicas: number }).readyReplicas,
        1,
      );
      store.remove('machinepools', 'default', name);
      world.clock.advanceBy(3);
      assert.equal(world.compute.getScaleSet(canaryId), undefined);
      assert.equal(poolNodes(world, name).length, 0);
      assert.equal(store.get('azuremachinepools', 'default', name), undefined);
      assert.equal(store.list('azuremachinepoolmachines', 'default').length, 3);
      assert.equal(world.compute.listInstances(POOL_ID).length, 3, 'the pool itself is untouched');
    } finally {
      world.stop();
    }
  });

  void it('rotates a MachinePool token about to expire, and a scale-up carries it to the model', async () => {
    const world = await makeWorld((scenario) => {
      const lab = scenario.clusters.find((cluster) => cluster.name === 'capz-lab');
      const token = lab?.kubeadm?.tokens[0];
      if (token) token.ttl = '10m';
    });
    try {
      world.clock.advanceBy(5 * 60 + 1);
      const rotations = world.capzEvents().filter((event) => event.kind === 'token-rotate');
      assert.equal(rotations.length, 1);
      const config = mgmtStore(world).get('kubeadmconfigs', 'default', POOL);
      const token = (
        config?.spec as { joinConfiguration: { discovery: { bootstrapToken: { token: string } } } }
      ).joinConfiguration.discovery.bootstrapToken.token;
      assert.notEqual(token, 'q4w8e2.r6t1y5u9i3o7p0as');
      assert.ok(
        labStore(world).get('secrets', 'kube-system', `bootstrap-token-${token.split('.')[0] ?? ''}`),
      );
      assert.ok(
        !Buffer.from(world.compute.getScaleSet(POOL_ID)?.customData ?? '', 'base64')
          .toString()
          .includes(token),
        'no write yet',
      );
      world.clock.advanceBy(10 * 60);
      patchSpec(mgmtStore(world), 'machinepools', POOL, (spec) => {
        spec.replicas = 4;
      });
      world.clock.advanceBy(3);
      const data = Buffer.from(world.compute.getScaleSet(POOL_ID)?.customData ?? '', 'base64').toString();
      const current = (
        mgmtStore(world).get('kubeadmconfigs', 'default', POOL)?.spec as {
          joinConfiguration: { discovery: { bootstrapToken: { token: string } } };
        }
      ).joinConfiguration.discovery.bootstrapToken.token;
      assert.ok(data.includes(current), 'the scale-up wrote the fresh bootstrap data');
      world.clock.advanceBy(120);
      assert.equal(
        poolNodes(world).filter(isNodeReady).length,
        4,
        'the new node joined with the rotated token',
      );
    } finally {
      world.stop();
    }
  });
});
