/**
 * The hosts of one simulated cluster as scripts leave them between runs: what is mounted where, the
 * host's tmpfs (`/run`), the transient systemd units scripts started (a timer that runs a command once; a
 * service whose ExecStop runs when the host shuts down or its RuntimeMaxSec ends), and whether the root
 * filesystem is frozen. Builds the model a script runs over (host-commands.ts) and commits what it did.
 *
 * What the world checks and records here (`world.hosts()`):
 * - freezes: when each root filesystem froze and what thawed it (the script, a unit — the hard bound —,
 *   a shutdown, or the world's own limit);
 * - violations: a boot with a data disk attached that carries the root filesystem's UUID, label or
 *   partition UUID (the boot may mount it as the root); a freeze the world had to end (nothing thawed it
 *   within FREEZE_LIMIT_SECONDS); a data disk detached while mounted.
 * Writes to a frozen root filesystem block: a script segment that would write there waits for the thaw
 * (prep-runs.ts), and the node's image store is synced to its disk only once thawed.
 */
import type { ComputeState, DiskContent, InstanceInfo } from '../arm/compute-state.js';
import { timestamp } from '../kube/objects.js';
import type { WorldClock } from './clock.js';
import {
  type CommandOverride,
  type HostEffects,
  type HostModel,
  type HostUnit,
  noEffects,
} from './host-commands.js';
import { HostShell } from './host-shell.js';
import type { NodeIdentities } from './node-identity.js';
import { nodeNameOf } from './nodes.js';
import { findBwrap } from './real-shell.js';
import { applyRun, runOnHost } from './real-shell-run.js';

/** Beyond this, a frozen root wedges a real node (kubelet, runtime, journald block): the world thaws and flags it. */
export const FREEZE_LIMIT_SECONDS = 300;

export interface FreezeRecord {
  cluster: string;
  nodeName: string;
  vmId: string;
  /** Who froze it (a pod's name). */
  by: string;
  frozenAt: string;
  thawedAt?: string;
  thawedBy?: 'script' | 'unit' | 'shutdown' | 'world-limit';
  /** Simulated seconds it stayed frozen, to a tenth, from the freeze's own millisecond (not `frozenAt`'s second). */
  seconds?: number;
}

export interface HostViolation {
  kind: 'boot-with-duplicate-root-filesystem' | 'frozen-past-limit' | 'disk-detached-while-mounted';
  cluster: string;
  nodeName: string;
  vmId: string;
  at: string;
  detail: string;
}

interface Runtime {
  mounts: Map<string, string>;
  units: Map<string, HostUnit>;
  unitTimers: Map<string, () => void>;
  tmpfs: Record<string, string>;
  /** `atMs`: when it froze, to the millisecond (the record's `frozenAt` has whole seconds). */
  freeze?: { record: FreezeRecord; atMs: number; cancelLimit: () => void };
  /** Work blocked by the freeze, run at the thaw. */
  blocked: (() => void)[];
}

export interface HostRuntimesOptions {
  cluster: string;
  clock: WorldClock;
  compute: ComputeState;
  identities: NodeIdentities;
  /** Called when a host's root thaws (the node syncs what it could not write). */
  onThaw?: (instance: InstanceInfo) => void;
}

export class HostRuntimes {
  readonly freezes: FreezeRecord[] = [];
  readonly violations: HostViolation[] = [];
  private readonly runtimes = new Map<string, Runtime>();
  /** The `scrub-leaves` fault: paths every host's `rm -rf` leaves in place. */
  private readonly rmLeaves = new Set<string>();
  /** The `host-command` fault: commands every host runs as the fault says. */
  private commandOverrides: CommandOverride[] = [];

  constructor(private readonly options: HostRuntimesOptions) {}

  /** From now on `rm -rf` on any host of this cluster leaves `path` (on the disk it works on) in place. */
  leaveOnRemove(path: string): void {
    this.rmLeaves.add(path);
  }

  /** From now on `override.command` on any host of this cluster prints its stderr and exits its code. */
  overrideCommand(override: CommandOverride): void {
    this.commandOverrides = [
      ...this.commandOverrides.filter((entry) => entry.command !== override.command),
      override,
    ];
  }

  /** A copy of the host as a script sees it now. */
  model(instance: InstanceInfo): HostModel {
    const runtime = this.runtime(instance.vmId);
    const dataDisks = new Map<number, { diskId: string; content: DiskContent }>();
    const current = this.options.compute.getInstance(instance.id) ?? instance;
    for (const disk of current.dataDisks) {
      dataDisks.set(disk.lun, {
        diskId: disk.diskId,
        content: this.options.compute.getDiskContent(disk.diskId) ?? { files: {}, images: [] },
      });
    }
    return {
      root: this.options.identities.diskOf(current) ?? { files: {}, images: [] },
      dataDisks,
      mounts: new Map(runtime.mounts),
      frozen: runtime.freeze !== undefined,
      units: new Map(runtime.units),
      tmpfs: { ...runtime.tmpfs },
      systemState: 'running',
      ...(this.rmLeaves.size > 0 ? { rmLeaves: [...this.rmLeaves] } : {}),
      ...(this.commandOverrides.length > 0 ? { commandOverrides: [...this.commandOverrides] } : {}),
    };
  }

  isFrozen(vmId: string): boolean {
    return this.runtimes.get(vmId)?.freeze !== undefined;
  }

  /** Runs `work` once the host's root thaws (at once when it is not frozen). */
  whenThawed(vmId: string, work: () => void): void {
    const runtime = this.runtime(vmId);
    if (runtime.freeze === undefined) work();
    else runtime.blocked.push(work);
  }

  /** Makes what a script did real: disk contents, mounts, tmpfs, units, the freeze. */
  commit(
    instance: InstanceInfo,
    model: HostModel,
    effects: HostEffects,
    actor: { name: string; kind: 'script' | 'unit' },
  ): void {
    const { compute } = this.options;
    const runtime = this.runtime(instance.vmId);
    if (effects.rootWritten && instance.osDiskId && compute.getDisk(instance.osDiskId)) {
      compute.setDiskContent(instance.osDiskId, model.root);
    }
    for (const disk of model.dataDisks.values()) {
      if (effects.writtenDisks.has(disk.diskId) && compute.getDisk(disk.diskId)) {
        compute.setDiskContent(disk.diskId, disk.content);
      }
    }
    runtime.mounts = new Map(model.mounts);
    runtime.tmpfs = { ...model.tmpfs };
    for (const name of effects.stoppedUnits) {
      const unit = runtime.units.get(name);
      runtime.unitTimers.get(name)?.();
      runtime.unitTimers.delete(name);
      runtime.units.delete(name);
      if (unit?.kind === 'service' && unit.execStop !== undefined)
        this.later(instance, unit.execStop, name, 'running');
    }
    for (const name of effects.startedUnits) {
      const unit = model.units.get(name);
      if (unit === undefined) continue;
      runtime.units.set(name, unit);
      this.schedule(instance, name, unit);
    }
    if (model.frozen && runtime.freeze === undefined) this.froze(instance, runtime, actor.name);
    else if (!model.frozen && runtime.freeze !== undefined) this.thawed(instance, runtime, actor.kind);
  }

  /** The host shuts down (`orderly`: the guest's own shutdown runs): units stop, tmpfs and mounts go. */
  onShutdown(instance: InstanceInfo, orderly: boolean): void {
    const runtime = this.runtimes.get(instance.vmId);
    if (!runtime) return;
    if (orderly) {
      for (const [name, unit] of runtime.units) {
        if (unit.kind === 'service' && unit.execStop !== undefined)
          this.runUnitScript(instance, unit.execStop, name, 'stopping');
      }
    }
    for (const cancel of runtime.unitTimers.values()) cancel();
    if (runtime.freeze !== undefined) this.thawed(instance, runtime, 'shutdown');
    this.runtimes.delete(instance.vmId);
  }

  /** The host boots: a data disk that duplicates the root filesystem's identity may be mounted as the root. */
  onBoot(instance: InstanceInfo): void {
    const root = this.options.identities.diskOf(instance)?.filesystem;
    if (!root) return;
    for (const disk of instance.dataDisks) {
      const copy = this.options.compute.getDiskContent(disk.diskId)?.filesystem;
      if (!copy) continue;
      const shared = [
        copy.uuid === root.uuid ? `filesystem UUID ${root.uuid}` : undefined,
        copy.label !== '' && copy.label === root.label ? `label ${root.label}` : undefined,
        copy.partUuid === root.partUuid ? `partition UUID ${root.partUuid}` : undefined,
      ].filter((entry): entry is string => entry !== undefined);
      if (shared.length === 0) continue;
      this.violate(
        instance,
        'boot-with-duplicate-root-filesystem',
        `the VM booted with data disk ${disk.name} at LUN ${disk.lun} carrying the root filesystem's ${shared.join(', ')}: the boot may mount it as its root`,
      );
    }
  }

  /** Data disks left the host: a mount on one is now a dead mount. */
  onDisksDetached(
    instance: InstanceInfo,
    detached: readonly { diskId: string; lun: number; name: string }[],
  ): void {
    const runtime = this.runtimes.get(instance.vmId);
    if (!runtime) return;
    for (const disk of detached) {
      for (const [mountPoint, diskId] of runtime.mounts) {
        if (diskId.toLowerCase() !== disk.diskId.toLowerCase()) continue;
        runtime.mounts.delete(mountPoint);
        this.violate(
          instance,
          'disk-detached-while-mounted',
          `data disk ${disk.name} (LUN ${disk.lun}) was detached while mounted at ${mountPoint}`,
        );
      }
    }
  }

  stop(): void {
    for (const runtime of this.runtimes.values()) {
      for (const cancel of runtime.unitTimers.values()) cancel();
      runtime.freeze?.cancelLimit();
    }
  }

  private runtime(vmId: string): Runtime {
    let runtime = this.runtimes.get(vmId);
    if (!runtime) {
      runtime = { mounts: new Map(), units: new Map(), unitTimers: new Map(), tmpfs: {}, blocked: [] };
      this.runtimes.set(vmId, runtime);
    }
    return runtime;
  }

  private schedule(instance: InstanceInfo, name: string, unit: HostUnit): void {
    const runtime = this.runtime(instance.vmId);
    const seconds = unit.kind === 'timer' ? unit.seconds : unit.runtimeMaxSeconds;
    if (seconds === undefined) return;
    const cancel = this.options.clock.after(seconds, `unit ${name} on ${instance.name}`, () => {
      const current = this.runtimes.get(instance.vmId);
      if (current !== runtime || !runtime.units.has(name)) return;
      runtime.unitTimers.delete(name);
      if (unit.kind === 'timer') {
        // RemainAfterElapse: the elapsed timer stays loaded until stopped.
        this.runUnitScript(instance, unit.command, name, 'running');
      } else {
        runtime.units.delete(name);
        if (unit.execStop !== undefined) this.runUnitScript(instance, unit.execStop, name, 'running');
      }
    });
    runtime.unitTimers.set(name, cancel);
  }

  private later(instance: InstanceInfo, script: string, name: string, state: 'running' | 'stopping'): void {
    this.options.clock.after(0, `unit ${name} stop on ${instance.name}`, () => {
      if (this.options.compute.getInstance(instance.id)?.powerState === 'running') {
        this.runUnitScript(instance, script, name, state);
      }
    });
  }

  /** A unit's command or ExecStop, run by the host's systemd (not a pod): at once, to its end. */
  private runUnitScript(
    instance: InstanceInfo,
    script: string,
    name: string,
    state: 'running' | 'stopping',
  ): void {
    const current = this.options.compute.getInstance(instance.id);
    if (!current) return;
    if (findBwrap() !== null) {
      // systemd runs the command line (ExecStop=/bin/sh FILE) as root on the host: the real shell.
      const model = this.model(current);
      model.systemState = state;
      const result = runOnHost(
        ['/bin/sh', '-c', script],
        model,
        nodeNameOf(current),
        this.options.clock.nowMs(),
      );
      this.commit(current, model, applyRun(model, result), { name, kind: 'unit' });
      return;
    }
    let shell: HostShell;
    try {
      shell = new HostShell(script);
    } catch {
      return;
    }
    const model = this.model(current);
    model.systemState = state;
    const effects = noEffects();
    const step = shell.run(model, effects, this.options.clock.nowMs());
    if (step.kind === 'suspended') shell.kill();
    this.commit(current, model, effects, { name, kind: 'unit' });
  }

  private froze(instance: InstanceInfo, runtime: Runtime, by: string): void {
    const atMs = this.options.clock.nowMs();
    const record: FreezeRecord = {
      cluster: this.options.cluster,
      nodeName: nodeNameOf(instance),
      vmId: instance.vmId,
      by,
      frozenAt: timestamp(atMs),
    };
    this.freezes.push(record);
    const cancelLimit = this.options.clock.after(
      FREEZE_LIMIT_SECONDS,
      `freeze limit ${instance.name}`,
      () => {
        if (runtime.freeze?.record !== record) return;
        this.violate(
          instance,
          'frozen-past-limit',
          `the root filesystem stayed frozen ${FREEZE_LIMIT_SECONDS} s (frozen by ${by}) and nothing thawed it: the world thawed it`,
        );
        this.thawed(instance, runtime, 'world-limit');
      },
    );
    runtime.freeze = { record, atMs, cancelLimit };
  }

  private thawed(instance: InstanceInfo, runtime: Runtime, by: FreezeRecord['thawedBy'] & string): void {
    const freeze = runtime.freeze;
    if (!freeze) return;
    freeze.cancelLimit();
    delete runtime.freeze;
    const now = this.options.clock.nowMs();
    freeze.record.thawedAt = timestamp(now);
    freeze.record.thawedBy = by;
    freeze.record.seconds = Math.round((now - freeze.atMs) / 100) / 10;
    const blocked = runtime.blocked.splice(0);
    for (const work of blocked) work();
    this.options.onThaw?.(instance);
  }

  private violate(instance: InstanceInfo, kind: HostViolation['kind'], detail: string): void {
    this.violations.push({
      kind,
      cluster: this.options.cluster,
      nodeName: nodeNameOf(instance),
      vmId: instance.vmId,
      at: timestamp(this.options.clock.nowMs()),
      detail,
    });
  }
}
