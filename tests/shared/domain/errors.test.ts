import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ensureError,
  ignoreNotFound,
  isNotFound,
  isRefreshError,
  isTerminal,
  isTransient,
  messageOf,
  NotFoundError,
  TerminalError,
  TransientError,
} from '../../../shared/domain/errors.js';

void describe('error taxonomy', () => {
  const cases = [
    {
      error: new NotFoundError('ScaleSetNotFound', 'reading scale set pool-a: not found'),
      kind: 'not-found',
    },
    { error: new TransientError('ArmThrottled', 'updating scale set pool-a: throttled'), kind: 'transient' },
    { error: new TerminalError('EphemeralOsDisk', 'capturing node n1: ephemeral OS disk'), kind: 'terminal' },
  ] as const;
  for (const { error, kind } of cases) {
    void it(`${error.name} is ${kind} and only that`, () => {
      assert.ok(error instanceof Error);
      assert.ok(isRefreshError(error));
      assert.equal(error.kind, kind);
      assert.equal(isNotFound(error), kind === 'not-found');
      assert.equal(isTransient(error), kind === 'transient');
      assert.equal(isTerminal(error), kind === 'terminal');
      assert.equal(error.name, error.constructor.name);
    });
  }

  void it('keeps the ES2022 cause but never serialises it', () => {
    const secret = new Error('request failed: Authorization: Bearer eyJhbGciOi.secret');
    const error = new TransientError('ArmUnavailable', 'listing scale sets: service unavailable', {
      cause: secret,
      retryAfterMs: 2000,
    });
    assert.equal(error.cause, secret);
    assert.equal(error.retryAfterMs, 2000);
    const json = JSON.stringify(error);
    assert.deepEqual(JSON.parse(json), {
      name: 'TransientError',
      code: 'ArmUnavailable',
      message: 'listing scale sets: service unavailable',
    });
    assert.ok(!json.includes('Bearer'));
  });

  void it('has no cause property when none was given', () => {
    assert.equal('cause' in new TerminalError('X', 'x'), false);
  });

  const retryCases: { given: number | undefined; expected: number | undefined }[] = [
    { given: undefined, expected: undefined },
    { given: 0, expected: 0 },
    { given: 1500, expected: 1500 },
    { given: -1, expected: undefined },
    { given: Number.NaN, expected: undefined },
    { given: Number.POSITIVE_INFINITY, expected: undefined },
  ];
  for (const { given, expected } of retryCases) {
    void it(`TransientError retryAfterMs ${String(given)} → ${String(expected)}`, () => {
      const options = given === undefined ? {} : { retryAfterMs: given };
      assert.equal(new TransientError('T', 't', options).retryAfterMs, expected);
    });
  }
});

void describe('ignoreNotFound', () => {
  void it('swallows not-found', () => {
    assert.equal(
      ignoreNotFound(new NotFoundError('SnapshotNotFound', 'deleting snapshot s1: not found')),
      undefined,
    );
  });
  const rethrown: { name: string; value: unknown }[] = [
    { name: 'transient', value: new TransientError('T', 't') },
    { name: 'terminal', value: new TerminalError('T', 't') },
    { name: 'plain error', value: new Error('boom') },
  ];
  for (const { name, value } of rethrown) {
    void it(`rethrows ${name} as is`, () => {
      assert.throws(
        () => ignoreNotFound(value),
        (thrown) => thrown === value,
      );
    });
  }
  void it('rethrows a non-error as an Error', () => {
    assert.throws(() => ignoreNotFound('text'), { message: 'text' });
  });
  void it('works as a promise catch handler', async () => {
    const result = await Promise.reject(new NotFoundError('N', 'n')).catch(ignoreNotFound);
    assert.equal(result, undefined);
  });
});

void describe('ensureError', () => {
  void it('returns errors unchanged', () => {
    const error = new TypeError('x');
    assert.equal(ensureError(error), error);
  });
  const cases: { name: string; value: unknown; message: string | RegExp; errorName?: string }[] = [
    { name: 'string', value: 'something broke', message: 'something broke' },
    {
      name: 'error-like object',
      value: { name: 'RestError', message: 'nope' },
      message: 'nope',
      errorName: 'RestError',
    },
    { name: 'number', value: 42, message: 'non-error value thrown: 42' },
    { name: 'undefined', value: undefined, message: 'non-error value thrown: undefined' },
    { name: 'null', value: null, message: 'non-error value thrown: null' },
    {
      name: 'plain object',
      value: { statusCode: 500 },
      message: 'non-error value thrown: {"statusCode":500}',
    },
    {
      name: 'function',
      value: function fetchThing() {},
      message: 'non-error value thrown: function fetchThing',
    },
  ];
  for (const c of cases) {
    void it(`wraps a ${c.name}`, () => {
      const error = ensureError(c.value);
      assert.ok(error instanceof Error);
      assert.match(
        error.message,
        typeof c.message === 'string' ? new RegExp(`^${escape(c.message)}$`) : c.message,
      );
      if (c.errorName !== undefined) {
        assert.equal(error.name, c.errorName);
      }
    });
  }
  void it('survives circular objects', () => {
    const value: Record<string, unknown> = {};
    value['self'] = value;
    assert.equal(ensureError(value).message, 'non-error value thrown: [object Object]');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

void describe('messageOf', () => {
  const cases: [unknown, string][] = [
    [new Error('boom'), 'boom'],
    [new TerminalError('Code', 'refused'), 'refused'],
    ['text', 'text'],
    [42, '42'],
    [null, 'null'],
    [undefined, 'undefined'],
    [{ toString: () => 'custom' }, 'custom'],
  ];
  for (const [error, expected] of cases) {
    void it(`reads ${expected}`, () => assert.equal(messageOf(error), expected));
  }
});
