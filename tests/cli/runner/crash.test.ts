import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { createFileStore, historyEventName } from '../../../cli/runner/index.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/crash-child.js', import.meta.url));
const ROOT_INSTANCE = 'refresh-pool-a';
const MAX_CONCURRENT_ACTIVITIES = 2;
const COMPLETED_LINE = 'orchestration completed';

interface ChildRun {
  stopped: boolean;
  signal: NodeJS.Signals | null;
  code: number | null;
  result: { runtimeStatus: string; output: unknown } | undefined;
  stderr: string;
}

/** Runs the fixture; when it reports reaching `stopAt`, kills it with SIGKILL. */
function runChild(mode: 'start' | 'resume', dir: string, stopAt = ''): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [FIXTURE, mode, path.join(dir, 'store'), path.join(dir, 'effects.log'), stopAt],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    let stopped = false;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`running crash fixture (${mode} ${stopAt}): no exit within 60 s; stderr: ${stderr}`));
    }, 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (!stopped && stdout.includes(`STOPPED ${stopAt}\n`)) {
        stopped = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      const result =
        line === undefined ? undefined : (JSON.parse(line.slice('RESULT '.length)) as ChildRun['result']);
      resolve({ stopped, signal, code, result, stderr });
    });
  });
}

async function readLog(dir: string): Promise<string[]> {
  const text = await readFile(path.join(dir, 'effects.log'), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line.length > 0);
}

function count(lines: string[], line: string): number {
  return lines.filter((l) => l === line).length;
}

/** Runs `job` over `items`, at most `limit` at a time (the cores are shared); waits for all before failing. */
async function inBatches<T>(items: T[], limit: number, job: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        await job(item).catch((error: unknown) => void errors.push(error));
      }
    }),
  );
  if (errors.length > 0) throw errors[0];
}

void describe('crash and resume with the file store (SIGKILLed child processes)', () => {
  let root: string;
  let baseline: { output: unknown; effects: string[] };

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'runner-crash-'));
    const dir = path.join(root, 'baseline');
    const run = await runChild('start', dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.result?.runtimeStatus, 'Completed');
    const effects = (await readLog(dir)).filter((line) => line !== COMPLETED_LINE);
    baseline = { output: run.result.output, effects };
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  void it('baseline run performs every activity once (plus one failed capture attempt)', () => {
    assert.deepEqual(baseline.effects, [
      'listNodes "pool-a"',
      'cordonNode "n1"',
      'drainNode "n1"',
      'drainNode "n2"',
      'drainNode "n3"',
      'captureImage "n1"',
      'captureImage "n1"',
      'updateModel "2026.1122.1210"',
      'uncordonNode "n1"',
    ]);
  });

  void it('resumes to the same end state after a SIGKILL at every kill point', async (t) => {
    const activityCount = baseline.effects.length;
    const points = [
      // Killed inside activity k after its side effect, before its completion was persisted.
      ...Array.from({ length: activityCount }, (_, i) => `effect:${i + 1}`),
      // Killed right after the k-th activity completion was persisted.
      ...Array.from({ length: activityCount }, (_, i) => `persisted:${i + 1}`),
      // Killed after the orchestration's completion was persisted.
      'completed',
    ];
    const covered: string[] = [];
    await inBatches(points, 2, async (point) => {
      const dir = path.join(root, point.replace(':', '-'));
      const crashed = await runChild('start', dir, point);
      assert.ok(crashed.stopped, `kill point ${point} was not reached: ${crashed.stderr}`);
      assert.equal(crashed.signal, 'SIGKILL');
      const beforeResume = await readLog(dir);

      const resumed = await runChild('resume', dir);
      assert.equal(resumed.code, 0, `resume after ${point}: ${resumed.stderr}`);
      assert.equal(resumed.result?.runtimeStatus, 'Completed', point);
      assert.deepEqual(resumed.result.output, baseline.output, `output after ${point}`);

      const effects = await readLog(dir);
      const activityEffects = effects.filter((line) => line !== COMPLETED_LINE);
      for (const line of new Set(baseline.effects)) {
        assert.ok(
          count(activityEffects, line) >= count(baseline.effects, line),
          `${line} missing after ${point}`,
        );
      }
      // Only activities in flight at the kill run again.
      assert.ok(
        activityEffects.length <= activityCount + MAX_CONCURRENT_ACTIVITIES,
        `too many re-executions after ${point}: ${activityEffects.join(', ')}`,
      );
      if (point.startsWith('effect:')) {
        const killedIn = beforeResume.at(-1) ?? '';
        assert.ok(
          count(effects, killedIn) > count(beforeResume, killedIn),
          `${killedIn} did not run again after ${point}`,
        );
      }
      if (point === 'completed') {
        assert.deepEqual(effects, beforeResume, 'resuming a completed instance must not run anything');
      } else {
        assert.equal(count(effects, COMPLETED_LINE), 1, `completion reported once after ${point}`);
      }
      const record = await createFileStore(path.join(dir, 'store')).load(ROOT_INSTANCE);
      const completions = (record?.history ?? []).filter(
        (e) => historyEventName(e.EventType) === 'ExecutionCompleted',
      );
      assert.equal(completions.length, 1, `completed exactly once after ${point}`);
      covered.push(point);
    });
    assert.equal(covered.length, points.length);
    assert.equal(covered.length, 2 * activityCount + 1);
    t.diagnostic(`kill points covered: ${covered.length}`);
  });

  void it('survives being killed again after every completion of every resumed process', async (t) => {
    const dir = path.join(root, 'chain');
    let kills = 0;
    let last: ChildRun | undefined;
    for (let round = 0; round < 40; round += 1) {
      last = await runChild(round === 0 ? 'start' : 'resume', dir, 'persisted:1');
      if (!last.stopped) break;
      kills += 1;
    }

    assert.equal(last?.code, 0, last?.stderr);
    assert.equal(last.result?.runtimeStatus, 'Completed');
    assert.deepEqual(last.result.output, baseline.output);
    assert.ok(kills >= baseline.effects.length - 1, `only ${kills} kills`);
    t.diagnostic(`consecutive kills before completion: ${kills}`);
    const effects = await readLog(dir);
    // The last kill may land between persisting the completion and reporting it.
    assert.ok(count(effects, COMPLETED_LINE) <= 1);
    for (const line of new Set(baseline.effects)) assert.ok(effects.includes(line), `${line} missing`);
    const record = await createFileStore(path.join(dir, 'store')).load(ROOT_INSTANCE);
    const completions = (record?.history ?? []).filter(
      (e) => historyEventName(e.EventType) === 'ExecutionCompleted',
    );
    assert.equal(completions.length, 1);
  });
});
