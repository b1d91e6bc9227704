// The function app against the simulator through the documented settings only (docs/local-host.md): the
// process environment is what `func start` makes of the file `npm run sim -- --function-app-settings`
// writes, and the worker's own composition (workerComposition, through the HTTP API's dependencies)
// answers a plan request from the simulator's ARM and cluster. Nothing but app settings is passed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { SAMPLE_SCENARIO } from '../../cli/session.js';
import type { SimulatorSession } from '../../cli/sim-session.js';
import { connectionOf, startSimulatorSession } from '../../cli/sim-session.js';
import { handlePlanRequest } from '../../functions/triggers/refresh-api.http.js';
import { workerTriggerDependencies } from '../../functions/triggers/trigger-dependencies.js';
import { functionAppSettingsFor } from '../../sim/function-app-settings.js';
import { POOL1, POOL2 } from '../e2e/harness.js';
import { recordingContext, request } from './triggers/fixtures.js';

let sim: SimulatorSession;
let values: Readonly<Record<string, string>>;

before(async () => {
  sim = await startSimulatorSession({ scenarioPath: SAMPLE_SCENARIO });
  values = functionAppSettingsFor(connectionOf(sim.running)).Values;
  // Core Tools passes local.settings.json's Values to the worker as its environment; it also sets
  // WEBSITE_HOSTNAME to localhost:<port>, which the seam accepts.
  Object.assign(process.env, values, { WEBSITE_HOSTNAME: 'localhost:7071' });
});

after(async () => {
  for (const key of [...Object.keys(values), 'WEBSITE_HOSTNAME']) Reflect.deleteProperty(process.env, key);
  await sim.stop();
});

void describe('the function app on the simulator seam', () => {
  void it('plans a cluster through GET /api/clusters/{cluster}/plan with the worker composition', async () => {
    const cluster = sim.running.clusters[0]?.name ?? '';
    const logs: { level: string; args: unknown[] }[] = [];
    const response = await handlePlanRequest(
      request({
        method: 'GET',
        url: `http://localhost:7071/api/clusters/${cluster}/plan`,
        params: { cluster },
      }),
      recordingContext(logs),
      workerTriggerDependencies(),
    );

    const text = await response.text();
    assert.equal(response.status, 200, JSON.stringify({ text, logs }));
    const body = JSON.parse(text) as { cluster: string; pools: { scaleSet: string; decision: unknown }[] };
    assert.equal(body.cluster, cluster);
    const scaleSets = body.pools.map((pool) => pool.scaleSet);
    for (const pool of [POOL1, POOL2])
      assert.ok(scaleSets.includes(pool), `${pool} in ${scaleSets.join(', ')}`);
    // The simulator's token stays out of what the API answers and logs.
    const token = values['VMSSP_SIMULATOR_ARM_TOKEN'] ?? '';
    assert.ok(token.length > 0);
    assert.ok(!JSON.stringify({ text, logs }).includes(token));
  });
});
