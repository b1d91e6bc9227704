/**
 * Capture mode run-command end to end on the simulator: Azure Run Command (RunShellScript) prepares the
 * donor's disk with the pool's prep script, the VM is powered off through the API, then the same
 * snapshot/start/give-back path; no prep pod and no pod permission at all (the prep pod's Role is left
 * out of the RBAC the simulator enforces). Clones of the image join as themselves (`world.identity()`).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments, stringify } from 'yaml';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { type Harness, nodeOf, POOL2, startHarness } from './harness.js';

const RBAC_DIR = fileURLToPath(new URL('../../../infra/kubernetes', import.meta.url));

/**
 * infra/kubernetes/ without the prep pod's Role and its binding (the documents named
 * vmss-prototype-prep-pod): what a cluster that forbids privileged pods grants.
 */
async function rbacWithoutPrepRole(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-rbac-runcommand-'));
  let removed = 0;
  for (const file of await readdir(RBAC_DIR)) {
    if (!/\.ya?ml$/.test(file)) continue;
    const kept = parseAllDocuments(await readFile(join(RBAC_DIR, file), 'utf8'))
      .map((document) => document.toJS() as { metadata?: { name?: string } } | null)
      .filter((document) => {
        const prep = document?.metadata?.name === 'vmss-prototype-prep-pod';
        if (prep) removed += 1;
        return document !== null && !prep;
      });
    await writeFile(join(dir, file), kept.map((document) => stringify(document)).join('---\n'));
  }
  assert.equal(removed, 2, 'the prep pod Role and RoleBinding');
  return dir;
}

function runCommandSettings(cluster: { capture: Record<string, unknown> }): void {
  cluster.capture = { mode: 'run-command', drainGracePeriod: '5s' };
}

async function refresh(harness: Harness, pool: string, id: string): Promise<PoolRefreshResult> {
  const status = await harness.run(ORCHESTRATION.refreshPool, { cluster: 'prod', pool, trigger: 'test' }, id);
  assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
  return status.output as PoolRefreshResult;
}

void describe('capture mode run-command on the simulator', { concurrency: false }, () => {
  void it('refreshes a pool with Run Command and no prep pod; a clone of the image joins as itself', async () => {
    const rbacDir = await rbacWithoutPrepRole();
    const harness = await startHarness({ settings: runCommandSettings, rbacDir });
    try {
      const world = harness.sim.running.world;
      const result = await refresh(harness, POOL2, 'run-command-1');

      assert.equal(result.outcome, 'refreshed', result.reason);
      const donor = result.donor ?? '';
      // The script ran once, by Run Command, without a power-off of its own, on the donor's host.
      const runs = world.compute.runCommandHistory();
      assert.equal(runs.length, 1);
      assert.equal(runs[0]?.commandId, 'RunShellScript');
      assert.ok(!(runs[0]?.script ?? []).some((line) => line.includes('poweroff')));
      const records = world.prepRecords();
      assert.deepEqual(
        records.map((record) => [record.via, record.nodeName, record.outcome]),
        [['run-command', donor, 'succeeded']],
      );
      // No pod was created anywhere; the VM was powered off through the API.
      const log = harness.sim.running.log.snapshot().entries;
      assert.equal(
        log.filter((entry) => entry.api === 'kube' && entry.operation === 'pods:create').length,
        0,
      );
      assert.ok(
        log.some(
          (entry) =>
            entry.operation === 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/powerOff/action',
        ),
      );
      assert.ok(
        log.every((entry) => entry.status !== 403),
        'no call was denied',
      );
      // The donor is back, schedulable, without our annotations.
      const node = world.cluster('prod').world.store.get('nodes', undefined, donor) as
        | { spec?: { unschedulable?: boolean }; metadata: { annotations?: Record<string, string> } }
        | undefined;
      assert.equal(node?.spec?.unschedulable, undefined);
      assert.ok(
        !Object.keys(node?.metadata.annotations ?? {}).some((key) => key.startsWith('vmss-prototype.io/')),
      );

      // New instances boot from the image and join under their own names: nothing of the donor's identity.
      const scaleSetId = result.plan?.scaleSet.id ?? '';
      const [clone] = world.compute.scaleOut(scaleSetId, 1);
      assert.ok(clone);
      harness.sim.running.clock.advanceBy(
        world.latency.newNodeJoinFromPrototypeSeconds + world.latency.nodeBootSeconds + 5,
      );
      const joined = world
        .cluster('prod')
        .world.store.get('nodes', undefined, clone.computerName.toLowerCase());
      assert.ok(joined, 'the clone registered its own node');
      const identity = world.identity();
      assert.deepEqual(identity.violations, []);
      assert.deepEqual(
        identity.findings.filter((finding) => finding.vmId === clone.vmId),
        [],
      );
      assert.notEqual(nodeOf(POOL2, 0), clone.computerName.toLowerCase());
    } finally {
      await harness.stop();
      await rm(rbacDir, { recursive: true, force: true });
    }
  });

  /** The run failed at preparing-disk before any power-off or snapshot, the donor running and given back. */
  function assertRefusedBeforePowerOff(harness: Harness, donor: string, message: string): void {
    const world = harness.sim.running.world;
    assert.match(message, /the node was given back/);
    assert.equal(world.compute.runCommandHistory().length, 1);
    const log = harness.sim.running.log.snapshot().entries;
    assert.ok(!log.some((entry) => entry.operation.endsWith('/powerOff/action')), 'no power-off');
    assert.equal(world.compute.listSnapshots().length, 0);
    assert.equal(world.cluster('prod').world.instanceOfNode(donor)?.powerState, 'running');
    const node = world.cluster('prod').world.store.get('nodes', undefined, donor) as
      { spec?: { unschedulable?: boolean }; metadata: { annotations?: Record<string, string> } } | undefined;
    assert.notEqual(node?.spec?.unschedulable, true, 'the node was given back');
    assert.ok(
      !Object.keys(node?.metadata.annotations ?? {}).some((key) => key.startsWith('vmss-prototype.io/')),
    );
  }

  async function refreshFailing(harness: Harness, donor: string, id: string): Promise<string> {
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL2, trigger: 'test', node: donor },
      id,
    );
    assert.equal(status.runtimeStatus, 'Failed');
    return status.failure?.ErrorMessage ?? '';
  }

  /** How the script really ended, as the world recorded it (ARM's answer never says). */
  function lastRunCommandOutcome(harness: Harness): string {
    const record = harness.sim.running.world.prepRecords().at(-1);
    assert.equal(record?.via, 'run-command');
    return record?.outcome ?? '';
  }

  void it('a prep script that exits 1 without printing is refused before the power-off', async () => {
    const donor = nodeOf(POOL2, 1);
    const harness = await startHarness({ settings: runCommandSettings });
    try {
      // `sync` fails silently on the donor: under `set -e` the script stops there with status 1 and
      // nothing on stderr; the extension still reports "Enable succeeded".
      harness.sim.running.world.applyFault({
        preset: 'host-command',
        command: 'sync',
        exitCode: 1,
        at: '0s',
      });
      const message = await refreshFailing(harness, donor, 'run-command-silent');

      assert.match(
        message,
        /^preparing-disk: the prep script failed on instance .*: it exited 1; it printed nothing/,
      );
      assert.equal(lastRunCommandOutcome(harness), 'failed');
      assertRefusedBeforePowerOff(harness, donor, message);
    } finally {
      await harness.stop();
    }
  });

  void it('a prep script that prints a warning and exits 0 is accepted', async () => {
    const harness = await startHarness({ settings: runCommandSettings });
    try {
      harness.sim.running.world.applyFault({
        preset: 'host-command',
        command: 'sync',
        exitCode: 0,
        stderr: 'sync: warning: the journal of /dev/sda1 is being replayed',
        at: '0s',
      });
      const result = await refresh(harness, POOL2, 'run-command-warning');

      assert.equal(result.outcome, 'refreshed', result.reason);
      assert.ok(
        harness.sim.running.log
          .snapshot()
          .entries.some((entry) => entry.operation.endsWith('/virtualMachines/powerOff/action')),
      );
    } finally {
      await harness.stop();
    }
  });

  void it('a prep script that fails with an error is refused, naming the error', async () => {
    const donor = nodeOf(POOL2, 1);
    const harness = await startHarness({ settings: runCommandSettings });
    try {
      harness.sim.running.world.applyFault({
        preset: 'host-command',
        command: 'truncate',
        exitCode: 1,
        stderr: "truncate: cannot open '/etc/machine-id' for writing: Read-only file system",
        at: '0s',
      });
      const message = await refreshFailing(harness, donor, 'run-command-fails');

      assert.match(
        message,
        /^preparing-disk: the prep script failed on instance .*: it exited 1; it printed: .*Read-only file system/,
      );
      assertRefusedBeforePowerOff(harness, donor, message);
    } finally {
      await harness.stop();
    }
  });

  void it('a run command whose output has no exit status line is refused (cut short)', async () => {
    const donor = nodeOf(POOL2, 1);
    const harness = await startHarness({ settings: runCommandSettings });
    try {
      // What the extension reports for a script killed before its EXIT trap ran: whatever it printed.
      harness.sim.running.world.compute.setRunCommandHandler(() => ({ stdout: '', stderr: 'Killed' }));
      const message = await refreshFailing(harness, donor, 'run-command-unreported');

      assert.match(message, /^preparing-disk: the prep script on instance .* did not report its exit status/);
      assert.match(message, /it printed: Killed/);
      assertRefusedBeforePowerOff(harness, donor, message);
    } finally {
      await harness.stop();
    }
  });
});
