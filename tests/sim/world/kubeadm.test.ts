/**
 * kubeadm as the world models it (sim/world/kubeadm.ts): bootstrap token Secrets with a TTL, `kubeadm join`
 * on a clone's first boot (preflight on leftover files, token discovery, kubelet-start), the kubelet's
 * TLS bootstrap or its leftover certificate, the join's timing from a warm image, and the `scrub-leaves`
 * fault. A clone is made the way the world sees the product's kubeadm capture: the scrub runs over the
 * disk that is captured, the pool's model keeps its customData (`kubeadm join`) and its CustomScript.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { prepPodManifest } from '../../../shared/adapters/kubernetes/pod-manifests.js';
import { buildPrepScript } from '../../../shared/domain/prep-script.js';
import type { InstanceInfo } from '../../../sim/arm/compute-state.js';
import { KUBEADM_SCENARIO } from '../../../sim/index.js';
import { isNodeReady } from '../../../sim/kube/objects.js';
import { type HostModel, noEffects, runHostCommand } from '../../../sim/world/host-commands.js';
import {
  bootstrapTokenError,
  bootstrapTokenSecret,
  joinPreflightErrors,
  kubeadmJoinOf,
} from '../../../sim/world/kubeadm.js';
import { freshDisk } from '../../../sim/world/os-disk.js';
import { FaultEntry, loadScenarioFile, parseScenario } from '../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../sim/world/world.js';

const SUBSCRIPTION = '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f';
const RG = 'rg-kubeadm';
const POOL = 'kubeadm-workers-vmss';
const PREP_IMAGE = 'mcr.microsoft.com/cbl-mariner/busybox:2.0';
const TOKEN = 'abcdef.0123456789abcdef';
const KUBEADM_JOIN = `#cloud-config\nruncmd:\n  - kubeadm join 10.0.0.4:6443 --token ${TOKEN} --discovery-token-ca-cert-hash sha256:${'a'.repeat(64)}\n`;
/** What the product's kubeadm scrub removes besides the common identity set. */
const KUBEADM_SCRUB = [
  '/etc/kubernetes/kubelet.conf',
  '/etc/kubernetes/bootstrap-kubelet.conf',
  '/etc/kubernetes/admin.conf',
  '/etc/kubernetes/pki/*',
  '/etc/kubernetes/manifests/*',
  '/var/lib/kubelet/*',
];
const START = '2026-11-22T12:00:00Z';

function makeWorld(kubeadm?: { tokens: { token: string; ttl?: string }[] }): World {
  const world = createWorld({
    scenario: parseScenario({
      subscriptionId: SUBSCRIPTION,
      location: 'westeurope',
      start: START,
      latency: { profile: 'fast' },
      clusters: [
        {
          name: 'lab',
          resourceGroup: RG,
          ...(kubeadm ? { kubeadm } : {}),
          scaleSets: [
            {
              name: POOL,
              capacity: 2,
              bootstrapFlavour: 'kubeadm',
              customData: KUBEADM_JOIN,
              extensions: [
                { name: 'install', publisher: 'Microsoft.Azure.Extensions', type: 'CustomScript' },
              ],
            },
          ],
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
    }),
  });
  world.clock.advanceBy(5);
  world.compute.addGallery({
    subscriptionId: SUBSCRIPTION,
    resourceGroup: RG,
    name: 'gallery',
    images: [{ name: 'workers' }],
  });
  return world;
}

function scaleSetId(): string {
  return `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/${POOL}`;
}

/** The product's common identity scrub plus `kubeadm` paths, after `setup` lines. */
function scrubScript(kubeadm: readonly string[], setup = ''): string {
  const script = buildPrepScript({ ancestry: 'test', flavour: 'aks-engine' }).replace(
    'rm -rf ',
    `rm -rf ${kubeadm.join(' ')} `,
  );
  return setup === '' ? script : `${setup}\n${script}`;
}

/** Runs the script in a prep pod on the pool's first node, waits until the VM is stopped. */
function prepare(world: World, script: string): InstanceInfo {
  const donor = world.compute.listInstances(scaleSetId())[0];
  assert.ok(donor);
  world.cluster().world.store.create(
    'pods',
    prepPodManifest({
      name: 'prep',
      namespace: 'kube-system',
      nodeName: donor.computerName.toLowerCase(),
      image: PREP_IMAGE,
      script,
      labels: {},
    }) as never,
  );
  world.clock.advanceBy(
    world.latency.podStartSeconds + world.latency.imagePullSeconds + world.latency.prepScriptSeconds,
  );
  world.clock.advanceBy(world.latency.instanceStopSeconds + 1);
  const stopped = world.compute.getInstance(donor.id);
  assert.equal(stopped?.powerState, 'stopped', JSON.stringify(world.prepRecords().at(-1)));
  return stopped;
}

/** Snapshot → image version → model (customData and extensions kept) → one new instance, joined or not. */
function captureAndScaleOut(world: World, donor: InstanceInfo, before?: () => void): InstanceInfo {
  const snapshot = world.compute.createSnapshot(SUBSCRIPTION, RG, 'snap', {
    location: 'westeurope',
    sourceResourceId: donor.osDiskId ?? '',
    incremental: true,
    tags: {},
  });
  const imageId = `/subscriptions/${SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Compute/galleries/gallery/images/workers`;
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
  const model = world.compute.getScaleSetModel(scaleSetId()) ?? {};
  const profile = model.virtualMachineProfile as {
    storageProfile: { imageReference: Record<string, unknown> };
  };
  profile.storageProfile.imageReference = { id: imageId };
  world.compute.replaceScaleSet(scaleSetId(), { properties: model, tags: {} });
  before?.();
  const [clone] = world.compute.scaleOut(scaleSetId(), 1);
  assert.ok(clone);
  world.clock.advanceBy(world.latency.newNodeJoinFromPrototypeWithKubeadmJoinSeconds + 1);
  return clone;
}

function nodeOf(world: World, instance: InstanceInfo) {
  return world.cluster().world.store.get('nodes', undefined, instance.computerName.toLowerCase());
}

function findingsOf(world: World, instance: InstanceInfo) {
  return world.identity().findings.filter((finding) => finding.vmId === instance.vmId);
}

function diskOf(world: World, instance: InstanceInfo): Record<string, string> {
  return world.compute.getDiskContent(instance.osDiskId ?? '')?.files ?? {};
}

void describe('kubeadm: bootstrap tokens', () => {
  void it('the cluster holds the scenario token as kube-system/bootstrap-token-<id>, expiring its TTL after the start', () => {
    const world = makeWorld({ tokens: [{ token: TOKEN, ttl: '720h' }] });
    const secret = world.cluster().world.store.get('secrets', 'kube-system', 'bootstrap-token-abcdef');
    assert.equal(secret?.type, 'bootstrap.kubernetes.io/token');
    const data = secret?.data as Record<string, string>;
    const text = (key: string): string => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
    assert.equal(text('token-id'), 'abcdef');
    assert.equal(text('token-secret'), '0123456789abcdef');
    assert.equal(text('expiration'), '2026-12-22T12:00:00Z');
    assert.equal(text('usage-bootstrap-authentication'), 'true');
    assert.equal(text('usage-bootstrap-signing'), 'true');
    world.stop();
  });

  void it("without kubeadm.tokens, the token a pool's customData joins with is seeded without expiry", () => {
    const world = makeWorld();
    const secret = world.cluster().world.store.get('secrets', 'kube-system', 'bootstrap-token-abcdef');
    assert.ok(secret);
    assert.equal((secret.data as Record<string, string>).expiration, undefined);
    world.stop();
  });

  const now = Date.parse(START);
  const cases: {
    name: string;
    token: string;
    secret: ReturnType<typeof bootstrapTokenSecret> | undefined;
    error: RegExp | undefined;
  }[] = [
    { name: 'valid', token: TOKEN, secret: bootstrapTokenSecret(TOKEN, now + 60_000), error: undefined },
    { name: 'never expires', token: TOKEN, secret: bootstrapTokenSecret(TOKEN, undefined), error: undefined },
    {
      name: 'expired',
      token: TOKEN,
      secret: bootstrapTokenSecret(TOKEN, now - 1000),
      error:
        /token id "abcdef" is invalid for this cluster or it has expired\. Use "kubeadm token create" on the control-plane node/,
    },
    {
      name: 'unknown',
      token: TOKEN,
      secret: undefined,
      error: /token id "abcdef" is invalid for this cluster/,
    },
    {
      name: 'wrong secret',
      token: 'abcdef.ffffffffffffffff',
      secret: bootstrapTokenSecret(TOKEN, undefined),
      error: /failed to verify JWS signature/,
    },
    {
      name: 'malformed',
      token: 'nope',
      secret: undefined,
      error: /the bootstrap token "nope" was not of the form/,
    },
  ];
  for (const { name, token, secret, error } of cases) {
    void it(`discovery with a ${name} token`, () => {
      const refused = bootstrapTokenError(token, secret, now);
      if (error === undefined) assert.equal(refused, undefined);
      else assert.match(refused ?? '', error);
    });
  }

  void it('reads the join command out of a cloud-config', () => {
    assert.deepEqual(kubeadmJoinOf(KUBEADM_JOIN), { endpoint: '10.0.0.4:6443', token: TOKEN });
    assert.deepEqual(kubeadmJoinOf(`runcmd:\n  - [kubeadm, join, '10.0.0.4:6443', --token=${TOKEN}]\n`), {
      endpoint: '10.0.0.4:6443',
      token: TOKEN,
    });
    assert.equal(kubeadmJoinOf('#cloud-config\n'), undefined);
  });

  void it("reads Cluster API's join: --config and the JoinConfiguration its write_files puts there", () => {
    // The shape of cluster-api bootstrap/kubeadm/pkg/cloudinit/node.go's user data.
    const capi = [
      '## template: jinja',
      '#cloud-config',
      'write_files:',
      '-   path: /run/kubeadm/kubeadm-join-config.yaml',
      '    owner: root:root',
      "    permissions: '0640'",
      '    content: |',
      '      ---',
      '      apiVersion: kubeadm.k8s.io/v1beta3',
      '      kind: JoinConfiguration',
      '      discovery:',
      '        bootstrapToken:',
      '          apiServerEndpoint: 10.0.0.4:6443',
      `          token: ${TOKEN}`,
      '          caCertHashes:',
      '          - sha256:9d2f4a4c3b1e8f7a6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e',
      '      nodeRegistration:',
      '        kubeletExtraArgs:',
      '          cloud-provider: external',
      'runcmd:',
      '  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete',
      '',
    ].join('\n');

    assert.deepEqual(kubeadmJoinOf(capi), { endpoint: '10.0.0.4:6443', token: TOKEN });
    assert.deepEqual(
      kubeadmJoinOf(
        capi.replace('/run/kubeadm/kubeadm-join-config.yaml  &&', '/run/kubeadm/missing.yaml &&'),
      ),
      { endpoint: '', token: '' },
      'a --config file the cloud-config does not write: no token to join with',
    );
  });
});

void describe('kubeadm: join preflight (RunJoinNodeChecks) on a disk', () => {
  const joined = (): ReturnType<typeof freshDisk> =>
    freshDisk({
      vmId: 'vm-1',
      nodeName: 'worker000000',
      cluster: 'lab',
      flavour: 'kubeadm',
      joinToken: '',
      images: [],
      joinedAtMs: 0,
      image: 'img',
    });
  void it("a joined worker's disk holds what kubeadm join and the TLS bootstrap leave, and fails every check", () => {
    const disk = joined();
    for (const path of [
      '/etc/kubernetes/pki/ca.crt',
      '/var/lib/kubelet/config.yaml',
      '/var/lib/kubelet/kubeadm-flags.env',
      '/etc/kubernetes/kubelet.conf',
      '/var/lib/kubelet/pki/kubelet-client-current.pem',
    ])
      assert.ok(path in disk.files, path);
    assert.ok(!('/etc/kubernetes/bootstrap-kubelet.conf' in disk.files), 'kubeadm removed it after the join');
    assert.deepEqual(joinPreflightErrors(disk), [
      '[ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists',
      '[ERROR Port-10250]: Port 10250 is in use',
      '[ERROR FileAvailable--etc-kubernetes-pki-ca.crt]: /etc/kubernetes/pki/ca.crt already exists',
    ]);
  });

  void it("a control-plane node's static pod manifests fail DirAvailable", () => {
    const disk = freshDisk({
      ...{
        vmId: 'vm-2',
        nodeName: 'cp',
        cluster: 'lab',
        flavour: 'kubeadm',
        joinToken: '',
        images: [],
        joinedAtMs: 0,
        image: 'img',
      },
      role: 'control-plane',
    });
    assert.ok(
      joinPreflightErrors(disk).includes(
        '[ERROR DirAvailable--etc-kubernetes-manifests]: /etc/kubernetes/manifests is not empty',
      ),
    );
  });
});

void describe('kubeadm: a clone of a scrubbed disk joins as itself; one leftover keeps it out', () => {
  void it('with the full kubeadm scrub the clone runs kubeadm join from the warm image and registers under its own name', () => {
    const world = makeWorld();
    const donor = prepare(world, scrubScript(KUBEADM_SCRUB));
    const clone = captureAndScaleOut(world, donor);

    const node = nodeOf(world, clone);
    assert.ok(node && isNodeReady(node), JSON.stringify(findingsOf(world, clone)));
    assert.deepEqual(findingsOf(world, clone), []);
    assert.deepEqual(world.identity().violations, []);
    const files = diskOf(world, clone);
    const name = clone.computerName.toLowerCase();
    assert.equal(files['/var/lib/kubelet/pki/kubelet-client-current.pem'], `system:node:${name}`);
    assert.equal(
      files['/etc/kubernetes/kubelet.conf'],
      'client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem',
    );
    for (const path of [
      '/etc/kubernetes/pki/ca.crt',
      '/var/lib/kubelet/config.yaml',
      '/var/lib/kubelet/kubeadm-flags.env',
    ])
      assert.ok(path in files, path);
    assert.ok(
      !('/etc/kubernetes/bootstrap-kubelet.conf' in files),
      'kubeadm removed the bootstrap kubeconfig',
    );
    assert.ok(
      world.compute.getDiskContent(clone.osDiskId ?? '')?.images.includes(PREP_IMAGE),
      'images stay warm',
    );
    const join = world.joinRecords().at(-1);
    assert.equal(join?.bootstrap, 'image-kubeadm-join');
    assert.equal(join?.fromPrototype, true);
    assert.equal(join?.seconds, world.latency.newNodeJoinFromPrototypeWithKubeadmJoinSeconds);
    world.stop();
  });

  const leftovers: { name: string; scrub: string[]; setup?: string; error: string }[] = [
    {
      name: '/etc/kubernetes/kubelet.conf',
      scrub: KUBEADM_SCRUB.filter((path) => path !== '/etc/kubernetes/kubelet.conf'),
      error:
        '[ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists',
    },
    {
      name: '/etc/kubernetes/bootstrap-kubelet.conf',
      scrub: KUBEADM_SCRUB.filter((path) => path !== '/etc/kubernetes/bootstrap-kubelet.conf'),
      setup: `echo token: ${TOKEN} >> /etc/kubernetes/bootstrap-kubelet.conf`,
      error:
        '[ERROR FileAvailable--etc-kubernetes-bootstrap-kubelet.conf]: /etc/kubernetes/bootstrap-kubelet.conf already exists',
    },
    {
      name: '/etc/kubernetes/pki/ca.crt',
      scrub: KUBEADM_SCRUB.filter((path) => path !== '/etc/kubernetes/pki/*'),
      error: '[ERROR FileAvailable--etc-kubernetes-pki-ca.crt]: /etc/kubernetes/pki/ca.crt already exists',
    },
    {
      name: 'a static pod manifest',
      scrub: KUBEADM_SCRUB.filter((path) => path !== '/etc/kubernetes/manifests/*'),
      setup: 'mkdir -p /etc/kubernetes/manifests && echo kind: Pod >> /etc/kubernetes/manifests/extra.yaml',
      error: '[ERROR DirAvailable--etc-kubernetes-manifests]: /etc/kubernetes/manifests is not empty',
    },
  ];
  for (const { name, scrub, setup, error } of leftovers) {
    void it(`with ${name} left, preflight fails with kubeadm's message and the clone does not register as itself`, () => {
      const world = makeWorld();
      const donor = prepare(world, scrubScript(scrub, setup));
      const clone = captureAndScaleOut(world, donor);

      assert.equal(nodeOf(world, clone), undefined);
      const preflight = findingsOf(world, clone).find(
        (finding) => finding.kind === 'kubeadm-preflight-failed',
      );
      assert.ok(preflight, JSON.stringify(findingsOf(world, clone)));
      assert.ok(
        preflight.detail.includes(`[preflight] Some fatal errors occurred:\n\t${error}`),
        preflight.detail,
      );
      assert.ok(findingsOf(world, clone).some((finding) => finding.kind === 'no-kubelet-credential'));
      assert.deepEqual(
        world.identity().violations.filter((violation) => violation.vmIds.includes(clone.vmId)),
        [],
      );
      assert.equal(world.joinRecords().length, 0);
      world.stop();
    });
  }

  void it("with kubelet.conf removed but the donor's certificate left, preflight passes and the kubelet still authenticates as the donor", () => {
    const world = makeWorld();
    const donor = prepare(
      world,
      scrubScript(['/etc/kubernetes/kubelet.conf', '/etc/kubernetes/pki/*', '/etc/kubernetes/manifests/*']),
    );
    const clone = captureAndScaleOut(world, donor);

    assert.equal(nodeOf(world, clone), undefined);
    const findings = findingsOf(world, clone);
    assert.ok(!findings.some((finding) => finding.kind === 'kubeadm-preflight-failed'), 'preflight passed');
    const refused = findings.find((finding) => finding.kind === 'kubelet-authenticates-as-another-node');
    assert.match(refused?.detail ?? '', /node ".*000000" is not allowed to modify node/);
    // The kubelet wrote a kubeconfig pointing at its store, whose current certificate is the donor's.
    assert.equal(
      diskOf(world, clone)['/var/lib/kubelet/pki/kubelet-client-current.pem'],
      `system:node:${donor.computerName.toLowerCase()}`,
    );
    world.stop();
  });

  void it("with an expired token the join is refused with kubeadm's message and the clone never registers", () => {
    const world = makeWorld({ tokens: [{ token: TOKEN, ttl: '10m' }] });
    const donor = prepare(world, scrubScript(KUBEADM_SCRUB));
    const clone = captureAndScaleOut(world, donor, () => world.clock.advanceBy(15 * 60));

    assert.equal(nodeOf(world, clone), undefined);
    const rejected = findingsOf(world, clone).find((finding) => finding.kind === 'bootstrap-token-rejected');
    assert.match(
      rejected?.detail ?? '',
      /couldn't validate the identity of the API Server: token id "abcdef" is invalid for this cluster or it has expired/,
    );
    assert.ok(findingsOf(world, clone).some((finding) => finding.kind === 'no-kubelet-credential'));
    world.stop();
  });

  void it('a donor restarted after its token expired keeps its certificate and machine-id, and needs no token', () => {
    const world = makeWorld({ tokens: [{ token: TOKEN, ttl: '1m' }] });
    const donor = world.compute.listInstances(scaleSetId())[0];
    assert.ok(donor);
    const before = { ...diskOf(world, donor) };
    world.clock.advanceBy(3600);
    world.compute.powerOffInstance(donor.id);
    world.clock.advanceBy(world.latency.instanceStopSeconds + 1);
    world.compute.startInstance(donor.id);
    world.clock.advanceBy(world.latency.instanceStartSeconds + world.latency.nodeBootSeconds + 1);

    assert.ok(isNodeReady(nodeOf(world, donor) ?? ({} as never)));
    const after = diskOf(world, donor);
    assert.equal(after['/etc/machine-id'], before['/etc/machine-id']);
    assert.equal(
      after['/var/lib/kubelet/pki/kubelet-client-current.pem'],
      before['/var/lib/kubelet/pki/kubelet-client-current.pem'],
    );
    assert.deepEqual(findingsOf(world, donor), []);
    world.stop();
  });
});

void describe('kubeadm: the scrub-leaves fault', () => {
  void it('a scrub whose rm leaves kubelet.conf yields a clone that fails preflight', () => {
    const world = makeWorld();
    world.applyFault(FaultEntry.parse({ preset: 'scrub-leaves', path: '/etc/kubernetes/kubelet.conf' }));
    world.clock.advanceBy(1);
    const donor = prepare(world, scrubScript(KUBEADM_SCRUB));
    const clone = captureAndScaleOut(world, donor);

    assert.equal(nodeOf(world, clone), undefined);
    const preflight = findingsOf(world, clone).find((finding) => finding.kind === 'kubeadm-preflight-failed');
    assert.match(preflight?.detail ?? '', /FileAvailable--etc-kubernetes-kubelet\.conf/);
    assert.equal(world.prepRecords().at(-1)?.outcome, 'succeeded', 'rm exited 0');
    world.stop();
  });

  void it('rm leaves the path on a mounted copy too (the path is on the disk rm works on)', () => {
    const copy = {
      files: { '/etc/kubernetes/kubelet.conf': 'x', '/etc/kubernetes/admin.conf': 'y' },
      images: [],
    };
    const host: HostModel = {
      root: { files: {}, images: [] },
      dataDisks: new Map([[0, { diskId: 'copy', content: copy }]]),
      mounts: new Map([['/mnt/copy', 'copy']]),
      frozen: false,
      units: new Map(),
      tmpfs: {},
      systemState: 'running',
      rmLeaves: ['/etc/kubernetes/kubelet.conf'],
    };
    const effects = noEffects();
    const result = runHostCommand(
      ['rm', '-rf', '/mnt/copy/etc/kubernetes/kubelet.conf', '/mnt/copy/etc/kubernetes/admin.conf'],
      host,
      effects,
    );
    assert.equal(result?.status, 0);
    assert.deepEqual(Object.keys(copy.files), ['/etc/kubernetes/kubelet.conf']);
  });
});

void describe('kubeadm scenario file', () => {
  void it('loads into a world whose workers hold the token Secret and join from it', async () => {
    const scenario = await loadScenarioFile(KUBEADM_SCENARIO);
    const world = createWorld({ scenario: { ...scenario, start: START } });
    const store = world.cluster().world.store;
    assert.ok(store.get('secrets', 'kube-system', 'bootstrap-token-7f3k9q'));
    assert.equal(store.list('nodes').length, 6);
    assert.deepEqual(world.identity().findings, []);
    world.stop();
  });
});
