/**
 * docs/runbook.md cannot rot: its commands run, in the page's order, against one simulated sample cluster
 * (manual clock) in which this test stages each bad day first (a run that stops moving, a canary that
 * never joins, a second version to roll back, a refresh killed holding its donor, ARM answering 503), and
 * every excerpt the page shows under a command must be in what that command printed. `<…>` in an excerpt
 * stands for what changes from run to run (versions, times, ports). VMSSP_RUNBOOK_TRANSCRIPT=<file>
 * writes every command and its whole output there.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { startSimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, writeConnectionFile } from '../../sim/connection.js';
import { CLI_ENTRY as CLI } from '../builders/cli-entry.js';
import { nodeOf, POOL1, POOL2, sampleScenario } from '../e2e/harness.js';
import { readRepoFile, ROOT } from './docs-files.js';

const TRANSCRIPT = process.env['VMSSP_RUNBOOK_TRANSCRIPT'];

interface Step {
  readonly command: string;
  /** The excerpt the page shows under the command (empty when it shows none). */
  readonly excerpt: string;
}

interface Scene {
  readonly name: string;
  readonly steps: Step[];
}

/** The page's scenes (`<!-- scene: name -->`), each with its `sh` commands and the `text` excerpt under each. */
export function scenesOf(page: string): Scene[] {
  const scenes: Scene[] = [];
  const blocks = /<!-- scene: ([\w-]+) -->|```(sh|text)\n([\s\S]*?)```/g;
  for (const match of page.matchAll(blocks)) {
    if (match[1] !== undefined) {
      scenes.push({ name: match[1], steps: [] });
      continue;
    }
    const scene = scenes.at(-1);
    if (scene === undefined) continue;
    const body = match[3] ?? '';
    if (match[2] === 'sh') {
      for (const line of body.split('\n')) {
        const command = line.replace(/\s+#.*$/, '').trim();
        if (/^(?:vmss-prototype|kubectl) /.test(command)) scene.steps.push({ command, excerpt: '' });
      }
    } else {
      const last = scene.steps.pop();
      assert.ok(last, `an excerpt with no command before it in scene ${scene.name}`);
      scene.steps.push({ ...last, excerpt: body });
    }
  }
  return scenes;
}

/** Whitespace runs as one space: a table's column widths follow the terminal, not the page. */
function flat(text: string): string {
  return text.replaceAll(/\s+/g, ' ').trim();
}

/** Each line of the excerpt as a pattern: `<…>` any text, `…` any text too. */
function linePatterns(excerpt: string): RegExp[] {
  return excerpt
    .split('\n')
    .map((line) => flat(line))
    .filter((line) => line !== '')
    .map(
      (line) =>
        new RegExp(
          line
            .split(/<[^>]*>|…/)
            .map((part) => part.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll(' ', '\\s*'))
            .join('.*?'),
        ),
    );
}

interface Ran {
  readonly code: number | null;
  readonly output: string;
}

interface World {
  readonly connection: string;
  readonly stateDir: string;
  readonly kubeconfig: string;
}

function run(world: World, command: string, input?: string): Promise<Ran> {
  const words = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((word) => word[1] ?? word[2] ?? '');
  const [program, ...args] = words;
  const child =
    program === 'kubectl'
      ? spawn('kubectl', ['--kubeconfig', world.kubeconfig, '--context', 'sim-admin', ...args], {
          stdio: ['pipe', 'pipe', 'pipe'],
        })
      : spawn(
          process.execPath,
          [CLI, ...args, `--sim-connect=${world.connection}`, `--state-dir=${world.stateDir}`],
          { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, COLUMNS: '120' } },
        );
  return finished(child, input).then(async (ran) => {
    if (TRANSCRIPT !== undefined) {
      await appendFile(TRANSCRIPT, `$ ${command}\n${ran.output}[exit ${String(ran.code)}]\n\n`);
    }
    return ran;
  });
}

function finished(child: ChildProcess, input?: string, stopWhen?: RegExp): Promise<Ran> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    const take = (chunk: Buffer): void => {
      output += chunk.toString();
      if (stopWhen?.test(output) === true) {
        clearTimeout(timer);
        resolve({ code: null, output });
      }
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.stdin?.end(input ?? '');
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const PAGE = readRepoFile('docs/runbook.md');

void describe('docs/runbook.md', { timeout: 30 * 60_000 }, () => {
  const scenes = scenesOf(PAGE);

  void it('has the daily look and the five bad days, each with commands and what they print', () => {
    assert.deepEqual(
      scenes.map((scene) => scene.name),
      ['daily', 'stuck', 'canary', 'bad-version', 'held', 'outage', 'outage-over'],
    );
    for (const scene of scenes) {
      assert.ok(scene.steps.length > 0, scene.name);
      assert.ok(
        scene.steps.some((step) => step.excerpt !== ''),
        `${scene.name} shows what a command prints`,
      );
    }
  });

  void it('names only metrics and attributes docs/metrics.md defines', () => {
    const metrics = readRepoFile('docs/metrics.md');
    const named = [...PAGE.matchAll(/`(vmssp\.[\w.]+)(?:=([\w-]+))?`/g)];
    assert.ok(named.length >= 6, String(named.length));
    for (const [, name = '', value] of named) {
      assert.ok(metrics.includes(`\`${name}\``), name);
      if (value !== undefined) assert.ok(metrics.includes(`\`${value}\``), `${name}=${value}`);
    }
  });

  void it('every command prints what the page shows, on the simulator', async () => {
    const scenario = sampleScenario();
    const pool2 = scenario.clusters[0]?.scaleSets.find((entry) => entry['name'] === POOL2);
    assert.ok(pool2);
    pool2['galleryImagesNeverJoin'] = true; // the rejected canary's bad image
    const sim = await startSimulatorSession({ scenarioPath: scenario, clock: 'manual' });
    const dir = await mkdtemp(join(tmpdir(), 'vmssp-runbook-'));
    const stopped: ChildProcess[] = [];
    try {
      const world: World = {
        connection: join(dir, 'connection.json'),
        stateDir: join(dir, 'state'),
        kubeconfig: sim.running.kubeconfigPath,
      };
      await writeConnectionFile(world.connection, connectionOf(sim.running));
      const stage = async (command: string, expect: RegExp, input?: string): Promise<void> => {
        const ran = await run(world, command, input);
        assert.match(ran.output, expect, `staging: ${command}`);
      };

      /** What each scene's bad day needs before the operator's commands run. */
      const stages: Record<string, () => Promise<void>> = {
        daily: async () => {
          await stage(
            `kubectl apply -f ${join(ROOT, 'infra/kubernetes/pool-image-policy.crd.yaml')}`,
            /created/,
          );
          await stage(
            'kubectl wait --for=condition=Established crd/poolimagepolicies.vmss-prototype.io',
            /met/,
          );
          await stage('kubectl apply -f -', /created/, policyOf(POOL1));
          await stage(`vmss-prototype refresh --pool ${POOL1}`, /refreshed/);
        },
        stuck: async () => {
          const child = spawn(
            process.execPath,
            [
              CLI,
              'refresh',
              `--pool=${POOL1}`,
              `--node=${nodeOf(POOL1, 2)}`,
              `--sim-connect=${world.connection}`,
              `--state-dir=${world.stateDir}`,
            ],
            { stdio: ['pipe', 'pipe', 'pipe'] },
          );
          const ran = await finished(child, '', /: draining/);
          assert.match(ran.output, /: draining/, 'the run reached its drain');
          child.kill('SIGSTOP'); // a run that stops moving, still alive and holding its lease
          stopped.push(child);
        },
        canary: async () => {
          await stage(`vmss-prototype refresh --pool ${POOL2}`, /rejected-by-canary/);
        },
        'bad-version': async () => {
          sim.running.world.clock.advanceBy(3600);
          await stage(`vmss-prototype refresh --pool ${POOL1} --node ${nodeOf(POOL1, 3)}`, /refreshed/);
        },
        held: async () => {
          const child = spawn(
            process.execPath,
            [
              CLI,
              'refresh',
              `--pool=${POOL2}`,
              `--node=${nodeOf(POOL2, 2)}`,
              `--sim-connect=${world.connection}`,
              `--state-dir=${world.stateDir}`,
            ],
            { stdio: ['pipe', 'pipe', 'pipe'] },
          );
          const ran = await finished(child, '', /: snapshotting/);
          assert.match(ran.output, /: snapshotting/);
          child.kill('SIGKILL'); // a runner that died holding its donor
          await new Promise((resolve) => child.once('close', resolve));
        },
        outage: () => {
          sim.running.faults.add({
            api: 'arm',
            operation: '*',
            status: 503,
            code: 'ServiceUnavailable',
            message: 'The service is temporarily unavailable.',
          });
          return Promise.resolve();
        },
        'outage-over': () => {
          sim.running.faults.clear();
          return Promise.resolve();
        },
      };

      for (const scene of scenes) {
        await stages[scene.name]?.();
        for (const step of scene.steps) {
          const ran = await run(world, step.command);
          for (const pattern of linePatterns(step.excerpt)) {
            assert.match(flat(ran.output), pattern, `${scene.name}: ${step.command}\n${ran.output}`);
          }
        }
        if (scene.name === 'stuck') {
          for (const child of stopped.splice(0)) {
            child.kill('SIGKILL');
            await new Promise((resolve) => child.once('close', resolve));
          }
        }
      }
    } finally {
      for (const child of stopped) child.kill('SIGKILL');
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function policyOf(pool: string): string {
  return JSON.stringify({
    apiVersion: 'vmss-prototype.io/v1alpha1',
    kind: 'PoolImagePolicy',
    metadata: { name: pool },
    spec: { paused: false },
  });
}
