/**
 * A host pod's script that sets a TERM trap and sleeps (live capture's freeze pod: freeze, `sleep N &`,
 * `wait`, a trap that thaws), in the real shell over simulated time. The script runs at once, in stages
 * over the same starting host: first stopped where its first sleep begins — the host as it is then
 * (frozen, its units started) lands at once —, then to its end, which lands once its simulated offset has
 * passed. A graceful deletion before then runs it again with the kubelet's TERM at the deletion's offset
 * (the sleep stand-in delivers it: host-stand-ins.ts): what the trap did lands then, and the pod ends.
 * What the script does between its first sleep and its end lands at once at the end.
 */
import type { InstanceInfo } from '../arm/compute-state.js';
import type { WorldClock } from './clock.js';
import type { HostEffects } from './host-commands.js';
import type { RealShellResult } from './real-shell.js';

export interface Stage {
  readonly stopAtSeconds?: number;
  readonly termAtSeconds?: number;
}

export interface StagedRunHooks {
  /** Runs the script over the host as it was when the run started, to the stage asked. */
  run(stage: Stage): RealShellResult;
  /** The host, while the pod (terminating too) and the VM are there. */
  alive(): InstanceInfo | undefined;
  /** Applies a stage to the host as it is now; `since`: the stage applied before. */
  apply(host: InstanceInfo, result: RealShellResult, since: RealShellResult | undefined): HostEffects;
  /** The script ended: its last stage is applied. */
  ended(host: InstanceInfo, result: RealShellResult, effects: HostEffects): void;
}

export class StagedRun {
  private first: RealShellResult | undefined;
  private startMs = 0;
  private cancel: (() => void) | undefined;
  private done = false;

  constructor(
    private readonly clock: WorldClock,
    private readonly label: string,
    private readonly hooks: StagedRunHooks,
  ) {}

  /** The script starts now: what it does before its first sleep lands at once. */
  start(): void {
    const host = this.hooks.alive();
    if (!host) return;
    this.startMs = this.clock.nowMs();
    const first = this.hooks.run({ stopAtSeconds: 0 });
    if (!first.stopped) {
      // It never slept: it ended at once.
      this.finish(host, first, undefined);
      return;
    }
    this.first = first;
    this.hooks.apply(host, first, undefined);
    this.landAtOffset(this.hooks.run({}));
  }

  /** The kubelet's TERM, now: the script runs again with it, and what its trap did lands. */
  term(): void {
    if (this.done || this.first === undefined) return;
    this.cancel?.();
    const offset = Math.floor((this.clock.nowMs() - this.startMs) / 1000);
    this.landAtOffset(this.hooks.run({ termAtSeconds: offset }));
  }

  /** SIGKILL (grace 0, or the host went down): nothing more lands. */
  kill(): void {
    this.done = true;
    this.cancel?.();
  }

  private landAtOffset(result: RealShellResult): void {
    const delay = Math.max(0, (this.startMs + result.offsetSeconds * 1000 - this.clock.nowMs()) / 1000);
    this.cancel = this.clock.after(delay, this.label, () => {
      if (this.done) return;
      const host = this.hooks.alive();
      if (host) this.finish(host, result, this.first);
    });
  }

  private finish(host: InstanceInfo, result: RealShellResult, since: RealShellResult | undefined): void {
    this.done = true;
    this.hooks.ended(host, result, this.hooks.apply(host, result, since));
  }
}
