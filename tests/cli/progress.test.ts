// Progress lines carry the time and the elapsed time; --json makes each change one JSON object per line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ProgressEvent } from '../../cli/progress.js';
import { createProgressPrinter, progressLine } from '../../cli/progress.js';
import type { OrchestrationStatus } from '../../cli/runner/index.js';

const START = Date.parse('2026-11-23T14:00:00.000Z');

function status(
  instanceId: string,
  secondsAfterStart: number,
  overrides: Partial<OrchestrationStatus> = {},
): OrchestrationStatus {
  return {
    name: 'refreshPool',
    instanceId,
    parentInstanceId: undefined,
    runtimeStatus: 'Running',
    input: { secret: 'never printed' },
    output: undefined,
    customStatus: undefined,
    createdTime: new Date(START),
    lastUpdatedTime: new Date(START + secondsAfterStart * 1000),
    failure: undefined,
    generation: 0,
    historyLength: 1,
    waitingFor: { activities: [], timers: [], subOrchestrations: [], events: [] },
    ...overrides,
  };
}

/** A run's life: pending, two steps (one repeated), then completed; and a pool run started later. */
function statuses(): OrchestrationStatus[] {
  const pool = 'refresh:prod:agents';
  return [
    status(pool, 0, { runtimeStatus: 'Pending' }),
    status(pool, 5, { customStatus: { cluster: 'prod', pool: 'agents', step: 'planning' } }),
    status(pool, 7, { customStatus: { cluster: 'prod', pool: 'agents', step: 'planning' } }),
    status(pool, 192, {
      customStatus: { cluster: 'prod', pool: 'agents', step: 'draining', node: 'n1', detail: '2 pods left' },
    }),
    status(pool, 7_530, {
      runtimeStatus: 'Completed',
      customStatus: { step: 'done' },
      output: { outcome: 'refreshed', reason: 'from n1' },
    }),
    status('refresh:prod:gpu', 7_600, {
      runtimeStatus: 'Failed',
      createdTime: new Date(START + 60_000),
      failure: { ErrorType: 'StepFailure', ErrorMessage: 'draining: timed out\nsecond line' },
    }),
  ];
}

function capture(json: boolean): string[] {
  const written: string[] = [];
  const print = createProgressPrinter({ write: (text: string) => written.push(text) }, { json });
  for (const each of statuses()) print(each);
  return written;
}

void describe('progress lines', () => {
  void it('print each change once, with the time of day, the elapsed time and the step', () => {
    assert.deepEqual(capture(false), [
      '14:00:00Z  +0s  refresh:prod:agents: pending\n',
      '14:00:05Z  +5s  refresh:prod:agents: planning\n',
      '14:03:12Z  +3m12s  refresh:prod:agents: draining node n1 (2 pods left)\n',
      '16:05:30Z  +2h5m30s  refresh:prod:agents: completed (refreshed: from n1)\n',
      '16:06:40Z  +2h6m40s  refresh:prod:gpu: failed (draining: timed out)\n',
    ]);
  });

  void it('never print the orchestration input', () => {
    assert.doesNotMatch(capture(false).join(''), /never printed/);
    assert.doesNotMatch(capture(true).join(''), /never printed/);
  });
});

void describe('--json progress', () => {
  void it('is one JSON object per line, the same changes as the text lines', () => {
    const lines = capture(true);
    assert.equal(lines.length, 5);
    const events = lines.map((line) => {
      assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), line);
      return JSON.parse(line) as ProgressEvent;
    });
    assert.deepEqual(events[2], {
      event: 'progress',
      time: '2026-11-23T14:03:12.000Z',
      elapsedSeconds: 192,
      instanceId: 'refresh:prod:agents',
      orchestration: 'refreshPool',
      runtimeStatus: 'Running',
      step: 'draining',
      cluster: 'prod',
      pool: 'agents',
      node: 'n1',
      detail: '2 pods left',
    });
    assert.deepEqual(
      events.map((event) => [event.runtimeStatus, event.step, event.elapsedSeconds]),
      [
        ['Pending', 'pending', 0],
        ['Running', 'planning', 5],
        ['Running', 'draining', 192],
        ['Completed', 'completed', 7_530],
        ['Failed', 'failed', 7_600],
      ],
    );
    assert.equal(events[4]?.detail, 'draining: timed out');
    assert.equal(events.map((event) => progressLine(event)).join('\n'), capture(false).join('').trimEnd());
  });
});
