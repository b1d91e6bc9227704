/**
 * What a failing canary check pod says is quoted into the canary's reason, and from there into the run
 * result, custom status, the orchestration history, the rejected version's tags and node annotations.
 * The pod is the user's code on a node that can reach the instance metadata service: its output is
 * scrubbed where it is first read. Here the pod prints its environment value and a token it assembles
 * at run time (so the token is in no setting and no activity input): neither may be found anywhere the
 * product keeps or emits text, while the reason still says why the canary failed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { POOL2, startHarness, withCheckPodCanary } from '../e2e/harness.js';

const ENV_VALUE = 'check-config-5b1e94c07a';
// Three parts joined by the pod's shell into `eyJ….eyJ….…`: a JWT's shape, which no input contains.
const TOKEN_HEAD = 'eyJhbGciOiJSUzI1NiJ9';
const TOKEN_BODY = 'eyJzdWIiOiJjaGVjay1wb2QifQ';
const TOKEN_SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS1jaGVjaw';
const TOKEN = `${TOKEN_HEAD}.${TOKEN_BODY}.${TOKEN_SIGNATURE}`;

void describe('a failing canary check pod’s output', { timeout: 300_000 }, () => {
  void it('is scrubbed from the reason, result, status, history, tags and annotations', async () => {
    const harness = await startHarness({
      settings: withCheckPodCanary(
        `H=$(echo ${TOKEN_HEAD}); B=$(echo ${TOKEN_BODY}); ` +
          `echo "config $CHECK_CONFIG token $H.$B.${TOKEN_SIGNATURE}"; test -e /dev/kvm || exit 3`,
        [{ name: 'CHECK_CONFIG', value: ENV_VALUE }],
      ),
    });
    try {
      const instanceId = 'check-pod-output';
      const status = await harness.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL2, trigger: 'test' },
        instanceId,
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'rejected-by-canary', result.reason);
      // Still useful: the reason says the check pod failed and how.
      assert.match(result.reason ?? '', /check pod failed.*exit code 3/, result.reason);
      assert.match(result.reason ?? '', /\[redacted\]/, 'the quoted output shows where text was removed');

      const world = harness.sim.running.world;
      const history = (await harness.runner.getHistory(instanceId)) ?? [];
      const places: [string, unknown][] = [
        ['run result', status.output],
        ['custom status (every one reported)', harness.statuses.map((entry) => entry.customStatus)],
        ['outputs of every status', harness.statuses.map((entry) => entry.output)],
        ['orchestration history', history],
        ['nodes (annotations, labels, taints)', world.cluster('prod').world.store.list('nodes')],
        [
          'image versions (tags)',
          world.compute
            .listScaleSets()
            .flatMap((scaleSet) => Object.values(scaleSet.tags))
            .concat(JSON.stringify(world.compute)),
        ],
      ];
      const versionDefinition = result.version?.id.replace(/\/versions\/[^/]+$/i, '');
      assert.ok(versionDefinition, 'the rejected version is named');
      places.push(['rejected version', world.compute.listImageVersions(versionDefinition)]);
      for (const [place, value] of places) {
        const text = JSON.stringify(value) ?? '';
        assert.ok(!text.includes(TOKEN), `the token the pod printed is not in the ${place}`);
      }
      // The environment value is configuration (never a secret, as documented): the plan echoes it where
      // it echoes the settings (`{"name":"CHECK_CONFIG","value":…}`), and the check pod's manifest and
      // its creation's input carry it. Quoted from what the pod printed, it is nowhere.
      const configEcho = JSON.stringify({ name: 'CHECK_CONFIG', value: ENV_VALUE });
      for (const [place, value] of places) {
        const text = (JSON.stringify(value) ?? '')
          .replaceAll(configEcho, '')
          .replaceAll(JSON.stringify(configEcho).slice(1, -1), '');
        const at = text.indexOf(ENV_VALUE);
        assert.ok(
          at < 0,
          `the environment value the pod printed is not in the ${place}: …${text.slice(Math.max(0, at - 200), at + 60)}`,
        );
      }
    } finally {
      await harness.stop();
    }
  });
});
