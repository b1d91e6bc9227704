/**
 * The simulated world: builds the compute state and one Kubernetes store per cluster from a scenario,
 * couples them (cluster.ts), and owns time, faults, the request log and the kured/autoscaler stand-ins.
 */
import { ComputeState } from '../arm/compute-state.js';
import { ArmThrottle } from '../arm/throttling.js';
import type { KubeObject, LatencyProfile } from '../contracts.js';
import { isNodeReady, isUnschedulable, specOf, statusOf, timestamp } from '../kube/objects.js';
import { AutoscalerStandIn } from './autoscaler.js';
import type { CapzEvent } from './capz/events.js';
import { createCapzReconcilers } from './capz/management.js';
import type { CapzReconciler } from './capz/reconciler.js';
import { type ClockMode, createClock, type WorldClock } from './clock.js';
import { ClusterWorld, type JoinRecord, type PrepRecord } from './cluster.js';
import {
  arm5xxBurst,
  arm429Storm,
  createFaultInjector,
  type FaultRule,
  imageVersionLroFailure,
  kubeApiDown,
  snapshotLroFailure,
  snapshotQuotaExceeded,
  type WorldFaults,
} from './faults.js';
import type { FreezeRecord, HostViolation } from './host-runtime.js';
import { type IdentityFinding, type IdentityViolation, identityViolations } from './identity.js';
import { KuredStandIn } from './kured.js';
import { KURED_MOST_RECENT_REBOOT_NEEDED, KURED_REBOOT_IN_PROGRESS } from './nodes.js';
import { createRequestLog, type WorldRequestLog } from './request-log.js';
import {
  type FaultEntry,
  type FaultPreset,
  latencyOf,
  parseDurationMs,
  resolveTime,
  type Scenario,
} from './scenario.js';
import { withJitter } from './timing.js';
import { buildPdb } from './workloads.js';

export interface WorldOptions {
  scenario: Scenario;
  /** Use this clock; otherwise one is created from `clockMode`, `startMs` and `timeFactor`. */
  clock?: WorldClock;
  clockMode?: ClockMode;
  /** Simulated start when the scenario has no `start` (the caller passes wall time; the world never reads it). */
  startMs?: number;
  /** Overrides the scenario's time factor (scaled mode). */
  timeFactor?: number;
  /** 'external' when an API server handler runs the Kubernetes control loops (see ClusterWorld). */
  kubeControllers?: 'world' | 'external';
}

export interface GuestRebootEvent {
  at: string;
  cluster: string;
  nodeName: string;
  vmId: string;
}

export interface ClusterHandle {
  readonly world: ClusterWorld;
  readonly kured: KuredStandIn;
  readonly autoscaler: AutoscalerStandIn;
}

/** What a fault entry did, for logs and the admin endpoint. */
export interface AppliedFault {
  kind: string;
  /** Rule ids added to the injector (empty for world facts). */
  ruleIds: string[];
  /** When it takes effect, RFC3339. */
  at: string;
}

export class World {
  readonly scenario: Scenario;
  readonly clock: WorldClock;
  readonly compute: ComputeState;
  readonly faults: WorldFaults;
  readonly log: WorldRequestLog;
  readonly latency: LatencyProfile;
  readonly clusters: ReadonlyMap<string, ClusterHandle>;
  readonly guestReboots: GuestRebootEvent[] = [];
  /** ARM request-rate accounting, shared by every ARM handler serving this world. */
  readonly throttle: ArmThrottle;
  /** The CAPZ-like reconciler of each Cluster API management cluster, by cluster name (sim/world/capz/). */
  readonly capz: ReadonlyMap<string, CapzReconciler>;
  private readonly rebootListeners = new Set<(event: GuestRebootEvent) => void>();
  private readonly timers = new Set<() => void>();
  private readonly ownsClock: boolean;

  constructor(options: WorldOptions) {
    const { scenario } = options;
    this.scenario = scenario;
    const startMs = scenario.start !== undefined ? Date.parse(scenario.start) : options.startMs;
    if (options.clock) {
      this.clock = options.clock;
      this.ownsClock = false;
    } else {
      if (startMs === undefined) {
        throw new Error('creating world: the scenario has no start time, pass startMs');
      }
      this.clock = createClock({
        mode: options.clockMode ?? 'manual',
        startMs,
        timeFactor: options.timeFactor ?? scenario.timeFactor,
      });
      this.ownsClock = true;
    }
    this.latency = scenario.latency.jitter
      ? withJitter(latencyOf(scenario), scenario.seed)
      : latencyOf(scenario);
    this.compute = new ComputeState({
      clock: this.clock,
      scheduler: this.clock,
      latency: this.latency,
      defaultLocation: scenario.location,
      defaultSubscriptionId: scenario.subscriptionId,
    });
    this.compute.setRegionCapabilities(scenario.location, { zrs: scenario.region.zoneRedundantStorage });
    this.faults = createFaultInjector({ clock: this.clock, seed: scenario.seed });
    this.throttle = new ArmThrottle({ clock: this.clock, enforce: scenario.region.throttling === 'enforce' });
    this.log = createRequestLog();

    const clusters = new Map<string, ClusterHandle>();
    let poolIndexBase = 0;
    for (const spec of scenario.clusters) {
      const world = new ClusterWorld({
        spec,
        subscriptionId: spec.subscriptionId ?? scenario.subscriptionId,
        location: scenario.location,
        clock: this.clock,
        compute: this.compute,
        latency: this.latency,
        poolIndexBase,
        ...(options.kubeControllers ? { kubeControllers: options.kubeControllers } : {}),
      });
      poolIndexBase += spec.scaleSets.length;
      const kured = new KuredStandIn({
        cluster: world,
        clock: this.clock,
        compute: this.compute,
        onGuestReboot: (vmId, nodeName) => this.emitGuestReboot(spec.name, vmId, nodeName),
      });
      const autoscaler = new AutoscalerStandIn({ cluster: world, clock: this.clock, compute: this.compute });
      if (spec.autoscaler.enabled) autoscaler.enable(spec.autoscaler.intervalSeconds);
      clusters.set(spec.name, { world, kured, autoscaler });
    }
    this.clusters = clusters;
    this.capz = createCapzReconcilers({
      scenario,
      clusters: new Map([...clusters].map(([name, handle]) => [name, handle.world])),
      clock: this.clock,
      compute: this.compute,
    });

    this.compute.setRunCommandHandler((instance, record) => {
      const owner = [...clusters.values()].find((handle) => handle.world.owns(instance.scaleSetId));
      return owner?.world.handleRunCommand(instance, record.script.join('\n')) ?? { stdout: '', stderr: '' };
    });

    // A copy of a running VM's disk is crash-consistent unless its root filesystem is frozen.
    this.compute.setCopyObserver((sourceDiskId, content) => {
      const owner = this.compute.getDisk(sourceDiskId)?.managedBy;
      const instance = owner === undefined ? undefined : this.compute.getInstance(owner);
      if (!instance || instance.osDiskId?.toLowerCase() !== sourceDiskId.toLowerCase()) return undefined;
      const handle = [...clusters.values()].find((candidate) => candidate.world.owns(instance.scaleSetId));
      const frozen = handle?.world.hosts.isFrozen(instance.vmId) ?? false;
      if (instance.powerState === 'running' && !frozen && content.filesystem) {
        content.filesystem = { ...content.filesystem, needsRecovery: true };
      }
      return { content, frozen };
    });

    for (const entry of scenario.faults) this.applyFault(entry, startMs ?? this.clock.nowMs());
  }

  /**
   * The hosts as scripts left them: every root filesystem freeze (what thawed it, how long it lasted) and
   * the violations the world saw — a boot with an attached duplicate of the root filesystem, a freeze
   * nothing thawed, a data disk detached while mounted (sim/world/host-runtime.ts).
   */
  hosts(): { freezes: FreezeRecord[]; violations: HostViolation[] } {
    const handles = [...this.clusters.values()];
    return {
      freezes: handles.flatMap((handle) => handle.world.hosts.freezes),
      violations: handles.flatMap((handle) => handle.world.hosts.violations),
    };
  }

  /** The resource groups that exist: the clusters' and the scenario's `region.resourceGroups`. */
  resourceGroups(): { name: string; location: string }[] {
    return [
      ...this.scenario.clusters.map((cluster) => cluster.resourceGroup),
      ...this.scenario.region.resourceGroups,
    ].map((name) => ({ name, location: this.scenario.location }));
  }

  /** The first cluster, or the one named. */
  cluster(name?: string): ClusterHandle {
    const handle = name === undefined ? this.clusters.values().next().value : this.clusters.get(name);
    if (!handle) {
      throw new Error(
        `finding cluster ${name ?? '(first)'}: known clusters are ${[...this.clusters.keys()].join(', ')}`,
      );
    }
    return handle;
  }

  /** The cluster a node belongs to. */
  clusterOfNode(nodeName: string): ClusterHandle | undefined {
    return [...this.clusters.values()].find((handle) => handle.world.store.get('nodes', undefined, nodeName));
  }

  onGuestReboot(listener: (event: GuestRebootEvent) => void): () => void {
    this.rebootListeners.add(listener);
    return () => this.rebootListeners.delete(listener);
  }

  private emitGuestReboot(cluster: string, vmId: string, nodeName: string): void {
    const event = { at: timestamp(this.clock.nowMs()), cluster, nodeName, vmId };
    this.guestReboots.push(event);
    for (const listener of [...this.rebootListeners]) listener(event);
  }

  /** Deletes a node's instance (the cloud then removes the Node). Throws when the node is unknown. */
  deleteNode(nodeName: string): void {
    const handle = this.clusterOfNode(nodeName);
    const instance = handle?.world.instanceOfNode(nodeName);
    if (!handle || !instance) throw new Error(`deleting node ${nodeName}: no such node`);
    this.compute.deleteInstance(instance.id);
  }

  /**
   * Identity as the world sees it: what booted VMs inherited or could not do (findings, in order) and
   * the identities running VMs share right now (violations: duplicated machine-id, hostname, SSH host
   * key), across clusters.
   */
  identity(): { findings: IdentityFinding[]; violations: IdentityViolation[] } {
    const running = new Set(
      this.compute
        .listScaleSets()
        .flatMap((scaleSet) => this.compute.listInstances(scaleSet.id))
        .filter((instance) => instance.powerState === 'running')
        .map((instance) => instance.vmId),
    );
    const identities = [...this.clusters.values()].flatMap((handle) =>
      handle.world.identities.identitiesOf(running),
    );
    return {
      findings: [...this.clusters.values()].flatMap((handle) => handle.world.identities.findings),
      violations: identityViolations(identities),
    };
  }

  /** What the CAPZ reconcilers did (model writes, reverts, machine deletes, canary scale sets…), in order. */
  capzEvents(): CapzEvent[] {
    return [...this.capz.values()].flatMap((reconciler) => reconciler.events);
  }

  prepRecords(): PrepRecord[] {
    return [...this.clusters.values()].flatMap((handle) => handle.world.prepRecords);
  }

  joinRecords(): JoinRecord[] {
    return [...this.clusters.values()].flatMap((handle) => handle.world.joinRecords);
  }

  /**
   * Applies a scenario fault entry: a rule goes to the injector; a preset becomes rules or a scheduled
   * world change. Times in the entry are relative to `baseMs` (the scenario start, or now at run time).
   */
  applyFault(entry: FaultEntry, baseMs = this.clock.nowMs()): AppliedFault {
    if (!('preset' in entry)) {
      const rule = this.faults.add({
        api: entry.api,
        operation: entry.operation,
        status: entry.status,
        code: entry.code,
        message: entry.message,
        ...(entry.id === undefined ? {} : { id: entry.id }),
        ...(entry.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: entry.retryAfterSeconds }),
        ...(entry.times === undefined ? {} : { times: entry.times }),
        ...(entry.probability === undefined ? {} : { probability: entry.probability }),
        ...(entry.from === undefined ? {} : { fromMs: resolveTime(entry.from, baseMs) }),
        ...(entry.until === undefined ? {} : { untilMs: resolveTime(entry.until, baseMs) }),
      });
      return { kind: 'rule', ruleIds: [rule.id], at: timestamp(rule.fromMs ?? this.clock.nowMs()) };
    }
    return this.applyPreset(entry, baseMs);
  }

  private applyPreset(preset: FaultPreset, baseMs: number): AppliedFault {
    const startMs = baseMs + parseDurationMs(preset.at);
    const startIn = Math.max(0, (startMs - this.clock.nowMs()) / 1000);
    const seconds = preset.for === undefined ? undefined : parseDurationMs(preset.for) / 1000;
    const at = timestamp(Math.max(startMs, this.clock.nowMs()));
    const rule = (spec: Parameters<WorldFaults['add']>[0]): AppliedFault => {
      const added = this.faults.add(spec);
      return { kind: preset.preset, ruleIds: [added.id], at };
    };
    const operation = preset.operation === undefined ? {} : { operation: preset.operation };
    switch (preset.preset) {
      case 'arm-429-storm':
        return rule(
          arm429Storm(this.clock, {
            seconds: seconds ?? 60,
            startInSeconds: startIn,
            ...operation,
            ...(preset.retryAfterSeconds === undefined
              ? {}
              : { retryAfterSeconds: preset.retryAfterSeconds }),
          }),
        );
      case 'arm-5xx-burst':
        return rule({ ...arm5xxBurst({ count: preset.count ?? 3, ...operation }), fromMs: startMs });
      case 'image-version-lro-failure':
        return rule({ ...imageVersionLroFailure({ count: preset.count ?? 1 }), fromMs: startMs });
      case 'snapshot-quota-exceeded':
        return rule({
          ...snapshotQuotaExceeded(preset.count === undefined ? {} : { count: preset.count }),
          fromMs: startMs,
        });
      case 'snapshot-lro-failure':
        return rule({ ...snapshotLroFailure({ count: preset.count ?? 1 }), fromMs: startMs });
      case 'kube-api-down':
        return rule(
          kubeApiDown(this.clock, { seconds: seconds ?? 60, startInSeconds: startIn, ...operation }),
        );
      case 'zrs-unsupported': {
        const location = this.scenario.location;
        this.at(startMs, 'zrs unsupported', () =>
          this.compute.setRegionCapabilities(location, { zrs: false }),
        );
        if (seconds !== undefined) {
          this.at(startMs + seconds * 1000, 'zrs supported again', () =>
            this.compute.setRegionCapabilities(location, { zrs: this.scenario.region.zoneRedundantStorage }),
          );
        }
        return { kind: preset.preset, ruleIds: [], at };
      }
      case 'pdb-never-allows': {
        const handle = this.cluster(preset.cluster);
        const workload = preset.workload ?? '';
        const namespace = preset.namespace ?? 'default';
        this.at(startMs, `pdb never allows ${workload}`, () => {
          handle.world.store.create(
            'poddisruptionbudgets',
            buildPdb(`${workload}-never`, namespace, { app: workload }, { maxUnavailable: 0 }),
          );
        });
        return { kind: preset.preset, ruleIds: [], at };
      }
      case 'node-deleted': {
        const node = preset.node ?? '';
        this.at(startMs, `delete node ${node}`, () => {
          if (this.clusterOfNode(node)) this.deleteNode(node);
        });
        return { kind: preset.preset, ruleIds: [], at };
      }
      case 'scrub-leaves': {
        // A world fact: every host's `rm -rf` (of the given cluster, or all) leaves the path in place.
        const path = preset.path ?? '';
        const handles =
          preset.cluster === undefined ? [...this.clusters.values()] : [this.cluster(preset.cluster)];
        this.at(startMs, `rm leaves ${path}`, () => {
          for (const handle of handles) handle.world.hosts.leaveOnRemove(path);
        });
        return { kind: preset.preset, ruleIds: [], at };
      }
      case 'host-command': {
        // A world fact: the command prints the fault's stderr and exits its code on every host.
        const override = {
          command: preset.command ?? '',
          exitCode: preset.exitCode ?? 1,
          stderr: preset.stderr ?? '',
        };
        const handles =
          preset.cluster === undefined ? [...this.clusters.values()] : [this.cluster(preset.cluster)];
        this.at(startMs, `host command ${override.command} exits ${override.exitCode}`, () => {
          for (const handle of handles) handle.world.hosts.overrideCommand(override);
        });
        return { kind: preset.preset, ruleIds: [], at };
      }
    }
  }

  private at(ms: number, label: string, action: () => void): void {
    const cancel = this.clock.at(ms, label, () => {
      this.timers.delete(cancel);
      action();
    });
    this.timers.add(cancel);
  }

  /** A JSON view of the world for the admin endpoint and debugging. */
  dump(): WorldDump {
    return {
      now: new Date(this.clock.nowMs()).toISOString(),
      latencyProfile: this.latency.name,
      clock: {
        mode: this.clock.mode,
        timeFactor: this.clock.timeFactor,
        pendingEvents: this.clock.pending().length,
        nextEventAt: nextAt(this.clock),
      },
      regionCapabilities: this.compute.regionCapabilities(this.scenario.location),
      clusters: [...this.clusters.values()].map(({ world, kured, autoscaler }) => ({
        name: world.name,
        resourceGroup: world.resourceGroup,
        nodes: world.store.list('nodes').map((node) => nodeSummary(node, world)),
        pods: world.store.list('pods').length,
        kuredBusy: kured.isBusy(),
        kuredEvents: kured.events.length,
        autoscalerEnabled: autoscaler.isEnabled(),
        scaledDown: autoscaler.removed,
      })),
      scaleSets: this.compute.listScaleSets().map((scaleSet) => ({
        id: scaleSet.id,
        capacity: scaleSet.capacity,
        imageReference: scaleSet.imageReference,
        bootstrapExtensionsRemain: scaleSet.bootstrapExtensionsRemain,
        provisioningState: scaleSet.provisioningState,
        instances: this.compute.listInstances(scaleSet.id).map((instance) => ({
          instanceId: instance.instanceId,
          computerName: instance.computerName,
          powerState: instance.powerState,
          latestModelApplied: instance.latestModelApplied,
        })),
      })),
      snapshots: this.compute
        .listSnapshots()
        .map((snapshot) => ({ id: snapshot.id, state: snapshot.provisioningState })),
      faults: this.faults.rules(),
      requests: this.log.snapshot(),
      joins: this.joinRecords(),
      prep: this.prepRecords(),
      identity: this.identity(),
      hosts: this.hosts(),
      guestReboots: this.guestReboots,
      capz: this.capzEvents(),
    };
  }

  stop(): void {
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    for (const reconciler of this.capz.values()) reconciler.stop();
    for (const handle of this.clusters.values()) {
      handle.kured.stop();
      handle.autoscaler.disable();
      handle.world.stop();
    }
    if (this.ownsClock) this.clock.stop();
  }
}

export interface WorldDump {
  now: string;
  latencyProfile: string;
  clock: { mode: ClockMode; timeFactor: number; pendingEvents: number; nextEventAt: string | undefined };
  regionCapabilities: { zrs: boolean };
  clusters: {
    name: string;
    resourceGroup: string;
    nodes: NodeSummary[];
    pods: number;
    kuredBusy: boolean;
    kuredEvents: number;
    autoscalerEnabled: boolean;
    scaledDown: unknown[];
  }[];
  scaleSets: unknown[];
  snapshots: unknown[];
  faults: FaultRule[];
  requests: unknown;
  joins: JoinRecord[];
  prep: PrepRecord[];
  identity: { findings: IdentityFinding[]; violations: IdentityViolation[] };
  hosts: { freezes: FreezeRecord[]; violations: HostViolation[] };
  guestReboots: GuestRebootEvent[];
  capz: CapzEvent[];
}

export interface NodeSummary {
  name: string;
  ready: string;
  unschedulable: boolean;
  kubeletUp: boolean;
  providerID: string;
  mostRecentRebootNeeded?: string;
  rebootInProgress?: string;
}

function nextAt(clock: WorldClock): string | undefined {
  const next = clock.nextEventAt();
  return next === undefined ? undefined : new Date(next).toISOString();
}

function nodeSummary(node: KubeObject, world: ClusterWorld): NodeSummary {
  const annotations = node.metadata.annotations ?? {};
  const conditions = Array.isArray(statusOf(node).conditions)
    ? (statusOf(node).conditions as { type: string; status: string }[])
    : [];
  const summary: NodeSummary = {
    name: node.metadata.name,
    ready: isNodeReady(node)
      ? 'True'
      : (conditions.find((condition) => condition.type === 'Ready')?.status ?? 'Unknown'),
    unschedulable: isUnschedulable(node),
    kubeletUp: world.isKubeletUp(node.metadata.name),
    providerID: typeof specOf(node).providerID === 'string' ? (specOf(node).providerID as string) : '',
  };
  const needed = annotations[KURED_MOST_RECENT_REBOOT_NEEDED];
  const inProgress = annotations[KURED_REBOOT_IN_PROGRESS];
  if (needed !== undefined) summary.mostRecentRebootNeeded = needed;
  if (inProgress !== undefined) summary.rebootInProgress = inProgress;
  return summary;
}

/** Builds a world in manual time (tests, the local runner) or scaled time (`npm run sim`). */
export function createWorld(options: WorldOptions): World {
  return new World(options);
}
