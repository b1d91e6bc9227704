// The activity boundary: inputs parsed with the field named, thrown errors turned into failure values
// that keep kind, code, Retry-After and advice, and never a stack or a cause.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { z } from 'zod';

import { defineActivity, runActivity } from '../../../../shared/application/activities/activity.js';
import { ACTIVITIES, bindActivities } from '../../../../shared/application/activities/catalogue.js';
import type { RefreshDependencies } from '../../../../shared/application/refresh-dependencies.js';
import { NotFoundError, TerminalError, TransientError } from '../../../../shared/domain/errors.js';

const deps: RefreshDependencies = {
  clusterNames: [],
  cluster: (name) =>
    Promise.reject(
      new NotFoundError('ClusterNotConfigured', `finding cluster ${name}: it is not configured`),
    ),
  now: () => new Date(0),
  runner: { kind: 'test', host: 'activity-test' },
};

const echo = defineActivity('echo', z.object({ count: z.number().int() }), (_deps, input) =>
  Promise.resolve(input.count + 1),
);

function throwing(error: Error) {
  return defineActivity('throwing', z.object({}), () => Promise.reject(error));
}

void describe('runActivity', () => {
  void it('returns the value', async () => {
    assert.deepEqual(await runActivity(echo, deps, { count: 1 }), { ok: true, value: 2 });
  });

  void it('refuses a bad input as terminal, naming the field', async () => {
    const result = await runActivity(echo, deps, { count: 'one' });
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'terminal');
    assert.equal(result.failure.code, 'InvalidActivityInput');
    assert.match(result.failure.message, /^parsing input of activity echo: count: /);
  });

  void it('keeps kind, code, Retry-After and advice of a product error', async () => {
    const error = new TransientError('ArmThrottled', 'reading scale set: throttled', {
      retryAfterMs: 17_000,
      advice: 'wait',
      cause: new Error('secret body'),
    });
    assert.deepEqual(await runActivity(throwing(error), deps, {}), {
      ok: false,
      failure: {
        kind: 'transient',
        code: 'ArmThrottled',
        message: 'reading scale set: throttled',
        retryAfterMs: 17_000,
        advice: 'wait',
      },
    });
  });

  void it('keeps not-found and terminal kinds', async () => {
    const missing = await runActivity(
      throwing(new NotFoundError('NodeNotFound', 'reading node n: not found')),
      deps,
      {},
    );
    const refused = await runActivity(throwing(new TerminalError('Forbidden', 'refused')), deps, {});
    assert.deepEqual(
      [missing, refused].map((result) => (result.ok ? 'ok' : result.failure.kind)),
      ['not-found', 'terminal'],
    );
  });

  void it('turns a bug into a terminal UnexpectedError with its message only', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')", {
      cause: { token: 'secret' },
    });
    const result = await runActivity(throwing(bug), deps, {});
    assert.deepEqual(result, {
      ok: false,
      failure: {
        kind: 'terminal',
        code: 'UnexpectedError',
        message: "Cannot read properties of undefined (reading 'id')",
      },
    });
    assert.doesNotMatch(JSON.stringify(result), /secret|at .*\.js/);
  });

  void it('reports dependencies that cannot be built (bad settings) as a failure, not a throw', async () => {
    const result = await runActivity(
      echo,
      () => {
        throw new TerminalError('InvalidSettings', 'VMSSP_CLUSTERS: required');
      },
      { count: 1 },
    );
    assert.ok(!result.ok);
    assert.equal(result.failure.message, 'VMSSP_CLUSTERS: required');
  });
});

void describe('the catalogue', () => {
  void it('files every activity under its own name', () => {
    for (const [key, activity] of Object.entries(ACTIVITIES)) assert.equal(activity.name, key);
  });

  void it('binds every activity; an unknown cluster is a not-found failure value', async () => {
    const bound = bindActivities(deps);
    assert.deepEqual(Object.keys(bound).sort(), Object.keys(ACTIVITIES).sort());
    const result = await bound.listPools({ cluster: 'nope' });
    assert.ok(!result.ok);
    assert.equal(result.failure.kind, 'not-found');
    assert.equal(result.failure.code, 'ClusterNotConfigured');
  });
});
