/**
 * kubeadm pools end to end on the simulator: the sample cluster's second pool made a
 * self-assembled kubeadm pool (customData runs `kubeadm join` with a bootstrap token the cluster holds),
 * refreshed by drain-and-stop and by live capture through the real orchestrator, activities and SDKs.
 * The donor keeps its identity (same kubelet certificate, same machine-id on its disk), the version is
 * built from a scrubbed copy, the model keeps its customData and bootstrap extensions, and a new node
 * from the image runs `kubeadm join` as itself, faster than a marketplace node. With the scrub broken by
 * one file, the canary's join fails kubeadm's preflight and the version is not published.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { checkRefreshedWorld } from '../../cli/demo-checks.js';
import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { VERSION_VERDICT_TAG_KEYS } from '../../shared/domain/version-verdict.js';
import type { Harness, HarnessOptions } from './harness.js';
import { nodeOf, POOL2, startHarness, withKubeadmPool } from './harness.js';
import { liveCaptureLeftovers } from './live-checks.js';

const KUBELET_CERT = '/var/lib/kubelet/pki/kubelet-client-current.pem';
const DONOR = nodeOf(POOL2, 1);

function harnessFor(mode: 'drain-and-stop' | 'live', canary: Record<string, unknown>): HarnessOptions {
  return {
    scenario: withKubeadmPool(POOL2),
    settings: (cluster) => {
      cluster.capture = { ...cluster.capture, mode };
      cluster['promotion'] = { canary };
    },
  };
}

function scaleSetOf(harness: Harness) {
  const scaleSet = harness.sim.running.world.compute.listScaleSets().find((entry) => entry.name === POOL2);
  assert.ok(scaleSet);
  return scaleSet;
}

/** What must not change on the donor: the identity files on its OS disk. */
function donorIdentity(harness: Harness) {
  const world = harness.sim.running.world;
  const instance = world.compute
    .listInstances(scaleSetOf(harness).id)
    .find((candidate) => candidate.computerName.toLowerCase() === DONOR);
  assert.ok(instance?.osDiskId, 'the donor has an OS disk');
  const files = world.compute.getDiskContent(instance.osDiskId)?.files ?? {};
  return {
    vmId: instance.vmId,
    kubeletCertificate: files[KUBELET_CERT],
    kubeletConf: files['/etc/kubernetes/kubelet.conf'],
    machineId: files['/etc/machine-id'],
    hostname: files['/etc/hostname'],
  };
}

/** The model's bootstrap: customData and extensions, as ARM holds them. */
function bootstrapOf(harness: Harness) {
  const scaleSet = scaleSetOf(harness);
  return {
    customData: scaleSet.customData,
    extensions: (scaleSet.extensions ?? []).map((extension) => extension.name),
  };
}

async function refresh(harness: Harness, id: string): Promise<PoolRefreshResult> {
  const status = await harness.run(
    ORCHESTRATION.refreshPool,
    { cluster: 'prod', pool: POOL2, trigger: 'test', node: DONOR },
    id,
  );
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as PoolRefreshResult;
}

/** Product pods created on the donor, by role (`pull`, `prep`, `guard`, `freeze`, `scrub`), in order. */
function watchProductPods(harness: Harness): { roles: string[]; stop(): void } {
  const roles: string[] = [];
  const stop = harness.sim.running.world.cluster('prod').world.store.subscribe((event) => {
    const pod = event.object as {
      metadata: { name: string; labels?: Record<string, string> };
      spec?: { nodeName?: string };
    };
    if (
      event.resource === 'pods' &&
      event.type === 'ADDED' &&
      pod.spec?.nodeName === DONOR &&
      pod.metadata.labels?.['app.kubernetes.io/managed-by'] === 'vmss-prototype'
    ) {
      roles.push(pod.metadata.name.replace(/^vmssp-([a-z]+)-.*$/, '$1'));
    }
  });
  return { roles, stop };
}

/** Scales the pool out by `count` and lets them join: the new nodes' join records. */
function scaleOut(harness: Harness, count: number) {
  const world = harness.sim.running.world;
  const before = world.joinRecords().length;
  world.compute.scaleOut(scaleSetOf(harness).id, count);
  world.clock.advanceBy(world.latency.newNodeJoinFromMarketplaceSeconds + 60);
  return world.joinRecords().slice(before);
}

/** Everything a kubeadm refresh must show once it is done (both capture modes). */
function assertKubeadmRefreshed(
  harness: Harness,
  result: PoolRefreshResult,
  before: { donor: ReturnType<typeof donorIdentity>; bootstrap: ReturnType<typeof bootstrapOf> },
): void {
  const running = harness.sim.running;
  const world = running.world;
  assert.equal(result.outcome, 'refreshed', result.reason);
  assert.equal(result.donor, DONOR);
  assert.equal(result.plan?.capture?.scrubbed, 'copy');
  assert.equal(result.plan.capture.newNodes, 'run-pool-bootstrap');
  assert.match(result.plan.capture.reason, /new nodes run the pool's bootstrap/);

  // The donor's disk and identity were never modified: it rejoined as it was.
  assert.deepEqual(donorIdentity(harness), before.donor, "the donor's identity files are unchanged");

  // The version came from the scrubbed copy; the copy and the snapshot are gone; nothing is attached.
  assert.ok(result.version);
  const version = world.compute.getImageVersion(result.version.id);
  assert.equal(version?.provisioningState, 'Succeeded');
  assert.equal(version.excludeFromLatest, false, 'published');
  assert.equal(version.tags['vmss-prototype.new-nodes'], 'run-pool-bootstrap');
  assert.match(version.sourceId ?? '', /\/providers\/Microsoft\.Compute\/disks\//i);
  assert.deepEqual(world.compute.listSnapshots(), [], 'the snapshot was deleted');
  const scaleSet = scaleSetOf(harness);
  assert.deepEqual(
    liveCaptureLeftovers(running, {
      id: scaleSet.id,
      name: scaleSet.name,
      subscriptionId: scaleSet.subscriptionId,
      resourceGroup: scaleSet.resourceGroup,
    }),
    [],
  );

  // The model points at the image and keeps the pool's kubeadm join and bootstrap extensions.
  assert.deepEqual(bootstrapOf(harness), before.bootstrap, 'customData and extensions as before');
  assert.deepEqual(result.removedExtensions, []);
  const failed = checkRefreshedWorld(running, [
    { cluster: 'prod', trigger: 'test', pools: [result] } as never,
  ]).filter((check) => !check.ok);
  assert.deepEqual(failed, []);

  // New nodes from the image run kubeadm join, each as itself, warm.
  const joins = scaleOut(harness, 2);
  assert.equal(joins.length, 2, 'both new nodes joined');
  for (const join of joins) {
    assert.equal(join.bootstrap, 'image-kubeadm-join');
    // A scaled clock: a loaded machine may add a few seconds (the bench measures on a manual clock).
    assert.ok(join.seconds >= world.latency.newNodeJoinFromPrototypeWithKubeadmJoinSeconds);
    assert.ok(join.seconds < world.latency.newNodeJoinFromMarketplaceSeconds, 'warm beats cold');
  }
  const store = world.cluster('prod').world.store;
  for (const join of joins) {
    const instance = world.compute.listInstances(scaleSet.id).find((vm) => vm.id === join.instanceId);
    assert.equal(join.nodeName, instance?.computerName.toLowerCase(), 'joined under its own name');
    assert.ok(store.get('nodes', undefined, join.nodeName), `node ${join.nodeName} registered`);
    const disk = world.compute.getDiskContent(instance?.osDiskId ?? '');
    assert.equal(disk?.files[KUBELET_CERT], `system:node:${join.nodeName}`, 'its own kubelet certificate');
    assert.notEqual(disk?.files['/etc/machine-id'], before.donor.machineId);
  }
  const identity = world.identity();
  assert.deepEqual(identity.violations, [], 'no duplicate machine-id, hostname or SSH host key');
  assert.deepEqual(identity.findings, [], 'no refused registration, nothing inherited');
}

void describe('kubeadm pools on the simulator', { concurrency: false }, () => {
  void it('drain-and-stop: the donor is snapshotted as it is, a copy is scrubbed, new nodes join as themselves', async () => {
    const harness = await startHarness(harnessFor('drain-and-stop', { soak: '2m', deadline: '20m' }));
    const pods = watchProductPods(harness);
    try {
      const before = { donor: donorIdentity(harness), bootstrap: bootstrapOf(harness) };
      assert.equal(before.donor.kubeletCertificate, `system:node:${DONOR}`);
      const result = await refresh(harness, 'kubeadm-drain');
      pods.stop();
      assert.equal(result.captureMode, 'drain-and-stop');
      assert.ok((result.donorOutOfServiceSeconds ?? 0) > 0, 'the donor was drained and stopped');
      // The prep pod only powered the donor off; the copy was guarded, then scrubbed on the donor.
      assert.deepEqual(pods.roles, ['pull', 'prep', 'guard', 'scrub']);
      assert.equal(result.canary?.verdict, 'passed', result.canary?.reason);
      assertKubeadmRefreshed(harness, result, before);
    } finally {
      pods.stop();
      await harness.stop();
    }
  });

  void it('live: the donor never stops, its copy is scrubbed, new nodes join as themselves', async () => {
    const harness = await startHarness(harnessFor('live', { enabled: false }));
    const pods = watchProductPods(harness);
    try {
      const before = { donor: donorIdentity(harness), bootstrap: bootstrapOf(harness) };
      const result = await refresh(harness, 'kubeadm-live');
      pods.stop();
      assert.equal(result.captureMode, 'live');
      assert.equal(result.donorOutOfServiceSeconds, 0);
      assert.deepEqual(pods.roles, ['pull', 'freeze', 'scrub']);
      assertKubeadmRefreshed(harness, result, before);
    } finally {
      pods.stop();
      await harness.stop();
    }
  });

  void it('a scrub that leaves kubelet.conf: the canary fails its join, the version is not published', async () => {
    const harness = await startHarness(harnessFor('drain-and-stop', { soak: '2m', deadline: '15m' }));
    try {
      const world = harness.sim.running.world;
      world.applyFault({ preset: 'scrub-leaves', path: '/etc/kubernetes/kubelet.conf', at: '0s' });
      const before = { donor: donorIdentity(harness), bootstrap: bootstrapOf(harness) };
      const model = world.compute.getScaleSetModel(scaleSetOf(harness).id);
      const result = await refresh(harness, 'kubeadm-broken-scrub');

      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      assert.equal(result.canary?.verdict, 'rejected');
      assert.match(result.canary.reason ?? '', /regist|join|node/i, result.canary.reason);
      assert.ok(result.version);
      const version = world.compute.getImageVersion(result.version.id);
      assert.equal(version?.excludeFromLatest, true, 'the version stays hidden from latest');
      assert.match(version.tags[VERSION_VERDICT_TAG_KEYS.rejected] ?? '', /canary/);
      assert.deepEqual(world.compute.getScaleSetModel(scaleSetOf(harness).id), model, 'the model as before');
      assert.deepEqual(donorIdentity(harness), before.donor, 'the donor is untouched');

      // Why the canary never registered: kubeadm's preflight found the file the scrub left, and its
      // kubelet, with the donor's credentials left beside it, was refused by NodeRestriction or had none.
      const findings = world.identity().findings;
      const preflight = findings.find((finding) => finding.kind === 'kubeadm-preflight-failed');
      assert.ok(preflight, JSON.stringify(findings));
      assert.match(
        preflight.detail,
        /\[ERROR FileAvailable--etc-kubernetes-kubelet\.conf\]: \/etc\/kubernetes\/kubelet\.conf already exists/,
      );
      assert.ok(
        !world
          .cluster('prod')
          .world.store.list('nodes')
          .some((node) => node.metadata.name === preflight.nodeName),
        'the canary never registered',
      );
    } finally {
      await harness.stop();
    }
  });
});
