/**
 * One simulated cluster bound to the compute world: its nodes follow their VMs (kubelet up/down, Ready,
 * heartbeats, leases), a privileged power-off pod stops its VM, new instances join as nodes after a
 * bootstrap delay, and a small Deployment controller keeps ReplicaSets and Deployment status.
 */
import type { ComputeEvent, ComputeState, InstanceInfo, InstanceSeed } from '../arm/compute-state.js';
import {
  durationOf,
  type KubeObject,
  type KubeStore,
  type KubeWatchEvent,
  type LatencyProfile,
} from '../contracts.js';
import { KubeStoreError } from '../contracts.js';
import { type KubeControllers, startKubeControllers } from '../kube/controllers.js';
import {
  controllerOf,
  isTerminating,
  nodeNameOf as podNodeName,
  podPhase,
  specOf,
  statusOf,
  timestamp,
  tolerates,
  tolerationsOf,
} from '../kube/objects.js';
import { createInMemoryKubeStore } from '../kube/store.js';
import { canaryScaleSetSpecOf } from './canary-scale-set.js';
import { ownedByCapz } from './capz/scenario.js';
import type { WorldClock } from './clock.js';
import { DeploymentController } from './deployment-controller.js';
import { HostRuntimes } from './host-runtime.js';
import { BOOTSTRAP_TOKEN_RE, bootstrapTokenSecret, kubeadmJoinOf } from './kubeadm.js';
import { NodeIdentities } from './node-identity.js';
import {
  bootIdOf,
  buildNode,
  healthyConditions,
  imageList,
  KURED_MOST_RECENT_REBOOT_NEEDED,
  KURED_REBOOT_IN_PROGRESS,
  type NodeCondition,
  nodeImages,
  nodeNameOf,
  unknownConditions,
  UNREACHABLE_TAINT,
} from './nodes.js';
import { type PrepRecord, PrepRuns } from './prep-runs.js';

export type { PrepRecord } from './prep-runs.js';
import {
  type Cluster,
  type KuredAnnotations,
  parseDurationMs,
  resolveTime,
  type ScaleSet,
} from './scenario.js';
import { buildPdb, buildWorkloadObjects, replicaSetFor } from './workloads.js';

/** kube-controller-manager `--node-monitor-grace-period`: silence before a node turns Unknown. */
export const NODE_MONITOR_GRACE_SECONDS = 40;
/** Kubelet lease renewal interval (kube-node-lease). */
export const LEASE_RENEW_SECONDS = 10;
/** Kubelet node status report interval when leases carry liveness. */
export const NODE_STATUS_REPORT_SECONDS = 300;

/**
 * How a new instance became a node (sim/README.md "Time to Ready"): `marketplace-full` installs and pulls
 * everything, `image-only` boots a captured image that needs no bootstrap, `image-kubeadm-join` boots a
 * captured image whose customData still runs `kubeadm join` (packages and images already on the disk).
 */
export type JoinBootstrap = 'marketplace-full' | 'image-only' | 'image-kubeadm-join';

export interface JoinRecord {
  cluster: string;
  nodeName: string;
  instanceId: string;
  /** Booted from a gallery image (`bootstrap` is not `marketplace-full`). */
  fromPrototype: boolean;
  bootstrap: JoinBootstrap;
  createdAt: string;
  joinedAt: string;
  seconds: number;
}

interface PoolEntry {
  spec: ScaleSet;
  index: number;
  scaleSetId: string;
}

export interface ClusterWorldOptions {
  spec: Cluster;
  subscriptionId: string;
  location: string;
  clock: WorldClock;
  compute: ComputeState;
  latency: LatencyProfile;
  /** Offset so pools of several clusters get distinct address blocks. */
  poolIndexBase: number;
  /**
   * 'world' (default) starts the Kubernetes control-loop stand-ins here; 'external' leaves them to the
   * API server handler, which starts its own, and `attachControllers` hands them over.
   */
  kubeControllers?: 'world' | 'external';
}

export class ClusterWorld {
  readonly name: string;
  readonly resourceGroup: string;
  readonly spec: Cluster;
  readonly store: KubeStore;
  private kubeControllers: KubeControllers | undefined;
  private readonly ownsControllers: boolean;
  readonly prepRecords: PrepRecord[];
  readonly joinRecords: JoinRecord[] = [];

  private readonly clock: WorldClock;
  private readonly compute: ComputeState;
  private readonly latency: LatencyProfile;
  private readonly pools = new Map<string, PoolEntry>();
  /** Nodes whose kubelet is posting status (VM running and booted). */
  private readonly kubeletUp = new Set<string>();
  private readonly bootCounts = new Map<string, number>();
  private readonly nodeTimers = new Map<string, () => void>();
  private readonly joinTimers = new Map<string, () => void>();
  /**
   * Instances whose Node existed when their VM went down: only such a kubelet registers its Node again
   * at the next boot when it finds none. A new instance joins through its bootstrap instead.
   */
  private readonly downWithNode = new Set<string>();
  private readonly cleanups: (() => void)[] = [];
  private heartbeat: (() => void) | undefined;
  private readonly prep: PrepRuns;
  /** The VMs' disk models, what each boot reads off them, and the findings. */
  readonly identities: NodeIdentities;
  /** What scripts leave on the hosts (mounts, units, freezes) and the hazards the world saw. */
  readonly hosts: HostRuntimes;
  private readonly deployments: DeploymentController;
  private stopped = false;

  constructor(options: ClusterWorldOptions) {
    this.name = options.spec.name;
    this.resourceGroup = options.spec.resourceGroup;
    this.spec = options.spec;
    this.clock = options.clock;
    this.compute = options.compute;
    this.latency = options.latency;
    this.store = createInMemoryKubeStore({ clock: options.clock });
    this.ownsControllers = (options.kubeControllers ?? 'world') === 'world';
    if (this.ownsControllers) {
      this.kubeControllers = startKubeControllers({
        store: this.store,
        clock: options.clock,
        scheduler: options.clock,
        latency: options.latency,
      });
    }
    this.identities = new NodeIdentities({
      cluster: this.name,
      compute: this.compute,
      clock: this.clock,
      flavourOf: (instance) => this.poolOf(instance)?.spec.bootstrapFlavour ?? 'aks-engine',
      roleOf: (instance) => this.poolOf(instance)?.spec.role ?? 'agent',
      imageOf: (instance) => this.poolOf(instance)?.spec.image,
      bootstrapTokenSecret: (tokenId) =>
        this.store.get('secrets', 'kube-system', `bootstrap-token-${tokenId}`),
      nodeOwner: (nodeName) =>
        this.store.get('nodes', undefined, nodeName) ? this.instanceOfNode(nodeName)?.vmId : undefined,
    });
    this.hosts = new HostRuntimes({
      cluster: this.name,
      clock: this.clock,
      compute: this.compute,
      identities: this.identities,
      onThaw: (instance) => {
        // What the node pulled while its root was frozen reaches the disk now.
        const node = this.store.get('nodes', undefined, nodeNameOf(instance));
        if (node) this.identities.syncImages(instance, nodeImages(node));
      },
    });
    this.prep = new PrepRuns({
      cluster: this.name,
      store: this.store,
      clock: this.clock,
      compute: this.compute,
      latency: this.latency,
      instanceOfNode: (nodeName) => this.instanceOfNode(nodeName),
      identities: this.identities,
      hosts: this.hosts,
    });
    this.prepRecords = this.prep.records;
    this.deployments = new DeploymentController(this.name, this.store, this.clock);
    this.seedCompute(options);
    this.seedKubernetes();
    this.cleanups.push(this.store.subscribe((event) => this.onKubeEvent(event)));
    this.scheduleHeartbeats();
  }

  // ------------------------------------------------------------------------------ seeding

  private seedCompute(options: ClusterWorldOptions): void {
    const nowMs = this.clock.nowMs();
    options.spec.scaleSets.forEach((pool, index) => {
      const overrides = new Map(pool.nodes.map((node) => [node.index, node]));
      const instances: InstanceSeed[] = [];
      for (let position = 0; position < pool.capacity; position++) {
        const powerState = overrides.get(position)?.powerState ?? 'running';
        instances.push({ powerState });
      }
      const info = this.compute.addScaleSet({
        subscriptionId: options.subscriptionId,
        resourceGroup: options.spec.resourceGroup,
        name: pool.name,
        location: options.location,
        orchestrationMode: pool.orchestrationMode,
        skuName: pool.vmSize,
        instances,
        ...(pool.computerNamePrefix ? { computerNamePrefix: pool.computerNamePrefix } : {}),
        imageReference: pool.imageReference,
        osType: pool.osType,
        hyperVGeneration: pool.hyperVGeneration,
        ephemeralOsDisk: pool.ephemeralOsDisk,
        ...(pool.securityType ? { securityType: pool.securityType } : {}),
        ...(pool.customData === undefined
          ? {}
          : { customData: Buffer.from(pool.customData).toString('base64') }),
        extensions: pool.extensions.map((extension) => ({
          name: extension.name,
          publisher: extension.publisher,
          type: extension.type,
          typeHandlerVersion: extension.typeHandlerVersion,
          ...(extension.settings ? { settings: extension.settings } : {}),
        })),
        tags: pool.tags,
        upgradePolicy: { mode: pool.upgradePolicy, enableAutomaticOSUpgrade: pool.automaticOSUpgrade },
        ...(pool.zones ? { zones: pool.zones } : {}),
      });
      const entry: PoolEntry = { spec: pool, index: options.poolIndexBase + index, scaleSetId: info.id };
      this.pools.set(info.id.toLowerCase(), entry);
      for (const instance of this.compute.listInstances(info.id)) {
        const override = overrides.get(Number(instance.instanceId));
        const running = instance.powerState === 'running';
        const readyFor = override?.readyFor ?? pool.readyFor;
        const readySinceMs = running ? nowMs - Math.abs(parseDurationMs(readyFor)) : undefined;
        const kured = { ...(pool.kured ?? {}), ...(override?.kured ?? {}) };
        this.identities.provision(instance, this.seededImages(), readySinceMs ?? nowMs);
        const disk = this.identities.diskOf(instance);
        const node = buildNode({
          instance,
          clusterName: this.name,
          resourceGroup: this.resourceGroup,
          poolName: poolNameOf(pool),
          role: pool.role,
          osType: pool.osType,
          vmSize: pool.vmSize,
          kubernetesVersion: this.spec.kubernetesVersion,
          poolIndex: entry.index,
          flavour: pool.bootstrapFlavour,
          clusterApiMachine: ownedByCapz(pool.tags),
          labels: { ...pool.labels, ...(override?.labels ?? {}) },
          annotations: { ...kuredAnnotations(kured, nowMs), ...(override?.annotations ?? {}) },
          taints: [...pool.taints, ...(override?.taints ?? [])],
          unschedulable: override?.cordoned === true,
          readySinceMs,
          conditions: (override?.conditions ?? []).map((condition) =>
            scenarioCondition(condition, readySinceMs ?? nowMs, nowMs),
          ),
          nowMs,
          bootCount: 0,
          ...(disk?.files['/etc/machine-id'] === undefined
            ? {}
            : { machineId: disk.files['/etc/machine-id'] }),
          images: disk?.images ?? [],
        });
        this.store.create('nodes', node);
        if (running) this.kubeletUp.add(node.metadata.name);
      }
    });
    this.cleanups.push(this.compute.subscribe((event) => this.onComputeEvent(event)));
  }

  private seedKubernetes(): void {
    for (const namespace of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.store.create('namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: { 'kubernetes.io/metadata.name': namespace } },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      });
    }
    const namespaces = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
    const ensureNamespace = (namespace: string): void => {
      if (namespaces.has(namespace)) return;
      namespaces.add(namespace);
      this.store.create('namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: { 'kubernetes.io/metadata.name': namespace } },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      });
    };
    const account = this.spec.serviceAccount;
    ensureNamespace(account.namespace);
    this.store.create('serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: account.name, namespace: account.namespace },
    });
    for (const workload of this.spec.workloads) {
      ensureNamespace(workload.namespace);
      for (const { resource, object } of buildWorkloadObjects(workload)) {
        const created = this.store.create(resource, object);
        if (resource === 'deployments') this.store.create('replicasets', replicaSetFor(created));
      }
      if ((workload.kind === 'Deployment' || workload.kind === 'ReplicaSet') && workload.pdb) {
        this.store.create(
          'poddisruptionbudgets',
          buildPdb(workload.name, workload.namespace, { app: workload.name }, workload.pdb),
        );
      }
    }
    for (const node of this.store.list('nodes')) this.renewLease(node.metadata.name);
    this.seedBootstrapTokens();
  }

  /**
   * kubeadm's bootstrap tokens (Secrets `kube-system/bootstrap-token-<id>`): the scenario's
   * `kubeadm.tokens`, each expiring its `ttl` after the start (`0s`: never); without that field, every
   * token a kubeadm pool's customData joins with, never expiring, so a scenario that declares none works.
   */
  private seedBootstrapTokens(): void {
    const nowMs = this.clock.nowMs();
    const declared = this.spec.kubeadm?.tokens.map(({ token, ttl }) => {
      const ms = parseDurationMs(ttl);
      return { token, expiresMs: ms === 0 ? undefined : nowMs + ms };
    });
    const implicit = this.spec.scaleSets
      .filter((pool) => pool.bootstrapFlavour === 'kubeadm')
      .map((pool) => kubeadmJoinOf(pool.customData ?? '')?.token ?? '')
      .filter((token) => BOOTSTRAP_TOKEN_RE.test(token))
      .map((token) => ({ token, expiresMs: undefined }));
    const seeded = new Set<string>();
    for (const { token, expiresMs } of declared ?? implicit) {
      const secret = bootstrapTokenSecret(token, expiresMs);
      if (seeded.has(secret.metadata.name)) continue;
      seeded.add(secret.metadata.name);
      this.store.create('secrets', secret);
    }
  }

  /** The control loops (kubelet, scheduler, ReplicaSet/DaemonSet controllers) serving this store. */
  get controllers(): KubeControllers {
    if (!this.kubeControllers)
      throw new Error(`using cluster ${this.name}: no Kubernetes controllers attached`);
    return this.kubeControllers;
  }

  /**
   * Takes over controllers the API server handler started, and nudges every ReplicaSet and DaemonSet
   * so the (event-driven) loops create the pods of objects seeded before they subscribed.
   */
  attachControllers(controllers: KubeControllers): void {
    if (this.kubeControllers) throw new Error(`attaching controllers to cluster ${this.name}: it has some`);
    this.kubeControllers = controllers;
    for (const resource of ['replicasets', 'daemonsets'] as const) {
      for (const object of this.store.list(resource)) {
        this.store.mutate(resource, object.metadata.namespace, object.metadata.name, () => undefined);
      }
    }
    for (const node of this.store.list('nodes')) {
      this.store.mutate('nodes', undefined, node.metadata.name, () => undefined);
    }
  }

  // ------------------------------------------------------------------------------ lookups

  owns(scaleSetId: string): boolean {
    return this.pools.has(scaleSetId.toLowerCase());
  }

  poolOf(instance: InstanceInfo): PoolEntry | undefined {
    return this.pools.get(instance.scaleSetId.toLowerCase());
  }

  /** Couples a scale set created after the start (a CAPZ canary pool): its instances join this cluster. */
  adoptScaleSet(spec: ScaleSet, scaleSetId: string): void {
    this.pools.set(scaleSetId.toLowerCase(), { spec, index: 100 + this.pools.size, scaleSetId });
  }

  scaleSetIds(): string[] {
    return [...this.pools.values()].map((pool) => pool.scaleSetId);
  }

  /** The instance behind a node, by its providerID. */
  instanceOfNode(nodeName: string): InstanceInfo | undefined {
    const node = this.store.get('nodes', undefined, nodeName);
    const providerId = node ? specOf(node).providerID : undefined;
    if (typeof providerId === 'string') {
      const found = this.compute.findInstanceByProviderId(providerId);
      if (found) return found;
    }
    for (const pool of this.pools.values()) {
      const found = this.compute
        .listInstances(pool.scaleSetId)
        .find((instance) => nodeNameOf(instance) === nodeName);
      if (found) return found;
    }
    return undefined;
  }

  isKubeletUp(nodeName: string): boolean {
    return this.kubeletUp.has(nodeName);
  }

  // ------------------------------------------------------------------------------ compute coupling

  private onComputeEvent(event: ComputeEvent): void {
    if (this.stopped || event.type === 'scale-set-model-changed') return;
    const instance = event.instance;
    if (event.type === 'instance-created' && !this.owns(instance.scaleSetId)) {
      // A canary scale set made by PUT from one of this cluster's pools: its machines join here.
      const spec = canaryScaleSetSpecOf(this.compute, instance.scaleSetId, this.pools, poolNameOf);
      if (spec !== undefined) this.adoptScaleSet(spec, instance.scaleSetId);
    }
    if (!this.owns(instance.scaleSetId)) return;
    const nodeName = nodeNameOf(instance);
    switch (event.type) {
      case 'instance-data-disks-changed':
        this.hosts.onDisksDetached(instance, event.detached);
        break;
      case 'instance-power-changed':
        if (event.previous === 'running') {
          this.prep.onHostDown(instance);
          this.hosts.onShutdown(instance, event.orderly);
          if (this.store.get('nodes', undefined, nodeName)) this.downWithNode.add(instance.id.toLowerCase());
        }
        if (instance.powerState === 'running') {
          this.hosts.onBoot(instance);
          const wentDownWithNode = this.downWithNode.delete(instance.id.toLowerCase());
          if (this.store.get('nodes', undefined, nodeName)) {
            // The machine boots from its disk: a prep script may have changed who it is.
            const outcome = this.identities.boot(instance);
            if (outcome.kind === 'joins' && outcome.nodeName === nodeName) {
              this.setNodeTimer(
                nodeName,
                durationOf(this.latency, 'nodeBootSeconds'),
                `kubelet up ${nodeName}`,
                () => this.kubeletStarted(nodeName),
              );
            }
          } else if (wentDownWithNode && this.identities.hasDisk(instance)) {
            // A kubelet registers its Node again when it starts and finds none (`kubectl delete node`
            // while the VM was stopped).
            this.setNodeTimer(
              nodeName,
              durationOf(this.latency, 'nodeBootSeconds'),
              `kubelet registers ${nodeName}`,
              () => this.join(instance.id, 'image-only', this.clock.nowMs()),
            );
          }
        } else if (event.previous === 'running') {
          this.kubeletStopped(nodeName);
        }
        break;
      case 'instance-created': {
        // The scenario's broken image: the machine runs, its kubelet never registers.
        if (event.bootsFromGalleryImage && this.poolOf(instance)?.spec.galleryImagesNeverJoin === true) break;
        const bootstrap = this.bootstrapOf(
          instance,
          event.bootsFromGalleryImage,
          event.bootstrapExtensionsRemain,
        );
        const operation = (
          {
            'marketplace-full': 'newNodeJoinFromMarketplaceSeconds',
            'image-only': 'newNodeJoinFromPrototypeSeconds',
            'image-kubeadm-join': 'newNodeJoinFromPrototypeWithKubeadmJoinSeconds',
          } as const
        )[bootstrap];
        const seconds = durationOf(this.latency, operation);
        const createdAtMs = this.clock.nowMs();
        const cancel = this.clock.after(seconds, `join ${nodeName}`, () => {
          this.joinTimers.delete(instance.id.toLowerCase());
          this.join(instance.id, bootstrap, createdAtMs);
        });
        this.joinTimers.set(instance.id.toLowerCase(), cancel);
        break;
      }
      case 'instance-deleted': {
        this.identities.forget(instance);
        this.joinTimers.get(instance.id.toLowerCase())?.();
        this.joinTimers.delete(instance.id.toLowerCase());
        this.nodeTimers.get(nodeName)?.();
        this.nodeTimers.delete(nodeName);
        this.kubeletUp.delete(nodeName);
        // The cloud node controller deletes the Node object; pod GC then removes its pods.
        this.store.remove('nodes', undefined, nodeName);
        this.store.remove('leases', 'kube-node-lease', nodeName);
        break;
      }
    }
  }

  /**
   * Which bootstrap a new instance goes through: a gallery image of a kubeadm pool whose model still runs
   * `kubeadm join` joins from the warm image; a gallery image without bootstrap extensions only boots;
   * anything else bootstraps in full.
   */
  private bootstrapOf(
    instance: InstanceInfo,
    galleryImage: boolean,
    extensionsRemain: boolean,
  ): JoinBootstrap {
    if (!galleryImage) return 'marketplace-full';
    // The instance's own model: what it was built with, whatever the scale set's model says later.
    const customData = this.compute.getInstanceBootModel(instance.id)?.customData ?? '';
    if (
      this.poolOf(instance)?.spec.bootstrapFlavour === 'kubeadm' &&
      kubeadmJoinOf(Buffer.from(customData, 'base64').toString('utf8')) !== undefined
    )
      return 'image-kubeadm-join';
    return extensionsRemain ? 'marketplace-full' : 'image-only';
  }

  private join(instanceId: string, bootstrap: JoinBootstrap, createdAtMs: number): void {
    const instance = this.compute.getInstance(instanceId);
    if (!instance) return;
    if (instance.powerState !== 'running') {
      // The bootstrap finishes only once the VM runs; try again when it does.
      this.joinTimers.set(
        instanceId.toLowerCase(),
        this.clock.after(5, `join ${nodeNameOf(instance)}`, () =>
          this.join(instanceId, bootstrap, createdAtMs),
        ),
      );
      return;
    }
    const pool = this.poolOf(instance);
    if (!pool) return;
    // A marketplace image bootstraps a machine of its own; a gallery image boots what it captured.
    if (!this.identities.hasDisk(instance)) this.identities.provision(instance, this.bootstrapImages());
    const outcome = this.identities.boot(instance);
    if (outcome.kind !== 'joins') return;
    const disk = this.identities.diskOf(instance);
    const nowMs = this.clock.nowMs();
    const node = buildNode({
      instance,
      clusterName: this.name,
      resourceGroup: this.resourceGroup,
      poolName: poolNameOf(pool.spec),
      role: pool.spec.role,
      osType: pool.spec.osType,
      vmSize: pool.spec.vmSize,
      kubernetesVersion: this.spec.kubernetesVersion,
      poolIndex: pool.index,
      flavour: pool.spec.bootstrapFlavour,
      clusterApiMachine: ownedByCapz(pool.spec.tags),
      labels: { ...pool.spec.labels },
      annotations: {},
      taints: [...pool.spec.taints],
      unschedulable: false,
      readySinceMs: nowMs,
      conditions: [],
      nowMs,
      bootCount: 0,
      ...(disk?.files['/etc/machine-id'] === undefined ? {} : { machineId: disk.files['/etc/machine-id'] }),
      images: disk?.images ?? [],
    });
    const nodeName = node.metadata.name;
    if (this.store.get('nodes', undefined, nodeName)) this.store.remove('nodes', undefined, nodeName);
    // The node carries no heartbeat older than its registration.
    this.store.create('nodes', withHeartbeat(node, nowMs));
    this.kubeletUp.add(nodeName);
    this.renewLease(nodeName);
    this.joinRecords.push({
      cluster: this.name,
      nodeName,
      instanceId: instance.id,
      fromPrototype: bootstrap !== 'marketplace-full',
      bootstrap,
      createdAt: timestamp(createdAtMs),
      joinedAt: timestamp(nowMs),
      seconds: Math.round((nowMs - createdAtMs) / 1000),
    });
  }

  private setNodeTimer(nodeName: string, seconds: number, label: string, action: () => void): void {
    this.nodeTimers.get(nodeName)?.();
    const cancel = this.clock.after(seconds, label, () => {
      this.nodeTimers.delete(nodeName);
      action();
    });
    this.nodeTimers.set(nodeName, cancel);
  }

  /** The VM left `running`: the kubelet stops posting; the node lifecycle controller notices after the grace period. */
  private kubeletStopped(nodeName: string): void {
    const wasUp = this.kubeletUp.delete(nodeName);
    if (!wasUp && !this.nodeTimers.has(nodeName)) return;
    this.setNodeTimer(nodeName, NODE_MONITOR_GRACE_SECONDS, `node unreachable ${nodeName}`, () =>
      this.markUnreachable(nodeName),
    );
  }

  private markUnreachable(nodeName: string): void {
    if (this.kubeletUp.has(nodeName)) return;
    const nowMs = this.clock.nowMs();
    this.mutateNode(nodeName, (node) => {
      const status = statusOf(node);
      status.conditions = unknownConditions(conditionsOfNode(node), nowMs);
      node.status = status;
      const spec = specOf(node);
      const taints = taintList(spec.taints).filter((taint) => taint.key !== UNREACHABLE_TAINT);
      taints.push(
        { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: timestamp(nowMs) },
        { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: timestamp(nowMs) },
      );
      spec.taints = taints;
      node.spec = spec;
    });
    this.scheduleTaintEvictions(nodeName, nowMs);
  }

  /**
   * The taint manager: pods that do not tolerate `unreachable:NoExecute` are deleted once their
   * toleration runs out — DefaultTolerationSeconds gives pods without one 300 s. On a dead node the
   * deletion cannot complete (the kubelet must confirm), so they stay Terminating while their
   * controllers create replacements elsewhere, as in a real cluster.
   */
  private scheduleTaintEvictions(nodeName: string, taintedAtMs: number): void {
    const taint = { key: UNREACHABLE_TAINT, effect: 'NoExecute' };
    const deadlines = new Map<string, number>();
    for (const pod of this.store.list('pods')) {
      if (podNodeName(pod) !== nodeName || isTerminating(pod)) continue;
      const phase = podPhase(pod);
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const matching = tolerationsOf(pod).filter((toleration) => tolerates(toleration, taint));
      if (matching.some((toleration) => toleration.tolerationSeconds === undefined)) continue;
      const seconds = matching.length > 0 ? Math.min(...matching.map((t) => t.tolerationSeconds ?? 0)) : 300;
      deadlines.set(
        `${pod.metadata.namespace ?? ''}/${pod.metadata.name}/${pod.metadata.uid ?? ''}`,
        seconds,
      );
    }
    for (const [key, seconds] of deadlines) {
      const [namespace = '', name = '', uid = ''] = key.split('/');
      this.clock.at(taintedAtMs + seconds * 1000, `taint eviction ${name}`, () => {
        if (this.stopped || this.kubeletUp.has(nodeName)) return;
        const pod = this.store.get('pods', namespace, name);
        if (!pod || pod.metadata.uid !== uid || isTerminating(pod)) return;
        this.kubeControllers?.deletePod(namespace, name, undefined);
      });
    }
  }

  /** The kubelet is back after a boot: Ready with a fresh transition time and boot id, unreachable taints gone. */
  private kubeletStarted(nodeName: string): void {
    const instance = this.instanceOfNode(nodeName);
    if (!instance || instance.powerState !== 'running') return;
    this.kubeletUp.add(nodeName);
    const nowMs = this.clock.nowMs();
    const boots = (this.bootCounts.get(instance.vmId) ?? 0) + 1;
    this.bootCounts.set(instance.vmId, boots);
    this.mutateNode(nodeName, (node) => {
      const status = statusOf(node);
      // After a boot the kubelet first reports NotReady, so Ready's transition time is always the boot.
      const fresh = healthyConditions(nowMs, nowMs);
      const others = conditionsOfNode(node).filter(
        (condition) => !fresh.some((candidate) => candidate.type === condition.type),
      );
      status.conditions = [...fresh, ...others];
      const nodeInfo = (status.nodeInfo ?? {}) as Record<string, unknown>;
      nodeInfo.bootID = bootIdOf(instance.vmId, boots);
      const machineId = this.identities.diskOf(instance)?.files['/etc/machine-id'];
      if (machineId) nodeInfo.machineID = machineId;
      status.nodeInfo = nodeInfo;
      status.images = imageList(this.identities.imagesOf(instance));
      node.status = status;
      const spec = specOf(node);
      const taints = taintList(spec.taints).filter(
        (taint) => taint.key !== UNREACHABLE_TAINT && taint.key !== 'node.kubernetes.io/not-ready',
      );
      if (taints.length > 0) spec.taints = taints;
      else delete spec.taints;
      node.spec = spec;
    });
    this.renewLease(nodeName);
  }

  private mutateNode(nodeName: string, change: (node: KubeObject) => void): boolean {
    try {
      this.store.mutate('nodes', undefined, nodeName, change);
      return true;
    } catch (error) {
      if (error instanceof KubeStoreError) return false;
      throw error;
    }
  }

  // ------------------------------------------------------------------------------ heartbeats

  private renewLease(nodeName: string): void {
    const renewTime = new Date(this.clock.nowMs()).toISOString().replace('Z', '000Z');
    try {
      this.store.mutate('leases', 'kube-node-lease', nodeName, (lease) => {
        lease.spec = { ...specOf(lease), renewTime };
      });
      return;
    } catch (error) {
      if (!(error instanceof KubeStoreError)) throw error;
    }
    const node = this.store.get('nodes', undefined, nodeName);
    if (!node) return;
    this.store.create('leases', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: nodeName,
        namespace: 'kube-node-lease',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata.uid ?? '' }],
      },
      spec: { holderIdentity: nodeName, leaseDurationSeconds: 40, renewTime },
    });
  }

  private scheduleHeartbeats(): void {
    let ticks = 0;
    const everyStatus = Math.max(1, Math.round(NODE_STATUS_REPORT_SECONDS / LEASE_RENEW_SECONDS));
    const tick = (): void => {
      if (this.stopped) return;
      ticks += 1;
      for (const nodeName of [...this.kubeletUp]) {
        this.renewLease(nodeName);
        if (ticks % everyStatus === 0) this.reportStatus(nodeName);
      }
      this.heartbeat = this.clock.after(LEASE_RENEW_SECONDS, `heartbeats ${this.name}`, tick);
    };
    this.heartbeat = this.clock.after(LEASE_RENEW_SECONDS, `heartbeats ${this.name}`, tick);
  }

  private reportStatus(nodeName: string): void {
    const heartbeat = timestamp(this.clock.nowMs());
    this.mutateNode(nodeName, (node) => {
      const status = statusOf(node);
      status.conditions = conditionsOfNode(node).map((condition) =>
        condition.status === 'Unknown' ? condition : { ...condition, lastHeartbeatTime: heartbeat },
      );
      node.status = status;
    });
  }

  // ------------------------------------------------------------------------------ kube coupling

  /** Reads `event.object` (a copy made on first read) only for the resources it acts on, not on every lease renewal. */
  private onKubeEvent(event: KubeWatchEvent): void {
    if (this.stopped) return;
    const { resource, type } = event;
    if (resource === 'nodes' && type === 'MODIFIED') {
      const object = event.object;
      const instance = this.instanceOfNode(object.metadata.name);
      // A frozen root takes no writes: the image store is synced at the thaw.
      if (instance && !this.hosts.isFrozen(instance.vmId))
        this.identities.syncImages(instance, nodeImages(object));
    }
    if (resource === 'pods' && type !== 'DELETED') this.prep.onPod(event.object);
    if (resource === 'pods' && type === 'DELETED') this.prep.onPodDeleted(event.object);
    if (resource === 'replicasets' || resource === 'deployments') this.deployments.queue();
  }

  /** Images on every seeded node: the cluster's workload images and the scenario's `nodeImages`. */
  private seededImages(): string[] {
    return [...new Set([...this.spec.workloads.map((workload) => workload.image), ...this.spec.nodeImages])];
  }

  /** Images a node bootstrapped from a marketplace image has: its DaemonSets' (pulled while it joined). */
  private bootstrapImages(): string[] {
    return [
      ...new Set([
        ...this.spec.workloads
          .filter((workload) => workload.kind === 'DaemonSet')
          .map((workload) => workload.image),
        ...this.spec.nodeImages,
      ]),
    ];
  }

  /** Run Command on an instance of this cluster: recorded like a prep pod; a power-off in it stops the VM. */
  handleRunCommand(instance: InstanceInfo, script: string): { stdout: string; stderr: string } {
    return this.prep.handleRunCommand(instance, script);
  }

  /** Pods counted as "workload" on a node: not DaemonSet-owned, not mirror, not finished. */
  workloadPodsOn(nodeName: string): KubeObject[] {
    return this.store.list('pods').filter((pod) => {
      if (podNodeName(pod) !== nodeName) return false;
      const phase = podPhase(pod);
      if (phase === 'Succeeded' || phase === 'Failed') return false;
      if (controllerOf(pod)?.kind === 'DaemonSet') return false;
      return !(pod.metadata.annotations ?? {})['kubernetes.io/config.mirror'];
    });
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.cleanups) cancel();
    this.heartbeat?.();
    this.deployments.stop();
    for (const cancel of this.nodeTimers.values()) cancel();
    this.prep.stop();
    this.hosts.stop();
    for (const cancel of this.joinTimers.values()) cancel();
    if (this.ownsControllers) this.kubeControllers?.stop();
  }
}

/** The pool name nodes carry in `agentpool`: aks-engine's `k8s-<pool>-<suffix>-vmss` → `<pool>`. */
export function poolNameOf(pool: ScaleSet): string {
  const aks = pool.tags['aks-managed-poolName'];
  if (aks) return aks;
  const poolTag = pool.tags.poolName;
  if (poolTag) return poolTag;
  const engine = /^k8s-([a-z0-9]+)-\d+-vmss$/i.exec(pool.name);
  if (engine?.[1]) return engine[1];
  return pool.name.replace(/-?vmss$/i, '');
}

function kuredAnnotations(kured: KuredAnnotations, nowMs: number): Record<string, string> {
  const annotations: Record<string, string> = {};
  if (kured.mostRecentRebootNeeded !== undefined) {
    annotations[KURED_MOST_RECENT_REBOOT_NEEDED] = timestamp(
      resolveTime(kured.mostRecentRebootNeeded, nowMs),
    );
  }
  if (kured.rebootInProgress !== undefined) {
    annotations[KURED_REBOOT_IN_PROGRESS] = timestamp(resolveTime(kured.rebootInProgress, nowMs));
  }
  return annotations;
}

function scenarioCondition(
  condition: {
    type: string;
    status: 'True' | 'False' | 'Unknown';
    reason?: string | undefined;
    message?: string | undefined;
    since?: string | undefined;
  },
  defaultSinceMs: number,
  nowMs: number,
): NodeCondition {
  const since = condition.since === undefined ? defaultSinceMs : resolveTime(condition.since, nowMs);
  return {
    type: condition.type,
    status: condition.status,
    lastHeartbeatTime: timestamp(nowMs),
    lastTransitionTime: timestamp(since),
    reason: condition.reason ?? (condition.status === 'True' ? condition.type : `No${condition.type}`),
    message: condition.message ?? '',
  };
}

function conditionsOfNode(node: KubeObject): NodeCondition[] {
  const conditions = statusOf(node).conditions;
  return Array.isArray(conditions) ? (conditions as NodeCondition[]) : [];
}

function taintList(value: unknown): { key: string; value?: string; effect: string; timeAdded?: string }[] {
  return Array.isArray(value) ? (value as { key: string; effect: string }[]) : [];
}

function withHeartbeat(node: KubeObject, nowMs: number): KubeObject {
  const status = statusOf(node);
  status.conditions = conditionsOfNode(node).map((condition) => ({
    ...condition,
    lastHeartbeatTime: timestamp(nowMs),
  }));
  return { ...node, status };
}
