/**
 * The commands the simulated host runs (host-shell.ts executes scripts with them), over a model of one
 * host: its OS disk's files, the managed data disks attached to it (by LUN), what is mounted where, whether
 * its root filesystem is frozen, and the systemd units scripts created. A command changes the model and
 * reports what it did (`HostEffects`); the world commits both when a script's segment ends.
 *
 *   rm -rf PATH…, truncate -s 0 FILE…, echo WORDS [>> FILE], mkdir -p DIR, sync, true, set -eux
 *   systemctl poweroff [--force…], poweroff, systemctl stop UNIT.timer
 *   mount [-o nouuid] /dev/disk/azure/scsi1/lun<N>-part<P> DIR, umount DIR
 *   blkid -s UUID|LABEL|PARTUUID|TYPE -o value DEVICE
 *   tune2fs -U UUID [-L LABEL] DEVICE (ext4), xfs_admin -U UUID [-L LABEL] DEVICE (XFS)
 *   sfdisk --part-uuid DISK N UUID, cmp -s FILE FILE
 *   fsfreeze --freeze|-f /, fsfreeze --unfreeze|-u /, findmnt -no UUID|LABEL|PARTUUID /
 *   systemd-run [--quiet] --unit=NAME --on-active=SECONDS COMMAND… (a timer of the host, not the pod's)
 *   systemd-run [--quiet] --unit=NAME --remain-after-exit [-p ExecStop=CMD] [-p RuntimeMaxSec=N] true
 *     (a service whose ExecStop the host runs when it shuts down, or when RuntimeMaxSec ends it)
 *   systemctl is-system-running, [ A = B ], [ A != B ], test …, sh FILE (a script file under /run)
 *
 * A path under a mount point is a path on the mounted disk; a path under /run is on the host's tmpfs
 * (gone at the next boot, never on the disk). What the host model does not have (another partition than
 * the root one, a device of a LUN no disk is attached at) fails like the real tool would.
 */
import type { DiskContent, FilesystemIdentity } from '../arm/compute-state.js';
import { removeTree } from './os-disk.js';

/** One host as a script sees it; commands change it in place (the caller passes copies). */
export interface HostModel {
  root: DiskContent;
  /** Managed data disks attached to the host, by LUN. */
  dataDisks: Map<number, { diskId: string; content: DiskContent }>;
  /** Mount point → disk id. */
  mounts: Map<string, string>;
  frozen: boolean;
  /** systemd units that exist (transient ones from systemd-run), by name. */
  units: Map<string, HostUnit>;
  /** The host's tmpfs (`/run`): path → content. */
  tmpfs: Record<string, string>;
  /** What `systemctl is-system-running` answers: `stopping` while the host shuts down. */
  systemState: 'running' | 'stopping';
  /**
   * The `scrub-leaves` fault: paths (on whichever disk `rm` works on) that `rm -rf` leaves in place while
   * exiting 0, as a scrub whose list misses one file would.
   */
  rmLeaves?: readonly string[];
  /** The `host-command` fault: commands that print `stderr` and exit `exitCode` instead of running. */
  commandOverrides?: readonly CommandOverride[];
}

/** A command the `host-command` fault replaces on every host (by its name, whatever its path). */
export interface CommandOverride {
  readonly command: string;
  readonly exitCode: number;
  readonly stderr: string;
}

/** A transient unit systemd-run started: a timer that runs a command once, or a service with an ExecStop. */
export type HostUnit =
  | { readonly kind: 'timer'; readonly seconds: number; readonly command: string }
  | { readonly kind: 'service'; readonly execStop?: string; readonly runtimeMaxSeconds?: number };

/** What a script's commands did, for the world to carry out and for the records. */
export interface HostEffects {
  /** Files removed or emptied, as paths on the disk they are on. */
  changed: string[];
  appended: string[];
  rootWritten: boolean;
  /** Data disks (ids) whose files or identity changed. */
  writtenDisks: Set<string>;
  froze: boolean;
  thawed: boolean;
  poweredOff: boolean;
  /** Units systemd-run started (the world schedules timers and runtime limits). */
  startedUnits: string[];
  stoppedUnits: string[];
}

export function noEffects(): HostEffects {
  return {
    changed: [],
    appended: [],
    rootWritten: false,
    writtenDisks: new Set(),
    froze: false,
    thawed: false,
    poweredOff: false,
    startedUnits: [],
    stoppedUnits: [],
  };
}

export interface CommandResult {
  status: number;
  output?: string;
  error?: string;
  /** What it printed on stderr and still exited 0 (a warning). */
  warning?: string;
}

const OK: CommandResult = { status: 0 };

/** Commands that do disk work (a segment of a script with any of them takes the host's script time). */
export const WORK_COMMANDS: ReadonlySet<string> = new Set([
  'rm',
  'truncate',
  'echo',
  'mount',
  'umount',
  'tune2fs',
  'xfs_admin',
  'sfdisk',
  'cmp',
  'mkdir',
  'printf',
  'poweroff',
  'systemctl poweroff',
]);

export const SUPPORTED_COMMANDS =
  'rm -rf, truncate -s 0, echo [… >>], printf %s\\n … [> FILE], mkdir -p, sync, true, false, set, systemctl poweroff|stop|is-system-running, poweroff, mount, umount, blkid, findmnt, tune2fs, xfs_admin, sfdisk --part-uuid, cmp -s, [ ], test, fsfreeze, systemd-run, sh FILE, sleep, wait, trap, exit';

const DEVICE = /^\/dev\/disk\/azure\/scsi1\/lun(\d{1,2})(?:-part(\d{1,3}))?$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs one command (already expanded to words); `undefined` when the host does not know it. */
export function runHostCommand(
  words: readonly string[],
  host: HostModel,
  effects: HostEffects,
): CommandResult | undefined {
  const [command = '', ...args] = words;
  const override = host.commandOverrides?.find((entry) => entry.command === command.replace(/^.*\//, ''));
  if (override !== undefined) {
    const printed = override.stderr.replace(/\n$/, '');
    if (override.exitCode === 0) return printed === '' ? OK : { status: 0, warning: `${printed}\n` };
    return { status: override.exitCode, ...(printed === '' ? {} : { error: printed }) };
  }
  switch (command) {
    case 'true':
    case 'sync':
      return args.length === 0 || command === 'true' ? OK : undefined;
    case 'false':
      return { status: 1 };
    case 'set':
      return args.every((arg) => /^[-+][euxo]+$/.test(arg) || arg === 'pipefail') ? OK : undefined;
    case 'rm':
      return remove(args, host, effects);
    case 'truncate':
      return truncate(args, host, effects);
    case 'echo':
      return append(args, host, effects);
    case 'mkdir':
      // The disk tree has no directories of its own: a path exists once a file under it does.
      return args[0] === '-p' && args.length >= 2 && args.slice(1).every((arg) => arg.startsWith('/'))
        ? OK
        : undefined;
    case 'printf':
      return printLines(args, host, effects);
    case 'poweroff':
      return powerOff(args, effects);
    case 'systemctl':
      if (args[0] === 'poweroff') return powerOff(args.slice(1), effects);
      if (args[0] === 'stop' && args.length === 2) return stopUnit(args[1] ?? '', host, effects);
      if (args[0] === 'is-system-running' && args.length === 1) {
        return { status: host.systemState === 'running' ? 0 : 1, output: host.systemState };
      }
      return undefined;
    case '[':
      return args.at(-1) === ']' ? test(args.slice(0, -1)) : undefined;
    case 'test':
      return test(args);
    case 'findmnt':
      return findmnt(args, host);
    case 'mount':
      return mount(args, host);
    case 'umount':
      return args.length === 1 ? unmount(args[0] ?? '', host) : undefined;
    case 'blkid':
      return blkid(args, host);
    case 'tune2fs':
    case 'xfs_admin':
      return setIdentifiers(command, args, host, effects);
    case 'sfdisk':
      return setPartitionUuid(args, host, effects);
    case 'cmp':
      return compare(args, host);
    case 'fsfreeze':
      return freeze(args, host, effects);
    case 'systemd-run':
      return schedule(args, host, effects);
    default:
      return undefined;
  }
}

// ------------------------------------------------------------------------------------------ files

/** Paths on the host's tmpfs, never on a disk. */
export function isTmpfsPath(path: string): boolean {
  return path === '/run' || path.startsWith('/run/');
}

/** The file tree `path` is on (the root, or a disk mounted above it) and the path within it. */
function resolve(path: string, host: HostModel): { tree: DiskContent; path: string; diskId?: string } {
  if (
    isTmpfsPath(path) &&
    ![...host.mounts.keys()].some((mount) => path === mount || path.startsWith(`${mount}/`))
  ) {
    return { tree: { files: host.tmpfs, images: [] }, path, diskId: TMPFS };
  }
  let best: { mountPoint: string; diskId: string } | undefined;
  for (const [mountPoint, diskId] of host.mounts) {
    if (
      (path === mountPoint || path.startsWith(`${mountPoint}/`)) &&
      mountPoint.length > (best?.mountPoint.length ?? 0)
    ) {
      best = { mountPoint, diskId };
    }
  }
  if (best) {
    const disk = [...host.dataDisks.values()].find((candidate) => candidate.diskId === best.diskId);
    if (disk)
      return { tree: disk.content, path: path.slice(best.mountPoint.length) || '/', diskId: disk.diskId };
  }
  return { tree: host.root, path };
}

/** The tmpfs is not a disk: writing to it is not writing to the root filesystem. */
const TMPFS = 'tmpfs';

function written(effects: HostEffects, where: { diskId?: string }): void {
  if (where.diskId === TMPFS) return;
  if (where.diskId === undefined) effects.rootWritten = true;
  else effects.writtenDisks.add(where.diskId);
}

/** `[ A = B ]`, `[ A != B ]`, `[ -e PATH ]` (only what the product's scripts need). */
function test(args: readonly string[]): CommandResult | undefined {
  if (args.length === 3 && (args[1] === '=' || args[1] === '!=')) {
    const equal = args[0] === args[2];
    return { status: equal === (args[1] === '=') ? 0 : 1 };
  }
  return undefined;
}

function findmnt(args: readonly string[], host: HostModel): CommandResult | undefined {
  if (args.length !== 3 || args[0] !== '-no' || args[2] !== '/') return undefined;
  const filesystem = host.root.filesystem;
  if (!filesystem) return { status: 1 };
  const value = { UUID: filesystem.uuid, LABEL: filesystem.label, PARTUUID: filesystem.partUuid }[
    args[1] as 'UUID' | 'LABEL' | 'PARTUUID'
  ] as string | undefined;
  return value === undefined ? undefined : { status: 0, output: value };
}

function remove(args: readonly string[], host: HostModel, effects: HostEffects): CommandResult | undefined {
  const flags = args.filter((arg) => arg.startsWith('-'));
  const paths = args.filter((arg) => !arg.startsWith('-'));
  if (!flags.every((flag) => /^-[rRf]+$/.test(flag)) || paths.length === 0) return undefined;
  if (paths.some((path) => !path.startsWith('/'))) return { status: 1, error: 'paths must be absolute' };
  for (const path of paths) {
    const where = resolve(path, host);
    const removed = removeTree(where.tree, where.path, host.rmLeaves);
    if (removed.length > 0) written(effects, where);
    effects.changed.push(...removed);
  }
  return OK;
}

function truncate(args: readonly string[], host: HostModel, effects: HostEffects): CommandResult | undefined {
  const size = args[0] === '-s' ? args[1] : /^--size=(.*)$/.exec(args[0] ?? '')?.[1];
  const files = args.slice(args[0] === '-s' ? 2 : 1);
  if (size !== '0' || files.length === 0) return undefined;
  for (const file of files) {
    const where = resolve(file, host);
    where.tree.files[where.path] = '';
    written(effects, where);
    effects.changed.push(where.path);
  }
  return OK;
}

function append(args: readonly string[], host: HostModel, effects: HostEffects): CommandResult | undefined {
  const redirect = args.indexOf('>>');
  // Without a redirection echo writes to the script's stdout.
  if (redirect < 0) return { status: 0, output: `${args.join(' ')}\n` };
  const file = args[redirect + 1];
  if (file === undefined || redirect !== args.length - 2) return undefined;
  const where = resolve(file, host);
  where.tree.files[where.path] =
    `${where.tree.files[where.path] ?? ''}${args.slice(0, redirect).join(' ')}\n`;
  written(effects, where);
  effects.appended.push(where.path);
  return OK;
}

/** `printf '%s\n' LINE… [> FILE]`: each line and a newline, to stdout or written over FILE. */
function printLines(
  args: readonly string[],
  host: HostModel,
  effects: HostEffects,
): CommandResult | undefined {
  if (args[0] !== '%s\\n') return undefined;
  const redirect = args.indexOf('>');
  const lines = args.slice(1, redirect < 0 ? undefined : redirect).map((line) => `${line}\n`);
  if (redirect < 0) return { status: 0, output: lines.join('') };
  const file = args[redirect + 1];
  if (file === undefined || redirect !== args.length - 2) return undefined;
  const where = resolve(file, host);
  where.tree.files[where.path] = lines.join('');
  written(effects, where);
  return OK;
}

function powerOff(options: readonly string[], effects: HostEffects): CommandResult | undefined {
  if (
    !options.every((option) => option === '--force' || option === '-f' || option.startsWith('--message='))
  ) {
    return undefined;
  }
  effects.poweredOff = true;
  return OK;
}

function compare(args: readonly string[], host: HostModel): CommandResult | undefined {
  if (args.length !== 3 || args[0] !== '-s') return undefined;
  const [left, right] = [resolve(args[1] ?? '', host), resolve(args[2] ?? '', host)];
  const a = left.tree.files[left.path];
  const b = right.tree.files[right.path];
  if (a === undefined || b === undefined) return { status: 2, error: 'cmp: no such file' };
  return a === b ? OK : { status: 1, error: `cmp: ${args[1] ?? ''} and ${args[2] ?? ''} differ` };
}

// ------------------------------------------------------------------------------------------ block devices

interface Device {
  lun: number;
  partition?: number;
  disk: { diskId: string; content: DiskContent };
}

function device(path: string, host: HostModel): Device | CommandResult {
  const match = DEVICE.exec(path);
  if (!match)
    return {
      status: 2,
      error: `${path}: not a data disk device of the simulated host (/dev/disk/azure/scsi1/lun<N>[-part<P>])`,
    };
  const lun = Number(match[1]);
  const disk = host.dataDisks.get(lun);
  if (!disk) return { status: 2, error: `${path}: No such file or directory (no disk at LUN ${lun})` };
  return { lun, ...(match[2] === undefined ? {} : { partition: Number(match[2]) }), disk };
}

function isResult<T extends object>(value: T | CommandResult): value is CommandResult {
  return 'status' in value;
}

/** The root filesystem of a partition device; only the OS image's root partition has one in the model. */
function filesystemOf(target: Device): FilesystemIdentity | CommandResult {
  const filesystem = target.disk.content.filesystem;
  if (target.partition === undefined || !filesystem || filesystem.partition !== target.partition) {
    return {
      status: 32,
      error: 'wrong fs type, bad option, bad superblock, missing codepage or helper program, or other error',
    };
  }
  return filesystem;
}

function mountPointOf(diskId: string, host: HostModel): string | undefined {
  return [...host.mounts].find(([, mounted]) => mounted === diskId)?.[0];
}

function mount(args: readonly string[], host: HostModel): CommandResult | undefined {
  let options: string[] = [];
  let rest = [...args];
  if (rest[0] === '-o') {
    options = (rest[1] ?? '').split(',');
    rest = rest.slice(2);
  }
  if (rest.length !== 2 || !options.every((option) => ['nouuid', 'rw', 'ro'].includes(option)))
    return undefined;
  const [source = '', target = ''] = rest;
  if (!target.startsWith('/')) return { status: 1, error: `mount: ${target}: not an absolute path` };
  const found = device(source, host);
  if (isResult(found)) return { ...found, error: `mount: ${found.error ?? ''}` };
  const filesystem = filesystemOf(found);
  if (isResult(filesystem)) return { ...filesystem, error: `mount: ${source}: ${filesystem.error ?? ''}` };
  if (host.mounts.has(target)) return { status: 32, error: `mount: ${target}: already mounted` };
  if (mountPointOf(found.disk.diskId, host) !== undefined) {
    return { status: 32, error: `mount: ${source}: already mounted` };
  }
  if (filesystem.type === 'ext4' && options.includes('nouuid')) {
    return {
      status: 32,
      error: `mount: ${target}: wrong fs type, bad option (ext4: unrecognized mount option "nouuid")`,
    };
  }
  const root = host.root.filesystem;
  if (
    filesystem.type === 'xfs' &&
    !options.includes('nouuid') &&
    root?.type === 'xfs' &&
    root.uuid === filesystem.uuid
  ) {
    return {
      status: 32,
      error: `mount: ${target}: wrong fs type (XFS: Filesystem has duplicate UUID ${filesystem.uuid} - can't mount)`,
    };
  }
  // Mounting replays a crash-consistent copy's journal.
  delete filesystem.needsRecovery;
  host.mounts.set(target, found.disk.diskId);
  return OK;
}

function unmount(target: string, host: HostModel): CommandResult {
  if (!host.mounts.delete(target)) return { status: 32, error: `umount: ${target}: not mounted` };
  return OK;
}

function blkid(args: readonly string[], host: HostModel): CommandResult | undefined {
  if (args.length !== 5 || args[0] !== '-s' || args[2] !== '-o' || args[3] !== 'value') return undefined;
  const tag = args[1] ?? '';
  if (!['UUID', 'LABEL', 'PARTUUID', 'TYPE'].includes(tag)) return undefined;
  const found = device(args[4] ?? '', host);
  if (isResult(found)) return found;
  const filesystem = filesystemOf(found);
  if (isResult(filesystem)) return { status: 2 };
  const value = {
    UUID: filesystem.uuid,
    LABEL: filesystem.label,
    PARTUUID: filesystem.partUuid,
    TYPE: filesystem.type,
  }[tag as 'UUID' | 'LABEL' | 'PARTUUID' | 'TYPE'];
  // blkid prints nothing and answers 2 for a tag the device does not have (an empty label).
  return value === '' ? { status: 2 } : { status: 0, output: value };
}

function setIdentifiers(
  tool: 'tune2fs' | 'xfs_admin',
  args: readonly string[],
  host: HostModel,
  effects: HostEffects,
): CommandResult | undefined {
  const rest = [...args];
  const changes: { uuid?: string; label?: string } = {};
  while (rest.length > 1) {
    const flag = rest.shift();
    const value = rest.shift();
    if (value === undefined) return undefined;
    if (flag === '-U') changes.uuid = value;
    else if (flag === '-L') changes.label = value;
    else return undefined;
  }
  if (rest.length !== 1 || (changes.uuid === undefined && changes.label === undefined)) return undefined;
  const found = device(rest[0] ?? '', host);
  if (isResult(found)) return found;
  const filesystem = filesystemOf(found);
  if (isResult(filesystem)) return { status: 1, error: `${tool}: Bad magic number in super-block` };
  const wanted = tool === 'tune2fs' ? 'ext4' : 'xfs';
  if (filesystem.type !== wanted) {
    return {
      status: 1,
      error: `${tool}: ${rest[0] ?? ''}: not an ${wanted} filesystem (Bad magic number in super-block)`,
    };
  }
  if (mountPointOf(found.disk.diskId, host) !== undefined) {
    return { status: 1, error: `${tool}: the UUID may only be changed when the filesystem is unmounted` };
  }
  if (filesystem.needsRecovery === true) {
    return {
      status: 1,
      error: `${tool}: the filesystem's journal needs recovery; mount it once (or run e2fsck/xfs_repair) first`,
    };
  }
  if (changes.uuid !== undefined && !GUID.test(changes.uuid)) {
    return { status: 1, error: `${tool}: Invalid UUID format: ${changes.uuid}` };
  }
  if (changes.label !== undefined && changes.label.length > (tool === 'tune2fs' ? 16 : 12)) {
    return { status: 1, error: `${tool}: label ${changes.label} is too long` };
  }
  if (changes.uuid !== undefined) filesystem.uuid = changes.uuid.toLowerCase();
  if (changes.label !== undefined) filesystem.label = changes.label;
  effects.writtenDisks.add(found.disk.diskId);
  return OK;
}

function setPartitionUuid(
  args: readonly string[],
  host: HostModel,
  effects: HostEffects,
): CommandResult | undefined {
  if (args.length !== 4 || args[0] !== '--part-uuid') return undefined;
  const found = device(args[1] ?? '', host);
  if (isResult(found)) return found;
  if (found.partition !== undefined)
    return { status: 1, error: `sfdisk: ${args[1] ?? ''}: not a whole disk` };
  const filesystem = found.disk.content.filesystem;
  if (!filesystem || String(filesystem.partition) !== args[2]) {
    return { status: 1, error: `sfdisk: ${args[1] ?? ''}: partition ${args[2] ?? ''}: partition not found` };
  }
  const uuid = args[3] ?? '';
  if (!GUID.test(uuid)) return { status: 1, error: `sfdisk: ${uuid}: failed to parse UUID` };
  filesystem.partUuid = uuid.toLowerCase();
  effects.writtenDisks.add(found.disk.diskId);
  return OK;
}

// ------------------------------------------------------------------------------------------ freeze and timers

function freeze(args: readonly string[], host: HostModel, effects: HostEffects): CommandResult | undefined {
  if (args.length !== 2) return undefined;
  const [mode, target] = args;
  if (target !== '/') return { status: 1, error: `fsfreeze: ${target ?? ''}: only / is modelled` };
  if (mode === '--freeze' || mode === '-f') {
    if (host.frozen) return { status: 1, error: 'fsfreeze: /: freeze failed: Device or resource busy' };
    host.frozen = true;
    effects.froze = true;
    return OK;
  }
  if (mode === '--unfreeze' || mode === '-u') {
    if (!host.frozen) return { status: 1, error: 'fsfreeze: /: unfreeze failed: Invalid argument' };
    host.frozen = false;
    effects.thawed = true;
    return OK;
  }
  return undefined;
}

function schedule(args: readonly string[], host: HostModel, effects: HostEffects): CommandResult | undefined {
  const rest = [...args];
  let unit: string | undefined;
  let seconds: number | undefined;
  let remain = false;
  const properties = new Map<string, string>();
  while (rest[0]?.startsWith('-') === true) {
    const option = rest.shift() ?? '';
    if (option === '--quiet') continue;
    if (option === '--remain-after-exit') {
      remain = true;
      continue;
    }
    const property =
      option === '-p' || option === '--property' ? rest.shift() : /^--property=(.*)$/s.exec(option)?.[1];
    if (property !== undefined) {
      const match = /^(ExecStop|RuntimeMaxSec)=(.+)$/s.exec(property);
      if (!match?.[1] || match[2] === undefined) return undefined;
      properties.set(match[1], match[2]);
      continue;
    }
    const unitMatch = /^--unit=([A-Za-z0-9@_.-]+)$/.exec(option);
    const activeMatch = /^--on-active=(\d+)s?$/.exec(option);
    if (unitMatch?.[1]) unit = unitMatch[1];
    else if (activeMatch?.[1]) seconds = Number(activeMatch[1]);
    else return undefined;
  }
  if (unit === undefined || rest.length === 0) return undefined;
  let name: string;
  let started: HostUnit;
  if (seconds !== undefined) {
    if (remain || properties.size > 0) return undefined;
    name = `${unit}.timer`;
    started = { kind: 'timer', seconds, command: rest.join(' ') };
  } else {
    // A service that stays active; only `true` is run as its main process.
    if (!remain || rest.join(' ') !== 'true') return undefined;
    const runtime = properties.get('RuntimeMaxSec');
    if (runtime !== undefined && !/^\d+$/.test(runtime)) return undefined;
    const execStop = properties.get('ExecStop');
    name = `${unit}.service`;
    started = {
      kind: 'service',
      ...(execStop === undefined ? {} : { execStop }),
      ...(runtime === undefined ? {} : { runtimeMaxSeconds: Number(runtime) }),
    };
  }
  if (host.units.has(name)) {
    return { status: 1, error: `Failed to start transient unit: Unit ${name} already exists.` };
  }
  host.units.set(name, started);
  effects.startedUnits.push(name);
  return OK;
}

function stopUnit(unit: string, host: HostModel, effects: HostEffects): CommandResult {
  if (!host.units.delete(unit))
    return { status: 5, error: `Failed to stop ${unit}: Unit ${unit} not loaded.` };
  effects.stoppedUnits.push(unit);
  return OK;
}
