// plan says how each donor would be captured: the mode, and whether auto fell back from live.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { captureCell, captureSummaryOf } from '../../cli/capture-summary.js';
import type { CommandResult } from '../../cli/commands.js';
import { render } from '../../cli/output.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';

/** A planned pool with only what the summary reads (the plan's capture and its capture.mode setting). */
function planned(
  setting: string,
  capture: { mode: string; reason: string; scrubbed?: string } | undefined,
): PoolRefreshResult {
  return {
    cluster: 'prod',
    pool: 'agents',
    outcome: 'planned',
    reason: 'n1 is Ready longest',
    plan: {
      decision: { kind: 'refresh', node: 'n1' },
      verdicts: [],
      settings: { captureMode: setting },
      ...(capture === undefined ? {} : { capture }),
    },
  } as never;
}

void describe('captureSummaryOf and captureCell', () => {
  const cases: readonly (readonly [
    string,
    string,
    Parameters<typeof planned>[1],
    boolean | undefined,
    string,
  ])[] = [
    [
      'auto took live',
      'auto',
      { mode: 'live', reason: 'auto: live (aks-engine, configured; …)' },
      false,
      'live',
    ],
    [
      'auto fell back',
      'auto',
      { mode: 'drain-and-stop', reason: 'auto: drain-and-stop, because the pool runs Windows' },
      true,
      'drain-and-stop (auto fell back from live)',
    ],
    ['live set', 'live', { mode: 'live', reason: 'capture.mode is live' }, false, 'live'],
    [
      'drain-and-stop set',
      'drain-and-stop',
      { mode: 'drain-and-stop', reason: 'capture.mode is drain-and-stop' },
      false,
      'drain-and-stop',
    ],
    [
      'kubeadm under auto fallback',
      'auto',
      { mode: 'drain-and-stop', reason: 'auto: drain-and-stop, because …', scrubbed: 'copy' },
      true,
      'drain-and-stop (auto fell back from live, scrubs a copy)',
    ],
    [
      'run-command set',
      'run-command',
      { mode: 'run-command', reason: 'capture.mode is run-command' },
      false,
      'run-command',
    ],
    ['nothing to capture', 'auto', undefined, undefined, '-'],
  ];
  for (const [name, setting, capture, fellBack, cell] of cases) {
    void it(name, () => {
      const summary = captureSummaryOf(planned(setting, capture));
      assert.equal(summary?.fellBackFromLive, fellBack);
      assert.equal(captureCell(summary), cell);
      if (capture !== undefined) {
        assert.equal(summary?.mode, capture.mode);
        assert.equal(summary?.setting, setting);
        assert.equal(summary?.reason, capture.reason);
        assert.equal(summary?.scrubbed, capture.scrubbed ?? (capture.mode === 'live' ? 'copy' : 'donor'));
      }
    });
  }
});

void describe('render: plan', () => {
  const result = (kind: 'plan' | 'refresh'): CommandResult => ({
    kind,
    failures: [],
    clusters: [
      {
        cluster: 'prod',
        pools: [
          planned('auto', {
            mode: 'drain-and-stop',
            reason: 'auto: drain-and-stop, because the pool runs Windows',
          }),
        ],
      },
    ],
  });

  void it('a plan has a CAPTURE column saying auto fell back', () => {
    const lines = render(result('plan'), { width: 200 }).split('\n');
    assert.match(lines[0] ?? '', /OUTCOME +DONOR +CAPTURE +REASON/);
    assert.match(lines[1] ?? '', /planned .*drain-and-stop \(auto fell back from live\)/);
  });

  void it('a refresh has none', () => {
    assert.doesNotMatch(render(result('refresh'), { width: 200 }), /CAPTURE|fell back/);
  });
});
