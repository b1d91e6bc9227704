/**
 * De-identification the world verifies: the product's prep script runs in a prep pod over the donor's
 * disk model, the disk is captured (snapshot → image version → scale set model) and the pool scales
 * out. Per bootstrap flavour, clones of a correctly prepared image join as themselves; a script with
 * one identity path left out yields a clone the world flags (one test per identity file); kubeadm
 * clones join only when their kubelet credentials are gone and customData runs `kubeadm join` (the full
 * kubeadm model: tests/sim/world/kubeadm.test.ts); a k3s donor whose node password was removed is rejected when it restarts.
 * The scripts run in a real shell over the disk's tree (sim/world/real-shell.ts), kamino-style pods too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { prepPodManifest } from '../../../shared/adapters/kubernetes/pod-manifests.js';
import { buildPrepScript } from '../../../shared/domain/prep-script.js';
import type { InstanceInfo } from '../../../sim/arm/compute-state.js';
import { isNodeReady } from '../../../sim/kube/objects.js';
import { parseScenario } from '../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../sim/world/world.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const SUBSCRIPTION = '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f';
const RG = 'rg-k8s';
const PREP_IMAGE = 'mcr.microsoft.com/cbl-mariner/busybox:2.0';
const KUBEADM_JOIN =
  '#cloud-config\nruncmd:\n  - kubeadm join 10.0.0.4:6443 --token abcdef.0123456789abcdef\n';

type Flavour = 'aks-engine' | 'kubeadm' | 'k3s' | 'rke2';

function poolName(flavour: Flavour): string {
  return `${flavour.replace('-', '')}-pool-vmss`;
}

/** A Flatcar-like image: no cloud-init to replace what the disk holds (sim/world/image-flavour.ts). */
const NO_CLOUD_INIT = { cloudInit: false, hostKeyGeneration: 'when-missing' } as const;

function makeWorld(image?: { cloudInit: boolean; hostKeyGeneration: 'when-missing' | 'never' }): World {
  const scenario = parseScenario({
    subscriptionId: SUBSCRIPTION,
    location: 'westeurope',
    start: '2026-11-22T12:00:00Z',
    latency: { profile: 'fast' },
    clusters: [
      {
        name: 'prod',
        resourceGroup: RG,
        scaleSets: (['aks-engine', 'kubeadm', 'k3s', 'rke2'] as const).map((flavour) => ({
          name: poolName(flavour),
          capacity: 2,
          bootstrapFlavour: flavour,
          ...(image === undefined ? {} : { image }),
          ...(flavour === 'kubeadm' ? { customData: KUBEADM_JOIN } : {}),
        })),
        workloads: [
          {
            kind: 'DaemonSet',
            namespace: 'kube-system',
            name: 'kube-proxy',
            tolerations: [{ operator: 'Exists' }],
          },
        ],
      },
    ],
  });
  const world = createWorld({ scenario });
  world.clock.advanceBy(5);
  world.compute.addGallery({
    subscriptionId: SUBSCRIPTION,
    resourceGroup: RG,
    name: 'gallery',
    images: (['aks-engine', 'kubeadm', 'k3s', 'rke2'] as const).map((flavour) => ({ name: flavour })),
  });
  return world;
}

function scaleSetId(flavour: Flavour): string {
  return `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/${poolName(flavour)}`;
}

function instances(world: World, flavour: Flavour): InstanceInfo[] {
  return world.compute.listInstances(scaleSetId(flavour));
}

/**
 * Runs `script` in the product's prep pod on the pool's first node (or, with `command`, a pod whose
 * container runs that command instead) and waits until the VM is stopped.
 */
function prepare(world: World, flavour: Flavour, script: string, command?: string[]): InstanceInfo {
  const donor = instances(world, flavour)[0];
  assert.ok(donor);
  const store = world.cluster().world.store;
  const manifest = prepPodManifest({
    name: `prep-${flavour}`,
    namespace: 'kube-system',
    nodeName: donor.computerName.toLowerCase(),
    image: PREP_IMAGE,
    script,
    labels: {},
  });
  const container = manifest.spec?.containers[0];
  if (command !== undefined && container) container.command = command;
  store.create('pods', manifest as never);
  world.clock.advanceBy(
    world.latency.podStartSeconds + world.latency.imagePullSeconds + world.latency.prepScriptSeconds,
  );
  // A kamino-style script sleeps 4 s (simulated) first.
  world.clock.advanceBy(world.latency.instanceStopSeconds + 1 + (command === undefined ? 0 : 4));
  const stopped = world.compute.getInstance(donor.id);
  assert.equal(stopped?.powerState, 'stopped', JSON.stringify(world.prepRecords().at(-1)));
  return stopped;
}

/** Captures the stopped donor (snapshot → version), points the model at it, starts the donor, adds one instance. */
function captureAndScaleOut(
  world: World,
  flavour: Flavour,
  donor: InstanceInfo,
  options: { keepCustomData?: boolean } = {},
): InstanceInfo {
  const snapshot = world.compute.createSnapshot(SUBSCRIPTION, RG, `snap-${flavour}`, {
    location: 'westeurope',
    sourceResourceId: donor.osDiskId ?? '',
    incremental: true,
    tags: {},
  });
  const imageId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/gallery/images/${flavour}`;
  world.compute.createImageVersion(
    imageId,
    '2026.1122.1200',
    {
      location: 'westeurope',
      tags: {},
      properties: {
        storageProfile: { osDiskImage: { source: { id: snapshot.id } } },
        publishingProfile: { excludeFromLatest: false },
      },
    },
    {},
  );
  world.clock.advanceBy(world.latency.imageVersionCreateSeconds + 1);
  const model = world.compute.getScaleSetModel(scaleSetId(flavour)) ?? {};
  const profile = model.virtualMachineProfile as {
    storageProfile: { imageReference: Record<string, unknown> };
    osProfile: Record<string, unknown>;
  };
  profile.storageProfile.imageReference = { id: imageId };
  if (options.keepCustomData !== true)
    profile.osProfile.customData = Buffer.from('#cloud-config\n').toString('base64');
  world.compute.replaceScaleSet(scaleSetId(flavour), { properties: model, tags: {} });
  world.compute.startInstance(donor.id);
  const [clone] = world.compute.scaleOut(scaleSetId(flavour), 1);
  assert.ok(clone);
  world.clock.advanceBy(world.latency.newNodeJoinFromMarketplaceSeconds + world.latency.nodeBootSeconds + 5);
  return clone;
}

function nodeOf(world: World, instance: InstanceInfo) {
  return world.cluster().world.store.get('nodes', undefined, instance.computerName.toLowerCase());
}

/** The product's aks-engine script with one removal left out. */
function scriptWithout(path: string): string {
  const script = buildPrepScript({ ancestry: 'test' });
  const removed = script.replace(` ${path}`, '');
  assert.notEqual(removed, script, `${path} is in the script`);
  return removed;
}

void describe('identity: clones of a correctly prepared image join as themselves', () => {
  for (const flavour of ['aks-engine', 'k3s', 'rke2'] as const) {
    void it(`${flavour}: the clone registers under its own name, nothing is shared or inherited`, () => {
      const world = makeWorld();
      const donor = prepare(world, flavour, buildPrepScript({ ancestry: 'built by the test', flavour }));
      const record = world.prepRecords().at(-1);

      const clone = captureAndScaleOut(world, flavour, donor);

      assert.equal(record?.outcome, 'succeeded');
      assert.ok(record?.changed.includes('/etc/machine-id'));
      const node = nodeOf(world, clone);
      assert.ok(node && isNodeReady(node), 'the clone joined as itself');
      assert.ok(isNodeReady(nodeOf(world, donor) ?? ({} as never)), 'the donor is back');
      const identity = world.identity();
      assert.deepEqual(identity.violations, []);
      assert.deepEqual(identity.findings, []);
      const disk = world.compute.getDiskContent(clone.osDiskId ?? '');
      assert.match(disk?.files['/var/log/vmss-prototype-ancestry.log'] ?? '', /built by the test/);
      assert.ok((disk?.images ?? []).includes(PREP_IMAGE), 'the image cache came with the image');
      world.stop();
    });
  }
});

/**
 * A prep pod written as kamino wrote its own (not the product's manifest): the image's nsenter by its
 * absolute path entering PID 1's mount namespace by file, `/bin/`-prefixed commands, `sh -xc`, command
 * substitutions in double quotes and `cp /dev/null`.
 */
function kaminoStyle(removes: string, emptiesMachineId = true): string[] {
  const script = [
    '/bin/sleep 4',
    '/bin/echo "$(/bin/date -u +%FT%TZ) image built from $(/bin/hostname)" >> /var/log/vmss-prototype-ancestry.log',
    `/bin/rm -rf ${removes}`,
    ...(emptiesMachineId ? ['/bin/cp /dev/null /etc/machine-id'] : []),
    '/bin/systemctl poweroff --force --message=prototype',
  ].join(' && ');
  return ['/usr/bin/nsenter', '-m/proc/1/ns/mnt', '--', '/bin/sh', '-xc', script];
}

const KAMINO_STYLE_REMOVES =
  '/etc/hostname /etc/ssh/ssh_host_* /var/lib/cloud/data/* /var/lib/cloud/instance /var/lib/cloud/instances/* /var/lib/waagent/history/* /var/lib/waagent/events/* /var/log/journal/*';

void describe('identity: scripts run in a real shell over the disk', () => {
  void it("the product's prep script runs in the real shell, and the identity model judges what it left", (t) => {
    if (skipWithoutBwrap(t)) return;
    const world = makeWorld();
    prepare(world, 'aks-engine', buildPrepScript({ ancestry: 'real shell', flavour: 'aks-engine' }));
    const record = world.prepRecords().at(-1);
    assert.equal(record?.shell, 'real');
    assert.equal(record?.outcome, 'succeeded');
    assert.ok(record?.effects.includes('powers-off'));
    world.stop();
  });

  void it('a kamino-style pod (/usr/bin/nsenter -m/proc/1/ns/mnt -- /bin/sh -xc, "$(…)", cp) prepares the disk; its clone joins as itself', (t) => {
    if (skipWithoutBwrap(t)) return;
    const world = makeWorld();
    const donor = prepare(world, 'aks-engine', 'unused', kaminoStyle(KAMINO_STYLE_REMOVES));
    const record = world.prepRecords().at(-1);
    assert.equal(record?.outcome, 'succeeded', record?.error);
    assert.equal(record?.shell, 'real');
    const disk = world.compute.getDiskContent(donor.osDiskId ?? '');
    assert.equal(disk?.files['/etc/machine-id'], '');
    assert.equal(disk?.files['/etc/hostname'], undefined);
    // `date` answers simulated time, `hostname` the node's name: the command substitutions ran.
    assert.match(
      disk?.files['/var/log/vmss-prototype-ancestry.log'] ?? '',
      new RegExp(`^2026-11-22T12:0\\d:\\d\\dZ image built from ${donor.computerName.toLowerCase()}\n$`),
    );

    const clone = captureAndScaleOut(world, 'aks-engine', donor);
    assert.ok(isNodeReady(nodeOf(world, clone) ?? ({} as never)), 'the clone joined as itself');
    assert.deepEqual(world.identity().violations, []);
    assert.deepEqual(world.identity().findings, []);
    world.stop();
  });

  void it('a kamino-style script that forgets the machine-id is caught by the identity model', (t) => {
    if (skipWithoutBwrap(t)) return;
    const world = makeWorld();
    const donor = prepare(world, 'aks-engine', 'unused', kaminoStyle(KAMINO_STYLE_REMOVES, false));
    assert.equal(world.prepRecords().at(-1)?.outcome, 'succeeded');
    const clone = captureAndScaleOut(world, 'aks-engine', donor);

    const violation = world.identity().violations.find((v) => v.kind === 'duplicate-machine-id');
    assert.ok(violation?.vmIds.includes(clone.vmId) && violation.vmIds.includes(donor.vmId));
    world.stop();
  });
});

void describe('identity: a prep script with one line left out yields a flagged clone', () => {
  // Cloud-init replaces the hostname and the host keys of a new instance: only an image without it keeps them.
  const cases: {
    path: string;
    image?: typeof NO_CLOUD_INIT;
    expect: (world: World, clone: InstanceInfo, donor: InstanceInfo) => void;
  }[] = [
    {
      path: '/etc/hostname',
      image: NO_CLOUD_INIT,
      expect: (world, clone, donor) => {
        const { violations, findings } = world.identity();
        assert.ok(
          violations.some(
            (v) =>
              v.kind === 'duplicate-hostname' && v.vmIds.includes(clone.vmId) && v.vmIds.includes(donor.vmId),
          ),
        );
        assert.ok(findings.some((f) => f.kind === 'takes-over-existing-node' && f.vmId === clone.vmId));
        assert.equal(nodeOf(world, clone), undefined, 'the clone did not register its own node');
      },
    },
    {
      path: '/var/lib/cloud/instances/*',
      expect: (world, clone) => {
        assert.ok(
          world
            .identity()
            .findings.some((f) => f.kind === 'inherited-cloud-init-instance' && f.vmId === clone.vmId),
        );
      },
    },
    {
      path: '/var/lib/waagent/history/*',
      expect: (world, clone) => {
        assert.ok(
          world
            .identity()
            .findings.some((f) => f.kind === 'inherited-waagent-state' && f.vmId === clone.vmId),
        );
      },
    },
    {
      path: '/var/log/journal/*',
      expect: (world, clone) => {
        assert.ok(
          world.identity().findings.some((f) => f.kind === 'inherited-journal' && f.vmId === clone.vmId),
        );
      },
    },
    {
      path: '/etc/ssh/ssh_host_*',
      image: NO_CLOUD_INIT,
      expect: (world, clone, donor) => {
        assert.ok(
          world
            .identity()
            .violations.some(
              (v) =>
                v.kind === 'duplicate-ssh-host-key' &&
                v.vmIds.includes(clone.vmId) &&
                v.vmIds.includes(donor.vmId),
            ),
        );
      },
    },
  ];
  for (const { path, image, expect } of cases) {
    void it(`without ${path}${image === undefined ? '' : ' (an image without cloud-init)'}`, () => {
      const world = makeWorld(image);
      const donor = prepare(world, 'aks-engine', scriptWithout(path));
      const clone = captureAndScaleOut(world, 'aks-engine', donor);

      expect(world, clone, donor);
      world.stop();
    });
  }

  void it('without emptying /etc/machine-id', () => {
    const world = makeWorld();
    const script = buildPrepScript({ ancestry: 'test' }).replace('truncate -s 0 /etc/machine-id\n', '');
    const donor = prepare(world, 'aks-engine', script);
    const clone = captureAndScaleOut(world, 'aks-engine', donor);

    const violation = world.identity().violations.find((v) => v.kind === 'duplicate-machine-id');
    assert.ok(violation?.vmIds.includes(clone.vmId) && violation.vmIds.includes(donor.vmId));
    world.stop();
  });

  void it('aks-engine: a script that also removes the shared client certificate yields a clone that never joins', () => {
    const world = makeWorld();
    const script = buildPrepScript({ ancestry: 'test' }).replace('rm -rf ', 'rm -rf /etc/kubernetes/certs ');
    const donor = prepare(world, 'aks-engine', script);
    const clone = captureAndScaleOut(world, 'aks-engine', donor);

    assert.equal(nodeOf(world, clone), undefined);
    assert.ok(
      world.identity().findings.some((f) => f.kind === 'no-kubelet-credential' && f.vmId === clone.vmId),
    );
    world.stop();
  });
});

void describe('identity: kubeadm (TLS bootstrap) and k3s (node password) semantics', () => {
  const kubeadmScript = (extra: string): string =>
    buildPrepScript({ ancestry: 'test', flavour: 'aks-engine' }).replace('rm -rf ', `rm -rf ${extra}`);

  void it("kubeadm: the donor's client certificate makes the clone authenticate as the donor; NodeRestriction keeps it out", () => {
    const world = makeWorld();
    const donor = prepare(world, 'kubeadm', kubeadmScript(''));
    const clone = captureAndScaleOut(world, 'kubeadm', donor);

    assert.equal(nodeOf(world, clone), undefined, 'the clone never joins');
    const finding = world
      .identity()
      .findings.find((f) => f.vmId === clone.vmId && f.kind === 'kubelet-authenticates-as-another-node');
    assert.match(finding?.detail ?? '', /node ".*000000" is not allowed to modify node ".*00000[0-9a-z]"/);
    world.stop();
  });

  void it('kubeadm: without the certificate and without a bootstrap credential the clone cannot join either', () => {
    const world = makeWorld();
    const donor = prepare(
      world,
      'kubeadm',
      kubeadmScript('/var/lib/kubelet/pki /etc/kubernetes/kubelet.conf '),
    );
    const clone = captureAndScaleOut(world, 'kubeadm', donor);

    assert.equal(nodeOf(world, clone), undefined);
    assert.ok(
      world.identity().findings.some((f) => f.vmId === clone.vmId && f.kind === 'no-kubelet-credential'),
    );
    assert.ok(
      world.identity().findings.some((f) => f.vmId === donor.vmId && f.kind === 'no-kubelet-credential'),
      'the donor itself cannot rejoin: no kubelet.conf, no bootstrap kubeconfig, and no kubeadm join on a restart',
    );
    world.stop();
  });

  void it('kubeadm: with the certificate, kubelet.conf and the cluster CA removed and a fresh join in customData, the clone bootstraps as itself', () => {
    const world = makeWorld();
    // kubeadm join's preflight refuses a leftover /etc/kubernetes/pki/ca.crt (tests/sim/world/kubeadm.test.ts).
    const donor = prepare(
      world,
      'kubeadm',
      kubeadmScript('/var/lib/kubelet/pki /etc/kubernetes/kubelet.conf /etc/kubernetes/pki '),
    );
    const clone = captureAndScaleOut(world, 'kubeadm', donor, { keepCustomData: true });

    const node = nodeOf(world, clone);
    assert.ok(node && isNodeReady(node));
    world.stop();
  });

  void it('k3s: removing the node password makes the server reject the donor when it restarts', () => {
    const world = makeWorld();
    const script = buildPrepScript({ ancestry: 'test', flavour: 'k3s' }).replace(
      'rm -rf ',
      'rm -rf /etc/rancher/node/password ',
    );
    const donor = prepare(world, 'k3s', script);
    const clone = captureAndScaleOut(world, 'k3s', donor);

    const rejected = world
      .identity()
      .findings.find((f) => f.vmId === donor.vmId && f.kind === 'node-password-rejected');
    assert.match(rejected?.detail ?? '', /Node password rejected/);
    assert.equal(isNodeReady(nodeOf(world, donor) ?? ({} as never)), false, 'the donor stays NotReady');
    assert.ok(
      isNodeReady(nodeOf(world, clone) ?? ({} as never)),
      'a clone with a new name registers its own password',
    );
    world.stop();
  });
});
