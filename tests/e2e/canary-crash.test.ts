/**
 * Crash and resume inside the canary phase: a refresh with the canary gate runs in a child
 * process against a simulator in this test process and is killed with SIGKILL right after each activity
 * of the canary phase (pin, scale-out, observations, the publish request or the give-back); a new runner
 * resumes from the persisted history. A canary that joins must end published, the model on the
 * definition; one that never joins must end rejected, the model byte-for-byte as before, the canary gone.
 * Repeated poll rounds of the same step (observations while the canary boots) are killed at their first
 * and last rounds only: they are the same step with the same state.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { createDurableRunner, createFileStore } from '../../cli/runner/index.js';
import { connectSimulator } from '../../cli/sim-connection.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { durableRegistry } from '../../functions/durable-registry.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { compose } from '../../shared/composition-root.js';
import { VERSION_VERDICT_TAG_KEYS } from '../../shared/domain/version-verdict.js';
import { writeConnectionFile } from '../../sim/connection.js';
import { runChild } from './fixtures/crash-sweep.js';
import { withPromotion } from './fixtures/promotion-env.js';
import { assertIdentityClean, POOL2, sampleScenario } from './harness.js';

interface Case {
  readonly name: string;
  readonly brokenImage: boolean;
  readonly promotion: string;
}

const CASES: readonly Case[] = [
  {
    name: 'a canary that joins',
    brokenImage: false,
    promotion: JSON.stringify({ canary: { soak: '30s', deadline: '15m' } }),
  },
  {
    name: 'a canary that never joins',
    brokenImage: true,
    promotion: JSON.stringify({ canary: { soak: '0s', deadline: '1m' } }),
  },
];

async function withWorld<T>(
  brokenImage: boolean,
  work: (sim: SimulatorSession, dir: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-canary-crash-'));
  const scenario = sampleScenario();
  const pool = scenario.clusters[0]?.scaleSets.find((entry) => entry['name'] === POOL2);
  assert.ok(pool);
  pool['galleryImagesNeverJoin'] = brokenImage;
  const sim = await startSimulatorSession({ scenarioPath: scenario, timeFactor: 200 });
  try {
    await writeConnectionFile(join(dir, 'connection.json'), connectionOf(sim.running));
    return await work(sim, dir);
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function resumeHere(dir: string, instanceId: string, promotion: string) {
  const connected = await connectSimulator(join(dir, 'connection.json'));
  const composition = compose({
    env: withPromotion(connected.env, promotion),
    simulator: connected.endpoints,
    now: () => new Date(connected.clock.now()),
  });
  const runner = createDurableRunner({
    ...durableRegistry(composition.dependencies),
    clock: connected.clock,
    store: createFileStore(join(dir, 'state')),
  });
  return runner.resume(instanceId);
}

function modelOf(sim: SimulatorSession) {
  const compute = sim.running.world.compute;
  const scaleSet = compute.listScaleSets().find((entry) => entry.name === POOL2);
  assert.ok(scaleSet);
  return {
    properties: compute.getScaleSetModel(scaleSet.id),
    tags: scaleSet.tags,
    capacity: scaleSet.capacity,
    instances: compute.listInstances(scaleSet.id).map((instance) => instance.name),
  };
}

function assertEndState(
  sim: SimulatorSession,
  testCase: Case,
  before: ReturnType<typeof modelOf>,
  result: PoolRefreshResult,
  label: string,
): void {
  const compute = sim.running.world.compute;
  const definitionId = (result.version?.id ?? '').replace(/\/versions\/[^/]+$/i, '');
  const versions = compute.listImageVersions(definitionId);
  assert.equal(versions.length, 1, `${label}: exactly one version`);
  const [version] = versions;
  assert.ok(version);
  assert.equal(compute.listSnapshots().length, 0, `${label}: no snapshot left`);
  const after = modelOf(sim);
  assert.deepEqual(
    Object.keys(after.tags).filter((key) => key.startsWith('vmss-prototype.canary-')),
    [],
    `${label}: no canary record left`,
  );
  assertIdentityClean({ sim }, `${label}: the canary built from the new image`);
  if (testCase.brokenImage) {
    assert.equal(result.outcome, 'rejected-by-canary', `${label}: ${result.reason}`);
    assert.deepEqual(after, before, `${label}: the model, tags, capacity and instances as before`);
    assert.equal(version.excludeFromLatest, true, `${label}: hidden`);
    assert.ok(version.tags[VERSION_VERDICT_TAG_KEYS.rejected], `${label}: tagged rejected`);
  } else {
    assert.equal(result.outcome, 'refreshed', `${label}: ${result.reason}`);
    assert.equal(version.excludeFromLatest, false, `${label}: published`);
    // afterPass keep-size: the canary stays and one older node goes in its place (docs/retirement.md).
    assert.equal(after.capacity, before.capacity, `${label}: the pool keeps its size`);
    const scaleSet = compute.listScaleSets().find((entry) => entry.name === POOL2);
    assert.match(String(scaleSet?.imageReference['id']), /\/images\/[^/]+$/i, `${label}: on the definition`);
  }
}

/**
 * Kill points: every activity of the canary phase (from reading the baseline to its last step: the publish
 * request after a pass, the canary record cleared after a rejection), repeated poll rounds at their ends
 * only. What follows (the model phase) is the capture crash test's (crash-resume-<k>.test.ts).
 */
function killPoints(activities: readonly string[]): number[] {
  const start = activities.indexOf('readCanaryBaseline');
  assert.ok(start > 0, `the run has a canary phase: ${activities.join(',')}`);
  const publish = activities.indexOf('requestImageVersionExclusion', start);
  const cleared = activities.indexOf('clearCanaryRecord', start);
  const end = publish !== -1 ? publish : cleared !== -1 ? cleared : activities.length - 2;
  const points: number[] = [];
  for (let index = start; index <= end; index++) {
    const name = activities[index];
    const repeated = activities[index - 1] === name && activities[index + 1] === name;
    const lastTwo = activities[index + 2] !== name;
    if (!repeated || lastTwo) points.push(index);
  }
  // `completed === k` kills right after the k-th result: k = index + 1 of that activity, and k = start
  // kills right before the canary's first result is seen.
  return [start, ...points.map((index) => index + 1)];
}

void describe(
  'crash and resume inside the canary phase',
  { concurrency: false, timeout: 40 * 60_000 },
  () => {
    for (const testCase of CASES) {
      void it(
        `${testCase.name}: every kill point ends in the same state`,
        { timeout: 20 * 60_000 },
        async (t) => {
          const activities = await withWorld(testCase.brokenImage, async (sim, dir) => {
            const before = modelOf(sim);
            const outcome = await runChild([
              join(dir, 'connection.json'),
              join(dir, 'state'),
              'canary-0',
              '0',
              POOL2,
              testCase.promotion,
            ]);
            assert.equal(outcome.result?.runtimeStatus, 'Completed', outcome.stderr);
            assertEndState(sim, testCase, before, outcome.result.output, 'uninterrupted');
            return outcome.result.activities;
          });
          const points = killPoints(activities);
          let survived = 0;
          let notReached = 0;
          for (const killAfter of points) {
            await withWorld(testCase.brokenImage, async (sim, dir) => {
              const before = modelOf(sim);
              const id = `canary-${killAfter}`;
              const killed = await runChild([
                join(dir, 'connection.json'),
                join(dir, 'state'),
                id,
                String(killAfter),
                POOL2,
                testCase.promotion,
              ]);
              if (
                killed.signal === null &&
                killed.result !== undefined &&
                killed.result.completed < killAfter
              ) {
                // Poll rounds follow the scaled clock: this run needed fewer activities; it must still end right.
                assert.equal(killed.result.runtimeStatus, 'Completed', killed.stderr);
                assertEndState(
                  sim,
                  testCase,
                  before,
                  killed.result.output,
                  `kill point ${killAfter} (not reached)`,
                );
                notReached += 1;
                return;
              }
              assert.equal(
                killed.signal,
                'SIGKILL',
                `kill point ${killAfter}: the runner died (${killed.stderr})`,
              );
              const resumed = await resumeHere(dir, id, testCase.promotion);
              assert.equal(
                resumed.runtimeStatus,
                'Completed',
                `kill point ${killAfter}: ${JSON.stringify(resumed.failure)}`,
              );
              assertEndState(
                sim,
                testCase,
                before,
                resumed.output as PoolRefreshResult,
                `kill point ${killAfter}`,
              );
              survived += 1;
            });
          }
          t.diagnostic(
            `${testCase.name}: ${points.length} kill points in and after the canary phase (${activities.length} activities), ` +
              `${survived} survived, ${notReached} not reached`,
          );
          assert.equal(survived + notReached, points.length);
          assert.ok(notReached <= 5, `only the last boundaries may go unreached (${notReached})`);
        },
      );
    }
  },
);
