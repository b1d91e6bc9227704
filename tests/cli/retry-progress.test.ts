// A run retrying an API server it cannot reach prints one line per retry on stderr: the server, the
// socket's cause (a real ECONNREFUSED from a closed 127.0.0.1 port, through the Kubernetes adapter's
// error mapping and the activity's failure value), the attempt and the wait.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';

import type { OrchestrationContext } from 'durable-functions';

import { createRetryPrinter, retryLine } from '../../cli/retry-progress.js';
import {
  clusterOfInput,
  listenToRetries,
  noticeRetry,
  type RetryNotice,
} from '../../functions/orchestrations/retry-notices.js';
import { toRefreshError } from '../../shared/adapters/kubernetes/errors.js';
import { failureOf } from '../../shared/application/activities/activity.js';

/** A port on 127.0.0.1 that nothing listens on: bound by the OS, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

function printed(notice: RetryNotice, json = false): string[] {
  const lines: string[] = [];
  const print = createRetryPrinter(
    { write: (text: string) => lines.push(text) },
    (cluster) => (cluster === 'prod' ? 'https://127.0.0.1:6443' : undefined),
    { json },
  );
  print(notice);
  return lines;
}

void describe('retry progress', () => {
  void it('a closed 127.0.0.1 port: one line naming the server, ECONNREFUSED, the attempt and the wait', async () => {
    const url = `https://127.0.0.1:${await closedPort()}`;
    const error = await fetch(`${url}/api/v1/nodes`, { signal: AbortSignal.timeout(10_000) }).then(
      () => assert.fail('something listens on the closed port'),
      (thrown: unknown) => toRefreshError(thrown, { action: 'listing nodes', kind: 'Node', apiServer: url }),
    );
    const failure = failureOf(error);
    assert.equal(failure.code, 'ClusterUnreachable');
    assert.equal(failure.networkCode, 'ECONNREFUSED');
    const lines: string[] = [];
    const print = createRetryPrinter({ write: (text: string) => lines.push(text) }, () => url);
    print({
      instanceId: 'refresh:prod:agents',
      activity: 'listNodes',
      cluster: 'prod',
      failure,
      nextAttempt: 2,
      maxAttempts: 6,
      waitMs: 10_000,
    });
    assert.deepEqual(lines, [
      `retrying: the API server ${url} is unreachable (ECONNREFUSED); attempt 2 of 6, next in 10s (refresh:prod:agents)\n`,
    ]);
  });

  const base: RetryNotice = {
    instanceId: 'plan:prod:1',
    activity: 'planPool',
    cluster: 'prod',
    failure: {
      kind: 'transient',
      code: 'ClusterRequestTimeout',
      message: 'the API server did not answer in time',
    },
    nextAttempt: 3,
    maxAttempts: 6,
    waitMs: 20_000,
  };

  const cases: readonly (readonly [string, RetryNotice, string | undefined])[] = [
    [
      'a timeout',
      base,
      'retrying: the API server https://127.0.0.1:6443 is unreachable (no answer in time); attempt 3 of 6, next in 20s (plan:prod:1)',
    ],
    [
      'a retry bounded by time only (giving a node back)',
      { ...base, maxAttempts: Number.POSITIVE_INFINITY, waitMs: 60_000 },
      'retrying: the API server https://127.0.0.1:6443 is unreachable (no answer in time); attempt 3, next in 1m (plan:prod:1)',
    ],
    [
      'a cluster without settings',
      { ...base, cluster: 'other' },
      'retrying: the API server is unreachable (no answer in time); attempt 3 of 6, next in 20s (plan:prod:1)',
    ],
    [
      'ARM throttling: not this line',
      { ...base, failure: { kind: 'transient', code: 'ArmThrottled', message: 'x' } },
      undefined,
    ],
    ['a terminal failure: no retry', { ...base, failure: { ...base.failure, kind: 'terminal' } }, undefined],
  ];
  for (const [name, notice, line] of cases) {
    void it(name, () => assert.deepEqual(printed(notice), line === undefined ? [] : [`${line}\n`]));
  }

  void it('--json: one retrying event per line', () => {
    const [line] = printed(base, true);
    assert.deepEqual(JSON.parse(line ?? ''), {
      event: 'retrying',
      instanceId: 'plan:prod:1',
      cluster: 'prod',
      apiServer: 'https://127.0.0.1:6443',
      code: 'ClusterRequestTimeout',
      attempt: 3,
      maxAttempts: 6,
      nextInSeconds: 20,
    });
    assert.equal(retryLine(JSON.parse(line ?? '') as never), printed(base)[0]?.trimEnd());
  });
});

void describe('retry notices', () => {
  const context = (isReplaying: boolean): OrchestrationContext =>
    ({ df: { isReplaying, instanceId: 'refresh:prod:agents' } }) as unknown as OrchestrationContext;
  const notice = { activity: 'listNodes', failure: base(), nextAttempt: 2, maxAttempts: 6, waitMs: 5_000 };
  function base(): RetryNotice['failure'] {
    return { kind: 'transient', code: 'ClusterUnreachable', message: 'x' };
  }

  void it('tells the listener once per real retry, never during a replay', () => {
    const told: RetryNotice[] = [];
    const previous = listenToRetries((n) => told.push(n));
    try {
      noticeRetry(context(true), notice);
      noticeRetry(context(false), notice);
    } finally {
      listenToRetries(previous);
    }
    assert.deepEqual(told, [{ instanceId: 'refresh:prod:agents', ...notice }]);
  });

  void it('a listener that throws does not fail the orchestration', () => {
    const previous = listenToRetries(() => {
      throw new Error('stderr closed');
    });
    try {
      assert.doesNotThrow(() => noticeRetry(context(false), notice));
    } finally {
      listenToRetries(previous);
    }
  });

  void it('finds the cluster of an activity input', () => {
    assert.equal(clusterOfInput({ cluster: 'prod', pool: 'p' }), 'prod');
    assert.equal(clusterOfInput({ pool: 'p' }), undefined);
    assert.equal(clusterOfInput(undefined), undefined);
  });
});
