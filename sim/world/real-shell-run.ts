/**
 * A prep pod's or Run Command's script in the real shell (real-shell.ts), as the world carries it out:
 * the pod's command is checked for entering the host (its `nsenter`, wherever the image keeps it, is the
 * stand-in), the script runs over the node's disk, and what it did becomes a commit of the host model
 * (host-runtime.ts) with the effects the records and the power-off read.
 */
import type { DiskContent } from '../arm/compute-state.js';
import { type HostEffects, type HostModel, noEffects } from './host-commands.js';
import { PATHS } from './os-disk.js';
import { type RealShellResult, runInRealShell } from './real-shell.js';

/** The sandbox's argv for a pod's command, or why it cannot reach the host's disk. */
export function podArgv(words: readonly string[]): { argv: string[] } | { refused: string } {
  const [first, ...rest] = words;
  if (first === undefined || !/(^|\/)nsenter$/.test(first)) {
    return {
      refused: `the container command does not enter the host with nsenter (nsenter -t 1 -m … or nsenter -m/proc/1/ns/mnt …): what it runs stays in the container's mount namespace and nothing reaches the host disk: ${words.join(' ')}`,
    };
  }
  // The image's nsenter, wherever it keeps it, is the stand-in (sim/world/host-stand-ins.ts).
  return { argv: ['/usr/bin/nsenter', ...rest] };
}

/** Runs `argv` over the host's root disk. */
export function runOnHost(
  argv: readonly string[],
  model: HostModel,
  nodeName: string,
  nowMs: number,
  stage: {
    readonly stopAtSeconds?: number;
    readonly termAtSeconds?: number;
    readonly separateStreams?: boolean;
  } = {},
): RealShellResult {
  return runInRealShell({
    ...stage,
    argv,
    disk: model.root,
    hostname: hostnameOf(model.root) ?? nodeName,
    nowMs,
    host: model,
    ...(model.rmLeaves === undefined ? {} : { rmLeaves: model.rmLeaves }),
    ...(model.commandOverrides === undefined ? {} : { commandOverrides: model.commandOverrides }),
  });
}

/**
 * Applies what a real-shell run did to `model` (the host as it is now) and says what it did. `since`: a
 * staged run's earlier stage, already applied: units started or stopped are those since that stage.
 */
export function applyRun(model: HostModel, result: RealShellResult, since?: RealShellResult): HostEffects {
  const effects = noEffects();
  for (const path of [...result.changed, ...result.appended]) {
    const content = result.files[path];
    if (content === undefined) delete model.root.files[path];
    else model.root.files[path] = content;
  }
  if (result.imagesRemoved) model.root.images = [];
  effects.changed.push(...result.changed);
  effects.appended.push(...result.appended);
  effects.rootWritten = result.changed.length > 0 || result.appended.length > 0 || result.imagesRemoved;
  effects.poweredOff = result.poweredOff;
  const host = result.host;
  if (host === undefined) return effects;
  for (const disk of host.disks) {
    const attached = model.dataDisks.get(disk.lun);
    if (!disk.written || attached?.diskId !== disk.diskId) continue;
    attached.content = disk.content;
    effects.writtenDisks.add(disk.diskId);
    effects.changed.push(...disk.changed);
    effects.appended.push(...disk.appended);
  }
  model.mounts = new Map(host.mounts);
  model.tmpfs = { ...host.tmpfs };
  effects.froze = !model.frozen && host.frozen;
  effects.thawed = model.frozen && !host.frozen;
  model.frozen = host.frozen;
  const before = since?.host?.units;
  const started =
    before === undefined ? host.startedUnits : [...host.units.keys()].filter((name) => !before.has(name));
  const stopped =
    before === undefined ? host.stoppedUnits : [...before.keys()].filter((name) => !host.units.has(name));
  for (const name of stopped) model.units.delete(name);
  for (const name of started) {
    const unit = host.units.get(name);
    if (unit !== undefined) model.units.set(name, unit);
  }
  effects.startedUnits.push(...started);
  effects.stoppedUnits.push(...stopped);
  return effects;
}

function hostnameOf(disk: DiskContent): string | undefined {
  const name = disk.files[PATHS.hostname]?.trim();
  return name !== undefined && /^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/.test(name) ? name : undefined;
}
