// The checks `refresh --pool` runs before its run (the pool exists, every permission of doctor), counted
// by the simulator: the pool the operator named is found by its scale set in the cluster's resource group
// (one ARM read), not by listing every node of the cluster twice (40 pages each at 20 000 nodes).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { type CliOptions, parseArgs, UsageError } from '../../cli/args.js';
import { checkPreconditions } from '../../cli/preconditions.js';
import { openSession, type Session } from '../../cli/session.js';
import { POOL1 } from '../e2e/harness.js';

let work: string;
let session: Session;

function optionsOf(argv: readonly string[]): CliOptions {
  const parsed = parseArgs([...argv, '--sim', '--state-dir', join(work, 'runs')]);
  if (parsed.kind !== 'run') throw new Error(`not a command: ${argv.join(' ')}`);
  return parsed.options;
}

/** Node-list pages and scale-set reads the simulator served while the preconditions of `argv` ran. */
async function preconditionReads(argv: readonly string[]): Promise<{ pages: number; scaleSetReads: number }> {
  const log = session.simulator?.running.log;
  assert.ok(log !== undefined, 'a session with its own simulator');
  log.reset();
  await checkPreconditions(session, optionsOf(argv));
  return {
    pages: log.count({ api: 'kube', operation: 'nodes:list' }),
    scaleSetReads: log.count({ api: 'arm', operation: 'Microsoft.Compute/virtualMachineScaleSets/read' }),
  };
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'vmssp-preconditions-'));
  session = await openSession({ sim: true, stateDir: join(work, 'runs'), persistRuns: false });
});

after(async () => {
  await session.close();
  await rm(work, { recursive: true, force: true });
});

void describe('the preconditions of a command naming a pool', () => {
  void it('refresh --pool: the pool and the permission preflight read no node list', async () => {
    const reads = await preconditionReads(['refresh', '--pool', POOL1]);
    // Before: the pool check and the preflight each listed every node (2 listings).
    assert.equal(reads.pages, 0, `node-list pages: ${reads.pages}`);
    assert.equal(reads.scaleSetReads, 1, 'the pool found by one read of its scale set, shared');
  });

  void it('plan --pool: no node list either', async () => {
    assert.equal((await preconditionReads(['plan', '--pool', POOL1])).pages, 0);
  });

  void it('a pool the cluster does not have is still a usage error naming its pools', async () => {
    await assert.rejects(
      checkPreconditions(session, optionsOf(['refresh', '--pool', 'k8s-typo-12345678-vmss'])),
      (error: unknown) =>
        error instanceof UsageError &&
        /no such pool; its pools are .*k8s-pool1-12345678-vmss/.test(error.message),
    );
  });
});
