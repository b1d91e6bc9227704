/**
 * The host beyond its root disk, for the real shell (real-shell.ts): the managed data disks attached to
 * it, what is mounted where, the host's tmpfs (`/run`), whether its root is frozen, the transient units
 * scripts started and the system's state. Before a run they are written out beside the root tree — each
 * data disk as a tree of its own plus its filesystem's identity, the rest as small files the device
 * stand-ins (host-stand-ins-disks.ts) read and write — and the host's tmpfs becomes the sandbox's `/run`;
 * a disk mounted before the run is bound at its mount point again. After the run they are read back.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import type { DiskContent, FilesystemIdentity } from '../arm/compute-state.js';
import { materialise, readDiskBack, readTree } from './disk-tree.js';
import type { HostModel, HostUnit } from './host-commands.js';

/** What a run left of the host beyond its root disk. */
export interface HostAfterRun {
  /** Every attached data disk as the run left it; `written`: its files or identifiers changed. */
  readonly disks: readonly {
    readonly lun: number;
    readonly diskId: string;
    readonly content: DiskContent;
    readonly changed: string[];
    readonly appended: string[];
    readonly written: boolean;
  }[];
  /** Mount point → disk id. */
  readonly mounts: Map<string, string>;
  readonly tmpfs: Record<string, string>;
  readonly frozen: boolean;
  readonly units: Map<string, HostUnit>;
  readonly startedUnits: string[];
  readonly stoppedUnits: string[];
}

/** The host's state under the stand-ins' directory (`state`, bound at DEVICES_DIR) and its tmpfs (`run`). */
export function writeHostOut(state: string, run: string, host: HostModel): { args: string[] } {
  writeFileSync(join(state, 'system-state'), `${host.systemState}\n`);
  if (host.root.filesystem) writeFileSync(join(state, 'root-filesystem'), identityText(host.root.filesystem));
  if (host.frozen) writeFileSync(join(state, 'frozen'), '');
  const lunOf = new Map([...host.dataDisks].map(([lun, disk]) => [disk.diskId, lun]));
  const binds: string[] = [];
  const mounts: string[] = [];
  for (const [mountPoint, diskId] of host.mounts) {
    const lun = lunOf.get(diskId);
    if (lun === undefined) continue;
    mounts.push(`${lun} ${mountPoint}\n`);
    binds.push('--bind', join(state, 'disks', `lun${lun}`, 'tree'), mountPoint);
  }
  writeFileSync(join(state, 'mounts'), mounts.join(''));
  mkdirSync(join(state, 'units'));
  for (const [name, unit] of host.units) writeFileSync(join(state, 'units', name), unitText(unit));
  for (const [lun, disk] of host.dataDisks) {
    const directory = join(state, 'disks', `lun${lun}`);
    mkdirSync(join(directory, 'tree'), { recursive: true });
    materialise(join(directory, 'tree'), disk.content);
    if (disk.content.filesystem) {
      writeFileSync(join(directory, 'filesystem'), identityText(disk.content.filesystem));
    }
  }
  mkdirSync(run);
  for (const [path, content] of Object.entries(host.tmpfs)) {
    const target = join(run, path.slice('/run'.length));
    if (!path.startsWith('/run/') || isSandboxRun(path)) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  return { args: binds };
}

/** Reads back what the run left (`host`: the model the run started from). */
export function readHostBack(state: string, run: string, host: HostModel): HostAfterRun {
  const disks = [...host.dataDisks].map(([lun, disk]) => {
    const directory = join(state, 'disks', `lun${lun}`);
    const back = readDiskBack(join(directory, 'tree'), disk.content, host.rmLeaves ?? []);
    const before = disk.content.filesystem;
    const filesystem = before && readIdentity(join(directory, 'filesystem'), before);
    const content: DiskContent = {
      files: back.files,
      images: back.imagesRemoved ? [] : [...disk.content.images],
      ...(filesystem === undefined ? {} : { filesystem }),
    };
    const identityChanged = JSON.stringify(filesystem) !== JSON.stringify(before);
    const written =
      back.changed.length > 0 || back.appended.length > 0 || back.imagesRemoved || identityChanged;
    return { lun, diskId: disk.diskId, content, changed: back.changed, appended: back.appended, written };
  });
  const mounts = new Map<string, string>();
  for (const line of readLines(join(state, 'mounts'))) {
    const [lun = '', mountPoint = ''] = line.split(' ');
    const disk = host.dataDisks.get(Number(lun));
    if (disk && mountPoint !== '') mounts.set(mountPoint, disk.diskId);
  }
  const units = new Map<string, HostUnit>();
  const unitsDirectory = join(state, 'units');
  for (const name of existsSync(unitsDirectory) ? readdirSync(unitsDirectory) : []) {
    const unit = parseUnit(readFileSync(join(unitsDirectory, name), 'utf8'));
    if (unit !== undefined) units.set(name, unit);
  }
  const tmpfs = Object.fromEntries(
    Object.entries(readTree(run))
      .filter(([path]) => !isSandboxRun(`/run${path}`))
      .map(([path, content]) => [`/run${path}`, content]),
  );
  return {
    disks,
    mounts,
    tmpfs,
    frozen: existsSync(join(state, 'frozen')),
    units,
    startedUnits: [...units.keys()].filter((name) => !host.units.has(name)),
    stoppedUnits: [...host.units.keys()].filter((name) => !units.has(name)),
  };
}

/** Paths of the sandbox's /run that are the simulator's, not the host's tmpfs. */
function isSandboxRun(path: string): boolean {
  return ['/run/simulator', '/run/host'].some((own) => path === own || path.startsWith(`${own}/`));
}

function identityText(filesystem: FilesystemIdentity): string {
  return [
    `type=${filesystem.type}`,
    `uuid=${filesystem.uuid}`,
    ...(filesystem.label === '' ? [] : [`label=${filesystem.label}`]),
    `partUuid=${filesystem.partUuid}`,
    `partition=${filesystem.partition}`,
    ...(filesystem.needsRecovery === true ? ['recovery=true'] : []),
    '',
  ].join('\n');
}

function readIdentity(path: string, before: FilesystemIdentity): FilesystemIdentity {
  const values = new Map(
    readLines(path).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const { needsRecovery: _recovery, ...rest } = before;
  return {
    ...rest,
    uuid: values.get('uuid') ?? before.uuid,
    label: values.get('label') ?? '',
    partUuid: values.get('partUuid') ?? before.partUuid,
    ...(values.get('recovery') === 'true' ? { needsRecovery: true } : {}),
  };
}

function unitText(unit: HostUnit): string {
  if (unit.kind === 'timer') return `kind=timer\nseconds=${unit.seconds}\ncommand=${unit.command}\n`;
  return [
    'kind=service',
    ...(unit.execStop === undefined ? [] : [`execStop=${unit.execStop}`]),
    ...(unit.runtimeMaxSeconds === undefined ? [] : [`runtimeMaxSeconds=${unit.runtimeMaxSeconds}`]),
    '',
  ].join('\n');
}

function parseUnit(text: string): HostUnit | undefined {
  const values = new Map(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  if (values.get('kind') === 'timer') {
    return { kind: 'timer', seconds: Number(values.get('seconds')), command: values.get('command') ?? '' };
  }
  if (values.get('kind') !== 'service') return undefined;
  const execStop = values.get('execStop');
  const runtime = values.get('runtimeMaxSeconds');
  return {
    kind: 'service',
    ...(execStop === undefined ? {} : { execStop }),
    ...(runtime === undefined ? {} : { runtimeMaxSeconds: Number(runtime) }),
  };
}

function readLines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);
}
