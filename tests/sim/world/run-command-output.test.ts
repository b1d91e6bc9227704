/**
 * What the simulated Run Command reports, as the Linux Run Command extension does
 * (Azure/run-command-extension-linux `main/cmds.go` `enable`): the script's own stdout and stderr, never
 * its exit status, in the real shell and in the modelled one; and the `host-command` fault (a command that
 * fails silently, or warns and succeeds), with the product's prep script reading its exit status line.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { buildPrepScript, prepScriptReport } from '../../../shared/domain/prep-script.js';
import { useBwrap } from '../../../sim/world/real-shell.js';
import { parseScenario } from '../../../sim/world/scenario.js';
import { createWorld, type World } from '../../../sim/world/world.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const POOL = 'k8s-pool1-12345678-vmss';
const NODE = `${POOL}000001`;

function makeWorld(): World {
  const world = createWorld({
    scenario: parseScenario({
      subscriptionId: '3f2b8c1e-4d5a-4b6c-9e7f-0a1b2c3d4e5f',
      location: 'westeurope',
      start: '2026-11-22T12:00:00Z',
      clusters: [{ name: 'prod', resourceGroup: 'rg-k8s', scaleSets: [{ name: POOL, capacity: 2 }] }],
    }),
  });
  world.clock.advanceBy(5);
  return world;
}

function runCommand(world: World, script: string): { stdout: string; stderr: string } {
  const instance = world.cluster().world.instanceOfNode(NODE);
  assert.ok(instance);
  return world.cluster().world.handleRunCommand(instance, script);
}

const PREP = buildPrepScript({ ancestry: 'test', powerOff: false, reportExitStatus: true });

for (const shell of ['real', 'modelled'] as const) {
  void describe(`Run Command output (${shell} shell)`, () => {
    afterEach(() => {
      useBwrap(undefined);
    });
    function start(t: Parameters<typeof skipWithoutBwrap>[0]): World | undefined {
      if (shell === 'real' && skipWithoutBwrap(t)) return undefined;
      if (shell === 'modelled') useBwrap(null);
      return makeWorld();
    }

    void it('reports what the script printed, not "Enable succeeded" and not its exit status', (t) => {
      const world = start(t);
      if (world === undefined) return;

      const output = runCommand(
        world,
        'set -eu\ntrap \'echo "status=$?"\' EXIT\necho hello\nfalse\necho never',
      );

      assert.deepEqual(output, { stdout: 'hello\nstatus=1\n', stderr: '' });
      assert.equal(world.prepRecords().at(-1)?.outcome, 'failed');
      world.stop();
    });

    void it('the prep script prints its exit status last: 0 when it ran through', (t) => {
      const world = start(t);
      if (world === undefined) return;

      const output = runCommand(world, PREP);

      assert.deepEqual(output, { stdout: 'vmss-prototype-prep-exit-status=0\n', stderr: '' });
      assert.deepEqual(prepScriptReport(output.stdout, output.stderr), { kind: 'succeeded' });
      world.stop();
    });

    void it('host-command: a command that exits 1 silently stops the prep script with status 1, no stderr', (t) => {
      const world = start(t);
      if (world === undefined) return;
      world.applyFault({ preset: 'host-command', command: 'sync', exitCode: 1, at: '0s' });
      world.clock.advanceBy(1);

      const output = runCommand(world, PREP);

      assert.deepEqual(output, { stdout: 'vmss-prototype-prep-exit-status=1\n', stderr: '' });
      assert.deepEqual(prepScriptReport(output.stdout, output.stderr), {
        kind: 'failed',
        exitStatus: 1,
        detail: 'it printed nothing',
      });
      world.stop();
    });

    void it('host-command: a warning on stderr with exit 0 is a success', (t) => {
      const world = start(t);
      if (world === undefined) return;
      world.applyFault({
        preset: 'host-command',
        command: 'sync',
        exitCode: 0,
        stderr: 'sync: slow',
        at: '0s',
      });
      world.clock.advanceBy(1);

      const output = runCommand(world, PREP);

      assert.deepEqual(output, { stdout: 'vmss-prototype-prep-exit-status=0\n', stderr: 'sync: slow\n' });
      assert.deepEqual(prepScriptReport(output.stdout, output.stderr), { kind: 'succeeded' });
      world.stop();
    });
  });
}
