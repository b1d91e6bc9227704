/**
 * Live capture's freeze pod in the real shell over simulated time (sim/world/staged-run.ts, with the
 * sleep and fsfreeze stand-ins of host-stand-ins*.ts): the freeze and the units land when the script
 * starts, the thaw at the hold's end, or at a graceful deletion through the script's own TERM trap; a
 * foreground sleep delays the trap to its end, as sh does. Without bwrap they skip (CI=true: they fail).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { buildFreezeScript, temporaryIdentifiersFor } from '../../../shared/domain/live-capture.js';
import type { InstanceInfo } from '../../../sim/arm/compute-state.js';
import { createClock } from '../../../sim/world/clock.js';
import type { HostEffects, HostModel } from '../../../sim/world/host-commands.js';
import { freshDisk } from '../../../sim/world/os-disk.js';
import type { RealShellResult } from '../../../sim/world/real-shell.js';
import { applyRun, runOnHost } from '../../../sim/world/real-shell-run.js';
import { StagedRun } from '../../../sim/world/staged-run.js';
import { skipWithoutBwrap } from './bwrap-gate.js';

const START = Date.parse('2026-11-22T12:00:00Z');
const HOLD = 10;

const FREEZE = buildFreezeScript({
  unit: 'vmssp-thaw-abc',
  holdSeconds: HOLD,
  guardSeconds: 40,
  copyGuard: {
    unit: 'vmssp-copy-guard-abc',
    scriptPath: '/run/vmss-prototype/copy-guard-abc.sh',
    lun: 2,
    rootPartition: 1,
    temporary: temporaryIdentifiersFor('run-1'),
    maxSeconds: 3600,
    mountPoint: '/run/vmss-prototype/copy-abc',
  },
});

function host(): HostModel {
  return {
    root: freshDisk({
      vmId: 'vm-1',
      nodeName: 'node-1',
      cluster: 'prod',
      flavour: 'k3s',
      joinToken: 'token',
      images: [],
      joinedAtMs: START,
      image: 'ubuntu-2204',
    }),
    dataDisks: new Map(),
    mounts: new Map(),
    frozen: false,
    units: new Map(),
    tmpfs: {},
    systemState: 'running',
  };
}

/** A staged run of `script` on a host model; `events` says when the host froze, thawed and the script ended. */
function staged(script: string) {
  const clock = createClock({ mode: 'manual', startMs: START });
  const model = host();
  const instance = { id: 'vm-1' } as InstanceInfo;
  const events: string[] = [];
  const at = (): number => (clock.nowMs() - START) / 1000;
  let last: RealShellResult | undefined;
  const run = new StagedRun(clock, 'freeze pod', {
    run: (stage) => runOnHost(['/bin/sh', '-c', script], host(), 'node-1', START, stage),
    alive: () => instance,
    apply: (_host, result, since): HostEffects => {
      const effects = applyRun(model, result, since);
      if (effects.froze) events.push(`froze at ${at()}`);
      if (effects.thawed) events.push(`thawed at ${at()}`);
      for (const unit of effects.startedUnits) events.push(`started ${unit} at ${at()}`);
      for (const unit of effects.stoppedUnits) events.push(`stopped ${unit} at ${at()}`);
      return effects;
    },
    ended: (_host, result) => {
      last = result;
      events.push(`ended at ${at()}`);
    },
  });
  return { clock, model, events, run, result: () => last };
}

void describe("live capture's freeze pod in the real shell, over simulated time", () => {
  void it('freezes and starts both units at once; thaws and stops its timer at the end of the hold', (t) => {
    if (skipWithoutBwrap(t)) return;
    const { clock, model, events, run, result } = staged(FREEZE);
    run.start();
    assert.deepEqual(events, [
      'froze at 0',
      'started vmssp-copy-guard-abc.service at 0',
      'started vmssp-thaw-abc.timer at 0',
    ]);
    assert.ok(model.tmpfs['/run/vmss-prototype/copy-guard-abc.sh']);
    clock.advanceBy(HOLD - 1);
    assert.equal(model.frozen, true, 'still frozen before the hold ends');
    clock.advanceBy(1);
    assert.deepEqual(events.slice(3), ['thawed at 10', 'stopped vmssp-thaw-abc.timer at 10', 'ended at 10']);
    assert.equal(result()?.ok, true);
    assert.deepEqual([...model.units.keys()], ['vmssp-copy-guard-abc.service'], 'the guard stays');
  });

  void it('a graceful deletion during the hold thaws at once through the TERM trap', (t) => {
    if (skipWithoutBwrap(t)) return;
    const { clock, model, events, run, result } = staged(FREEZE);
    run.start();
    clock.advanceBy(3);
    run.term();
    clock.advanceBy(0);
    assert.deepEqual(events.slice(3), ['thawed at 3', 'stopped vmssp-thaw-abc.timer at 3', 'ended at 3']);
    assert.equal(model.frozen, false);
    assert.equal(result()?.ok, true, result()?.error);
    clock.advanceBy(HOLD);
    assert.equal(events.length, 6, 'nothing lands after the trap ended the script');
  });

  void it('a foreground sleep runs the trap only when it ends, as sh does; no trap: TERM ends the script', (t) => {
    if (skipWithoutBwrap(t)) return;
    const foreground = staged("trap 'fsfreeze -u /; exit 0' TERM\nfsfreeze -f /\nsleep 8\nfsfreeze -u /");
    foreground.run.start();
    foreground.clock.advanceBy(2);
    foreground.run.term();
    foreground.clock.advanceBy(5);
    assert.deepEqual(foreground.events, ['froze at 0']);
    foreground.clock.advanceBy(1);
    assert.deepEqual(foreground.events, ['froze at 0', 'thawed at 8', 'ended at 8']);

    const untrapped = staged(
      "trap 'true' EXIT\nsleep 1; trap 'exit 0' INT\nsleep 20 &\nwait\necho late > /run/x",
    );
    untrapped.run.start();
    untrapped.clock.advanceBy(4);
    untrapped.run.term();
    untrapped.clock.advanceBy(0);
    assert.deepEqual(untrapped.events, ['ended at 4']);
    assert.equal(untrapped.result()?.ok, false, 'TERM without a TERM trap ends the shell');
    assert.equal(untrapped.model.tmpfs['/run/x'], undefined);
  });
});
