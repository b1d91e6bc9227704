// `npm run test:unit`: every compiled test file, in two tiers, as many processes at a time as fill the CPUs.
//
// - The fast files (tests/test-files.mjs: no simulator, Azurite, browser or child process) run in ONE
//   process: loading the SDKs once instead of once per file is most of their time.
// - The short files of the simulator, e2e, chaos, infra, bench… folders (last known time ≤ 30 s) run in
//   groups of about 75 s, one process each (GROUPED_FOLDERS): a process's start costs more CPU than most
//   of them spend on their tests. Each stops what it starts and leaves nothing in the process.
// - Every other file runs in a process of its own, as `node --test` runs it, the longest first: the order
//   comes from the checked-in times of the last full run (tests/test-times.json, `npm run test:times`
//   updates it); a file without a time (new) starts first.
// - As many processes run at once as keep the CPUs busy and no more: one per CPU always, and up to three
//   more while the machine's CPUs are not all in use (Linux /proc/stat, read every second or two): the
//   real-engine files and the crash files spend most of their time waiting on an engine's queues or on
//   processes they kill and restart, and their waits are filled by files that compute. Where /proc/stat
//   is missing, each job's checked-in share of a CPU (CPU seconds over wall seconds) decides instead.
//   TEST_CONCURRENCY=<n> runs exactly n at a time.
//
// The processes' temporary files (simulator output, runner state dirs with their fsyncs, the real shell's
// sandbox trees) go to a directory of their own on /dev/shm when the machine has it writable and TMPDIR is
// not set: on a tmpfs they cost a fraction of the CPU and time they take on a disk-backed /tmp. It is
// removed at the end. The processes (and the children they start: crash runners, the CLI) share a V8
// compile cache there (NODE_COMPILE_CACHE, unless it is set or disabled): each loads the same SDKs, and a
// cached compilation cuts the CPU of loading them.
//
// With --checks (`npm test`), the checks that follow the build (lint, format check, dependency rules: the
// package.json scripts CHECKS names) run as jobs of the same schedule, first, rather than one after the other
// before it: each uses about one CPU for a minute or two, and the test files fill the other. A failed check
// fails the run as a failed test does.
//
// Each process's TAP stream is printed whole when the process ends (so that streams do not interleave),
// then the time table (the 15 slowest files and the total), the test counts per tier and, last, every
// failed test with its file, line and error (tests/failure-summary.mjs). The measured times are written
// to dist/test-times.json for the budget check (tests/check-budget.mjs) and `npm run test:times`.
// Exits non-zero when a test fails or a process ends badly.
//
//   node tests/run-tiers.mjs            run every test file
//   node tests/run-tiers.mjs --checks   and, as jobs beside them, the checks that need only the build
//                                      (CHECKS: lint, format, dependency rules): `npm test` runs this
//   node tests/run-tiers.mjs --list     print the jobs in their start order and exit
//   node tests/run-tiers.mjs chaos/ e2e/refresh   only the files whose key starts so (and no fast tier
//                                      unless FAST_KEY's `fast` is given)
//   node tests/run-tiers.mjs =e2e/canary          only the file whose key is exactly that
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { allTestFiles, fastTestFiles, keyOf, ROOT } from './test-files.mjs';

/** A fixed number of processes at a time (TEST_CONCURRENCY), or none: as many as the CPUs keep busy. */
const FIXED =
  process.env['TEST_CONCURRENCY'] === undefined ? undefined : Number(process.env['TEST_CONCURRENCY']);
const CPUS = availableParallelism();
/** The most processes at a time when the machine's idle CPUs decide. */
const MOST = CPUS + 3;
/**
 * One more process starts while the machine's CPUs in use stay at least this far below all of them over
 * the last reading (one CPU's share), and no sooner than START_GAP_MS after the last start (a new process
 * needs a moment before its use shows).
 */
const IDLE_TO_ADD = 0.6;
const START_GAP_MS = 3000;
const METER_MS = 1500;
/** How far the running shares may go past the CPUs (a share is an average; a job's is never exact). */
const SLACK = 0.2;
const FAST_KEY = 'fast tier';
/** The package.json scripts `--checks` runs as jobs (`npm run check` runs them after the build, one by one). */
const CHECKS = ['lint', 'format:check', 'depcruise'];
const TIMES_FILE = join(ROOT, 'tests', 'test-times.json');
const MEASURED_FILE = join(ROOT, 'dist', 'test-times.json');
const WORK = join(ROOT, 'dist', 'test-run');
const SLOWEST = 15;

/** The checked-in file: wall seconds per file key (and FAST_KEY), CPU seconds per key, or none. */
function knownFile() {
  if (!existsSync(TIMES_FILE)) return {};
  return JSON.parse(readFileSync(TIMES_FILE, 'utf8'));
}

/** The checked-in wall seconds per file key (and FAST_KEY), or none. */
function knownTimes() {
  return knownFile().seconds ?? {};
}

/** A job's share of one CPU while it runs (its CPU seconds over its wall seconds), 1 when unknown. */
function cpuShares() {
  const known = knownFile();
  const shares = {};
  for (const [key, wall] of Object.entries(known.seconds ?? {})) {
    const cpu = known.cpuSeconds?.[key];
    if (typeof cpu === 'number' && wall > 0) shares[key] = Math.min(1, Math.max(0.1, cpu / wall));
  }
  return shares;
}

/**
 * Folders whose process-tier files may share a process with other files of the suite (a group): they start
 * simulators, Azurite or children of their own and stop them, and leave no state behind in the process
 * (the CLI's files set `process.exitCode` and exit; the runbook's runs CLI children of its own).
 */
const GROUPED_FOLDERS = new Set([
  'bench',
  'chaos',
  'e2e',
  'explore',
  'functions',
  'infra',
  'security',
  'shards',
  'shared',
  'sim',
]);
/** A file joins a group when its last known time is at most this (seconds); a longer one has its own process. */
const GROUP_FILE_SECONDS = 30;
/** A group takes files (by key, so that a folder's files stay together) until their known times reach this. */
const GROUP_SECONDS = 75;

/** A file that runs in a group rather than in a process of its own: short, known and in a grouped folder. */
function groupable(key, times) {
  const seconds = times[key];
  return GROUPED_FOLDERS.has(key.split('/')[0]) && seconds !== undefined && seconds <= GROUP_FILE_SECONDS;
}

/**
 * The grouped files in groups of about GROUP_SECONDS each, in key order: one process per group instead of
 * one per file (a process's start — Node, the SDKs, the test runner's own child — costs one to two CPU
 * seconds, and most of these files run for less than that again). A group's key is its first file's.
 */
function groupsOf(files, times) {
  const groups = [];
  let current;
  for (const file of [...files].sort((a, b) => keyOf(a).localeCompare(keyOf(b)))) {
    const seconds = times[keyOf(file)] ?? 0;
    if (current === undefined || current.seconds + seconds > GROUP_SECONDS) {
      current = { key: `group/${keyOf(file)}`, tier: 'group', files: [], seconds: 0 };
      groups.push(current);
    }
    current.files.push(file);
    current.seconds += seconds;
  }
  return groups;
}

/** The jobs in their start order: the longest known first, the unknown before them. */
function jobs() {
  const fast = new Set(fastTestFiles());
  const all = allTestFiles();
  const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const picked = (key) =>
    only.length === 0 ||
    only.some((prefix) => (prefix.startsWith('=') ? key === prefix.slice(1) : key.startsWith(prefix)));
  const times = knownTimes();
  const others = all.filter((file) => !fast.has(file) && picked(keyOf(file)));
  const grouped = new Set(others.filter((file) => groupable(keyOf(file), times)));
  const list = [
    ...(only.length === 0 || only.includes('fast')
      ? [{ key: FAST_KEY, tier: 'fast', files: all.filter((file) => fast.has(file)) }]
      : []),
    ...others
      .filter((file) => !grouped.has(file))
      .map((file) => ({ key: keyOf(file), tier: 'process', files: [file] })),
    ...groupsOf(grouped, times),
  ];
  const weight = (job) => times[job.key] ?? job.seconds ?? Number.POSITIVE_INFINITY;
  const checks = process.argv.includes('--checks')
    ? CHECKS.map((script) => ({ key: `check/${script}`, tier: 'check', files: [], script }))
    : [];
  return [...checks, ...list.sort((a, b) => weight(b) - weight(a) || a.key.localeCompare(b.key))];
}

const running = new Set();

/** A temporary directory for the test processes on /dev/shm, or none (they use TMPDIR or /tmp). */
function scratchDir() {
  if (process.env['TMPDIR'] !== undefined && process.env['TMPDIR'] !== '') return undefined;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return mkdtempSync('/dev/shm/vmssp-tests-');
  } catch {
    return undefined;
  }
}
let scratch;

/** The test processes' environment: TMPDIR and the shared compile cache in the scratch directory. */
function childEnv() {
  if (scratch === undefined) return process.env;
  const cache =
    process.env['NODE_COMPILE_CACHE'] === undefined && process.env['NODE_DISABLE_COMPILE_CACHE'] === undefined
      ? { NODE_COMPILE_CACHE: join(scratch, 'compile-cache') }
      : {};
  return { ...process.env, TMPDIR: scratch, ...cache };
}

/**
 * CPU seconds of the processes this one has waited for (Linux /proc: cutime + cstime). Read when a
 * job's process has been reaped, its difference from the previous reading is that job's CPU time with
 * its own children: on a machine shared with other work, a better measure of a file's cost than wall time.
 */
function childCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}
let cpuRead = childCpuSeconds();

function runJob(job, index, startedAt) {
  const base = join(WORK, String(index));
  const summary = `${base}.summary.txt`;
  const tier = `${base}.tier.json`;
  const args = [
    '--test',
    ...(job.tier === 'process' ? [] : ['--experimental-test-isolation=none']),
    '--test-timeout=2700000',
    '--test-reporter=tap',
    '--test-reporter-destination=stdout',
    '--test-reporter=./tests/failure-summary.mjs',
    `--test-reporter-destination=${summary}`,
    '--test-reporter=./tests/tier-reporter.mjs',
    `--test-reporter-destination=${tier}`,
    ...job.files.map((file) => relative(ROOT, file)),
  ];
  const started = performance.now();
  // A check is its package.json script, run by the npm that runs this (npm_execpath) or the one on PATH.
  const [command, commandArgs] =
    job.tier === 'check'
      ? process.env['npm_execpath'] === undefined
        ? ['npm', ['run', '--silent', job.script]]
        : [process.execPath, [process.env['npm_execpath'], 'run', '--silent', job.script]]
      : [process.execPath, args];
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv(),
    });
    running.add(child);
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('close', (code, signal) => {
      running.delete(child);
      const seconds = (performance.now() - started) / 1000;
      const cpuNow = childCpuSeconds();
      const cpu = cpuNow - cpuRead;
      cpuRead = cpuNow;
      const what =
        job.tier === 'check'
          ? `npm run ${job.script}`
          : job.tier === 'fast'
            ? `${job.files.length} fast files in one process`
            : job.tier === 'group'
              ? `${job.key} (${job.files.length} files in one process)`
              : job.key;
      process.stdout.write(
        `# ---- ${what}: exit ${signal ?? code} in ${seconds.toFixed(1)} s (${cpu.toFixed(1)} s CPU), started at +${startedAt.toFixed(0)} s\n`,
      );
      process.stdout.write(Buffer.concat(out));
      process.stderr.write(Buffer.concat(err));
      const read = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
      const report = read(tier).trim();
      resolve({
        job,
        seconds,
        cpu,
        ok: code === 0,
        exit: signal ?? code,
        summary: read(summary),
        tier: report === '' ? undefined : JSON.parse(report),
      });
    });
  });
}

/**
 * The machine's CPUs in use since the previous call (Linux /proc/stat: every CPU's time that was neither
 * idle nor waiting on I/O; time stolen by the hypervisor counts as used: this machine could not have it),
 * or undefined where /proc/stat cannot be read.
 */
function cpuMeter() {
  const read = () => {
    try {
      const fields = readFileSync('/proc/stat', 'utf8')
        .split('\n', 1)[0]
        .trim()
        .split(/\s+/)
        .slice(1, 9)
        .map(Number);
      if (fields.length < 8 || fields.some((value) => !Number.isFinite(value))) return undefined;
      return { total: fields.reduce((sum, value) => sum + value, 0), idle: fields[3] + fields[4] };
    } catch {
      return undefined;
    }
  };
  let previous = read();
  if (previous === undefined) return undefined;
  return () => {
    const current = read();
    if (current === undefined || previous === undefined) return undefined;
    const total = current.total - previous.total;
    const idle = current.idle - previous.idle;
    previous = current;
    return total > 0 ? (CPUS * (total - idle)) / total : undefined;
  };
}

/**
 * Runs the jobs in their order: a fixed number at a time (TEST_CONCURRENCY), or (the default) one per CPU
 * and more while the machine's CPUs are not all in use; without /proc/stat, the next one as soon as the
 * running jobs' checked-in CPU shares leave room for its own. Always one when nothing runs.
 */
async function runAll(list) {
  const shares = cpuShares();
  const shareOf = (job) => shares[job.key] ?? 1;
  const meter = FIXED === undefined ? cpuMeter() : undefined;
  const results = [];
  const active = new Map();
  let next = 0;
  let load = 0;
  let lastStart = 0;
  let inUse;
  const fits = (job) => {
    if (active.size === 0) return true;
    if (FIXED !== undefined) return active.size < FIXED;
    if (meter === undefined) return active.size < MOST && load + shareOf(job) <= CPUS + SLACK;
    if (active.size < CPUS) return true;
    return (
      active.size < MOST &&
      inUse !== undefined &&
      inUse <= CPUS - IDLE_TO_ADD &&
      performance.now() - lastStart >= START_GAP_MS
    );
  };
  while (next < list.length || active.size > 0) {
    while (next < list.length && fits(list[next])) {
      const index = next;
      const job = list[index];
      next += 1;
      load += shareOf(job);
      lastStart = performance.now();
      // The next reading starts now: what a new process uses shows only after it.
      inUse = undefined;
      meter?.();
      peak = Math.max(peak, active.size + 1);
      active.set(
        index,
        runJob(job, index, (lastStart - started) / 1000).then((result) => ({ index, result })),
      );
    }
    const waitForRoom =
      meter !== undefined && next < list.length && active.size >= CPUS && active.size < MOST;
    const ended = await Promise.race([...active.values(), ...(waitForRoom ? [sleep(METER_MS)] : [])]);
    if (meter !== undefined) inUse = meter();
    if (ended === undefined) continue;
    const { index, result } = ended;
    active.delete(index);
    load -= shareOf(result.job);
    results.push(result);
  }
  return results;
}
/** The most processes that ran at once. */
let peak = 0;

/** Per file key, its wall seconds: a process's own time, or in a shared process (fast, group) its tests' time. */
function fileSeconds(results) {
  const seconds = {};
  for (const result of results) {
    if (result.job.tier === 'process') {
      seconds[result.job.key] = result.seconds;
      continue;
    }
    for (const [file, ms] of Object.entries(result.tier?.files ?? {})) {
      const path = file.startsWith('file:') ? fileURLToPath(file) : file;
      seconds[keyOf(path)] = ms / 1000;
    }
  }
  return seconds;
}

function tierCounts(results) {
  const tiers = {};
  for (const result of results) {
    if (result.job.tier === 'check') continue;
    const row = (tiers[result.job.tier] ??= {
      files: 0,
      processes: 0,
      tests: 0,
      passed: 0,
      failed: 0,
      skipped: 0,
      todo: 0,
      topLevel: 0,
    });
    row.files += result.job.files.length;
    row.processes += 1;
    for (const name of ['tests', 'passed', 'failed', 'skipped', 'todo', 'topLevel'])
      row[name] += result.tier?.counts[name] ?? 0;
  }
  return tiers;
}

function report(results, totalSeconds) {
  const seconds = fileSeconds(results);
  const tiers = tierCounts(results);
  const fast = results.find((result) => result.job.tier === 'fast');
  const lines = [];
  const slowest = Object.entries(seconds)
    .sort((a, b) => b[1] - a[1])
    .slice(0, SLOWEST);
  const cpu = Object.fromEntries(
    results.filter((result) => result.job.tier === 'process').map((result) => [result.job.key, result.cpu]),
  );
  lines.push(`# time table: the ${slowest.length} slowest of ${Object.keys(seconds).length} test files`);
  lines.push('#    wall s   CPU s  file');
  for (const [key, value] of slowest) {
    const used = cpu[key] === undefined ? '-' : cpu[key].toFixed(1);
    lines.push(`#   ${value.toFixed(1).padStart(7)} ${used.padStart(7)}  ${key}`);
  }
  if (fast !== undefined) {
    lines.push(
      `#   (the fast tier's one process: ${fast.seconds.toFixed(1)} s wall, ${fast.cpu.toFixed(1)} s CPU for ${fast.job.files.length} files)`,
    );
  }
  const groups = results.filter((result) => result.job.tier === 'group');
  if (groups.length > 0) {
    const files = groups.reduce((sum, result) => sum + result.job.files.length, 0);
    const wall = groups.reduce((sum, result) => sum + result.seconds, 0);
    const used = groups.reduce((sum, result) => sum + result.cpu, 0);
    lines.push(
      `#   (${files} short files in ${groups.length} shared processes: ${wall.toFixed(1)} s wall, ${used.toFixed(1)} s CPU in all)`,
    );
  }
  const checks = results.filter((result) => result.job.tier === 'check');
  if (checks.length > 0) {
    const each = checks.map(
      (result) => `${result.job.script} ${result.seconds.toFixed(1)} s (${result.cpu.toFixed(1)} s CPU)`,
    );
    lines.push(`#   (the checks beside them: ${each.join(', ')})`);
  }
  const cpuTotal = results.reduce((sum, result) => sum + result.cpu, 0);
  lines.push(
    `# total: ${totalSeconds.toFixed(1)} s wall, ${cpuTotal.toFixed(1)} s CPU, ` +
      (FIXED === undefined
        ? `up to ${peak} processes at a time (one per CPU, more while CPUs idle; ${CPUS} CPUs)`
        : `${FIXED} processes at a time`),
  );
  lines.push('# tests per tier:');
  let sum = { tests: 0, passed: 0, failed: 0, skipped: 0, topLevel: 0 };
  for (const [name, row] of Object.entries(tiers)) {
    lines.push(
      `#   ${name.padEnd(8)} ${row.files} files, ${row.processes} processes: ${row.tests} tests ` +
        `(${row.passed} passed, ${row.failed} failed, ${row.skipped} skipped), ${row.topLevel} top-level`,
    );
    for (const name of Object.keys(sum)) sum[name] += row[name];
  }
  lines.push(
    `#   all      ${sum.tests} tests (${sum.passed} passed, ${sum.failed} failed, ${sum.skipped} skipped), ${sum.topLevel} top-level`,
  );
  return { text: `${lines.join('\n')}\n`, seconds, tiers, total: sum };
}

function failureSummary(results) {
  const failed = results.filter((result) => !result.ok || /test\(s\) failed/.test(result.summary));
  if (failed.length === 0) {
    const passed = results.reduce((n, result) => n + (result.tier?.counts.passed ?? 0), 0);
    return `# failure summary: no test failed (${passed} passed)\n`;
  }
  const lines = ['', `# failure summary: ${failed.length} process(es) failed`];
  for (const result of failed) {
    lines.push(`# ---- ${result.job.key} (exit ${result.exit})`);
    const text = result.summary.trim();
    lines.push(
      result.job.tier === 'check'
        ? `#   npm run ${result.job.script} failed: its output is above`
        : text === ''
          ? '#   the process ended before its tests reported (see its stderr above)'
          : text,
    );
  }
  return `${lines.join('\n')}\n`;
}

const list = jobs();
if (process.argv.includes('--list')) {
  const times = knownTimes();
  for (const job of list) {
    const known = times[job.key] ?? (job.seconds === undefined ? '?' : `~${Math.round(job.seconds)}`);
    const what = job.tier === 'group' ? ` (${job.files.length} files)` : '';
    console.log(`${String(known).padStart(6)} ${job.key}${what}`);
  }
  process.exit(0);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) child.kill('SIGTERM');
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  });
}

const started = performance.now();
rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });
scratch = scratchDir();
const results = await runAll(list);
const totalSeconds = (performance.now() - started) / 1000;
if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
const table = report(results, totalSeconds);
writeFileSync(
  MEASURED_FILE,
  `${JSON.stringify(
    {
      totalSeconds,
      concurrency: FIXED ?? `one per CPU, more while CPUs idle: ${CPUS} CPUs, up to ${peak} processes`,
      jobs: Object.fromEntries(results.map((result) => [result.job.key, result.seconds])),
      cpu: Object.fromEntries(results.map((result) => [result.job.key, result.cpu])),
      files: table.seconds,
      groupFiles: Object.fromEntries(
        results
          .filter((result) => result.job.tier === 'group')
          .flatMap((result) =>
            result.job.files.map((file) => [keyOf(file), table.seconds[keyOf(file)] ?? 0]),
          ),
      ),
      tiers: table.tiers,
    },
    null,
    2,
  )}\n`,
);
process.stdout.write(`\n${table.text}`);
process.stdout.write(failureSummary(results));
process.exit(results.every((result) => result.ok) ? 0 : 1);
