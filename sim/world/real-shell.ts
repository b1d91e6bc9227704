/**
 * Runs a host script in a real shell over the node's disk: the OS disk model (os-disk.ts) is written out
 * as a directory tree, Debian's bubblewrap (`bwrap`, https://github.com/containers/bubblewrap) binds it
 * as `/` of a sandbox (no network, own PID/UTS/IPC namespaces, the machine's /usr read-only, a fresh
 * /proc, /dev and /tmp; /run is the host's tmpfs, and its data disks come along: real-shell-disks.ts), the
 * pod's command runs there (`nsenter … -- /bin/sh -c SCRIPT` with the recording stand-ins of
 * host-stand-ins.ts and host-stand-ins-disks.ts in /usr/bin), and the tree is read back: what the script
 * removed, emptied or appended is what the identity model then judges. One run takes milliseconds and is
 * bounded by a timeout; `sleep` is simulated time the caller adds to the run.
 */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { DiskContent } from '../arm/compute-state.js';
import { materialise, readDiskBack } from './disk-tree.js';
import type { CommandOverride, HostModel } from './host-commands.js';
import { HOST_BIN, HOST_SBIN, REQUESTS_DIR, STAND_INS as HOST_STAND_INS } from './host-stand-ins.js';
import { DEVICE_STAND_INS } from './host-stand-ins-disks.js';
import { type HostAfterRun, readHostBack, writeHostOut } from './real-shell-disks.js';

const STAND_INS: Readonly<Record<string, string>> = { ...HOST_STAND_INS, ...DEVICE_STAND_INS };

const DEFAULT_TIMEOUT_MS = 20_000;
const OUTPUT_TAIL_BYTES = 600;
/** What is kept of a run's output (the end): more than any reader of it (error tails, termination messages) takes. */
const OUTPUT_MAX_BYTES = 1024 * 1024;

export const BWRAP_MISSING =
  "the simulator runs host scripts in a real shell inside bubblewrap, and 'bwrap' is not installed on this machine: install Debian's bubblewrap package (apt-get install -y bubblewrap) and run again";

export interface RealShellInput {
  /** The command the container (or Run Command) runs, e.g. `nsenter -t 1 -m -- /bin/sh -c SCRIPT`. */
  readonly argv: readonly string[];
  /** The disk as it is; not changed (the result carries the new files). */
  readonly disk: DiskContent;
  /** The host's name (`hostname` answers it). */
  readonly hostname: string;
  /** Simulated now (`date` answers it). */
  readonly nowMs: number;
  /** The `scrub-leaves` fault: paths a removal leaves in place. */
  readonly rmLeaves?: readonly string[];
  /** The `host-command` fault: commands replaced by one that prints the stderr and exits the code. */
  readonly commandOverrides?: readonly CommandOverride[];
  /** Environment beyond PATH and HOME (a container's own `env`, its HOSTNAME). */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  /**
   * The host beyond its root disk (data disks, mounts, tmpfs, freeze, units): written out for the device
   * stand-ins and read back (real-shell-disks.ts). Without it /run is a fresh tmpfs and no disk is attached.
   */
  readonly host?: HostModel;
  /** A staged run: the sandbox stops where a sleep would pass this simulated offset (the host as it is then). */
  readonly stopAtSeconds?: number;
  /** A staged run: the kubelet's TERM reaches the script's shell at this simulated offset. */
  readonly termAtSeconds?: number;
  /** Keep stdout and stderr apart (Run Command's extension writes each to its own file), in `streams`. */
  readonly separateStreams?: boolean;
}

export interface RealShellResult {
  readonly ok: boolean;
  readonly exitCode: number;
  /** Why it failed: the exit status and the end of what it printed. */
  readonly error?: string;
  /** The files after the run (only when the run could start). */
  readonly files: Record<string, string>;
  readonly imagesRemoved: boolean;
  /** Paths removed or rewritten (not only appended to). */
  readonly changed: string[];
  /** Paths appended to, or created. */
  readonly appended: string[];
  readonly poweredOff: boolean;
  /** Simulated seconds the script slept. */
  readonly sleptSeconds: number;
  /** What the stand-ins were asked, in order. */
  readonly requests: string[];
  /** What the command printed, stdout and stderr interleaved as they were written (a container's log). */
  readonly output: string;
  /** With `separateStreams`: stdout and stderr apart (`output` is then stdout followed by stderr). */
  readonly streams?: { readonly stdout: string; readonly stderr: string };
  /** Where the script's simulated offset ended (whole seconds: its sleeps, background ones included). */
  readonly offsetSeconds: number;
  /** A staged run stopped at `stopAtSeconds` (the script had not ended). */
  readonly stopped: boolean;
  /** The host beyond its root disk after the run (when the input had `host`). */
  readonly host?: HostAfterRun;
}

let bwrapPath: string | null | undefined;

/** The bwrap binary, or null when it is not installed. */
export function findBwrap(): string | null {
  if (bwrapPath !== undefined) return bwrapPath;
  const found = (process.env['PATH'] ?? '/usr/bin:/bin')
    .split(':')
    .concat(['/usr/bin', '/bin'])
    .map((directory) => join(directory, 'bwrap'))
    .find((candidate) => existsSync(candidate));
  bwrapPath = found ?? null;
  return bwrapPath;
}

/** Tests: pretend bwrap is at `path` (null: not installed); undefined looks for it again. */
export function useBwrap(path: string | null | undefined): void {
  bwrapPath = path;
}

let scratch: string | undefined;

/**
 * Where the sandboxes' trees are written: /dev/shm when it is a writable directory (a tmpfs on Linux),
 * else the temporary directory. A run writes a disk's tree out, reads it back and removes it, a dozen
 * times per capture; on a tmpfs that is about a tenth of the time and CPU it takes on a disk-backed /tmp
 * (every directory created and removed there is a journalled metadata write).
 */
function scratchDir(): string {
  if (scratch !== undefined) return scratch;
  scratch = tmpdir();
  try {
    accessSync('/dev/shm', constants.W_OK);
    if (statSync('/dev/shm').isDirectory()) scratch = '/dev/shm';
  } catch {
    // No writable /dev/shm: the temporary directory.
  }
  return scratch;
}

let farm: string | undefined;

/**
 * The sandbox's /usr/bin and /usr/sbin, made once per process: a link per machine binary to where the
 * machine's directories are bound in the sandbox, and the stand-ins as files in their place.
 */
function standInFarm(): string {
  if (farm !== undefined && existsSync(farm)) return farm;
  const root = mkdtempSync(join(scratchDir(), 'vmss-sim-shell-'));
  for (const [directory, host] of [
    ['bin', '/usr/bin'],
    ['sbin', '/usr/sbin'],
  ] as const) {
    const target = join(root, directory);
    mkdirSync(target);
    const inSandbox = directory === 'bin' ? HOST_BIN : HOST_SBIN;
    for (const name of existsSync(host) ? readdirSync(host) : []) {
      if (STAND_INS[name] === undefined) symlinkSync(`${inSandbox}/${name}`, join(target, name));
    }
    for (const [name, text] of Object.entries(STAND_INS)) {
      writeFileSync(join(target, name), text, { mode: 0o755 });
    }
  }
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  farm = root;
  return root;
}

/** Runs `input.argv` in the sandbox over the disk; never throws for what the script does. */
export function runInRealShell(input: RealShellInput): RealShellResult {
  const bwrap = findBwrap();
  const base = { files: { ...input.disk.files }, imagesRemoved: false, changed: [], appended: [] };
  if (bwrap === null) {
    return {
      ...base,
      ok: false,
      exitCode: 127,
      error: BWRAP_MISSING,
      poweredOff: false,
      sleptSeconds: 0,
      offsetSeconds: 0,
      stopped: false,
      requests: [],
      output: '',
    };
  }
  const work = mkdtempSync(join(scratchDir(), 'vmss-sim-host-'));
  try {
    const tree = join(work, 'root');
    const requests = join(work, 'requests');
    mkdirSync(tree);
    mkdirSync(requests);
    writeFileSync(join(requests, 'requests.log'), '');
    materialise(tree, input.disk);
    const runDir = join(work, 'run');
    const hostArgs = input.host === undefined ? undefined : writeHostOut(requests, runDir, input.host);
    const outputPath = join(work, 'output');
    const bins = standInFarm();
    const overrides = overrideBinds(work, input.commandOverrides ?? []);
    const args = [
      '--bind',
      tree,
      '/',
      '--ro-bind',
      '/usr',
      '/usr',
      ...(hostArgs === undefined ? ['--tmpfs', '/run'] : ['--bind', runDir, '/run']),
      '--ro-bind',
      '/usr/bin',
      HOST_BIN,
      '--ro-bind',
      '/usr/sbin',
      HOST_SBIN,
      '--ro-bind',
      join(bins, 'bin'),
      '/usr/bin',
      '--ro-bind',
      join(bins, 'sbin'),
      '/usr/sbin',
      '--bind',
      requests,
      REQUESTS_DIR,
      ...(hostArgs?.args ?? []),
      ...overrides,
      '--symlink',
      'usr/bin',
      '/bin',
      '--symlink',
      'usr/sbin',
      '/sbin',
      ...libraryLinks(),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      '--unshare-all',
      // The mount stand-in binds a data disk's tree in the sandbox's own mount namespace (root only).
      ...(hostArgs !== undefined && process.getuid?.() === 0 ? ['--cap-add', 'CAP_SYS_ADMIN'] : []),
      '--hostname',
      input.hostname,
      '--die-with-parent',
      '--clearenv',
      '--setenv',
      'PATH',
      '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--setenv',
      'HOME',
      '/root',
      ...Object.entries(input.env ?? {}).flatMap(([name, value]) => ['--setenv', name, value]),
      ...(input.stopAtSeconds === undefined
        ? []
        : ['--setenv', 'SIMULATED_STOP_AT', String(input.stopAtSeconds)]),
      ...(input.termAtSeconds === undefined
        ? []
        : ['--setenv', 'SIMULATED_TERM_AT', String(input.termAtSeconds)]),
      '--setenv',
      'SIMULATED_EPOCH',
      String(Math.floor(input.nowMs / 1000)),
      '--chdir',
      '/',
      '--',
      ...input.argv,
    ];
    // One file for stdout and stderr: the order the lines were written in is kept, as in a container log.
    const outputFd = openSync(outputPath, 'w');
    const errorPath = join(work, 'stderr');
    const errorFd = input.separateStreams === true ? openSync(errorPath, 'w') : outputFd;
    let run: ReturnType<typeof spawnSync>;
    try {
      run = spawnSync(bwrap, args, {
        stdio: ['ignore', outputFd, errorFd],
        timeout: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      });
    } finally {
      closeSync(outputFd);
      if (errorFd !== outputFd) closeSync(errorFd);
    }
    const log = readFileSync(join(requests, 'requests.log'), 'utf8')
      .split('\n')
      .filter((line) => line.length > 0);
    const poweredOff = log.some((line) => line.startsWith('power-off '));
    const stopped = log.some((line) => line.startsWith('stop '));
    const offsetText = existsSync(join(requests, 'offset'))
      ? readFileSync(join(requests, 'offset'), 'utf8')
      : '';
    const diff = readDiskBack(tree, input.disk, input.rmLeaves ?? []);
    const imagesRemoved = diff.imagesRemoved;
    const exitCode = run.status ?? (run.signal === null ? 1 : 128);
    const timedOut = run.error !== undefined && (run.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
    const ok = poweredOff || (stopped && !timedOut) || (exitCode === 0 && !timedOut);
    const streams =
      input.separateStreams === true
        ? { stdout: readTail(outputPath, OUTPUT_MAX_BYTES), stderr: readTail(errorPath, OUTPUT_MAX_BYTES) }
        : undefined;
    const output =
      streams === undefined ? readTail(outputPath, OUTPUT_MAX_BYTES) : streams.stdout + streams.stderr;
    const tail = Buffer.from(output.trim()).subarray(-OUTPUT_TAIL_BYTES).toString('utf8');
    const error = ok
      ? undefined
      : timedOut
        ? `the script did not end within ${(input.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000} s of wall time`
        : `exit ${exitCode}${tail === '' ? '' : `: ${tail}`}`;
    return {
      ok,
      exitCode: poweredOff || stopped ? 0 : exitCode,
      ...(error === undefined ? {} : { error }),
      files: diff.files,
      imagesRemoved,
      changed: diff.changed,
      appended: diff.appended,
      poweredOff,
      sleptSeconds: log
        .filter((line) => line.startsWith('sleep '))
        .reduce((sum, line) => sum + sleepSeconds(line), 0),
      offsetSeconds: Number(offsetText.trim()) || 0,
      stopped,
      requests: log,
      output,
      ...(streams === undefined ? {} : { streams }),
      ...(input.host === undefined ? {} : { host: readHostBack(requests, runDir, input.host) }),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The `host-command` fault: a script per command, bound over `/usr/bin/<command>` (`/bin` links there). */
function overrideBinds(work: string, overrides: readonly CommandOverride[]): string[] {
  if (overrides.length === 0) return [];
  const directory = join(work, 'overrides');
  mkdirSync(directory);
  return overrides.flatMap((override) => {
    if (!/^[A-Za-z0-9_.+-]+$/.test(override.command)) return [];
    const file = join(directory, override.command);
    const printed = override.stderr === '' ? '' : `printf '%s\\n' ${shellQuoted(override.stderr)} >&2\n`;
    writeFileSync(file, `#!/bin/sh\n${printed}exit ${override.exitCode}\n`, { mode: 0o755 });
    // A machine binary is a link in the sandbox's /usr/bin to the machine's own directory: bound there.
    const target =
      STAND_INS[override.command] === undefined && existsSync(join('/usr/bin', override.command))
        ? `${HOST_BIN}/${override.command}`
        : `/usr/bin/${override.command}`;
    return ['--ro-bind', file, target];
  });
}

function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}

/** The last `max` bytes of a file. */
function readTail(path: string, max: number): string {
  const size = statSync(path).size;
  if (size <= max) return readFileSync(path, 'utf8');
  const buffer = Buffer.alloc(max);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, max, size - max);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** /lib, /lib64 … as the machine has them (links into /usr on a merged-/usr system, else bound). */
function libraryLinks(): string[] {
  const args: string[] = [];
  for (const name of ['lib', 'lib64', 'lib32', 'libx32']) {
    const path = `/${name}`;
    if (!existsSync(path)) continue;
    if (lstatSync(path).isSymbolicLink()) args.push('--symlink', `usr/${name}`, path);
    else args.push('--ro-bind', path, path);
  }
  return args;
}

function sleepSeconds(line: string): number {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
  return line
    .split(/\s+/)
    .slice(1)
    .reduce((sum, word) => {
      const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(word);
      return match?.[1] === undefined ? sum : sum + Number(match[1]) * (units[match[2] || 's'] ?? 1);
    }, 0);
}
