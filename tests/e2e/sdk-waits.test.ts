/**
 * The manual-clock harness's cut of the Azure SDK's retry waits (sdk-waits.ts): a throttled call is
 * retried as the SDK retries it, without its `Retry-After` sleep; other timers keep their delay, and the
 * SDK waits again once the harness is gone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { HttpClient, PipelineRequest, PipelineResponse } from '@azure/core-rest-pipeline';
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  throttlingRetryPolicy,
} from '@azure/core-rest-pipeline';

import { skippedSdkRetryWaits, skipSdkRetryWaits } from './sdk-waits.js';

/** Answers 429 with `Retry-After: 600` (ten minutes) `throttled` times, then 200; counts the calls. */
function throttlingServer(throttled: number): HttpClient & { calls: number } {
  const server = {
    calls: 0,
    sendRequest(request: PipelineRequest): Promise<PipelineResponse> {
      server.calls += 1;
      const status = server.calls <= throttled ? 429 : 200;
      const headers = createHttpHeaders(status === 429 ? { 'retry-after': '600' } : {});
      return Promise.resolve({ request, status, headers });
    },
  };
  return server;
}

function send(server: HttpClient): Promise<PipelineResponse> {
  const pipeline = createEmptyPipeline();
  pipeline.addPolicy(throttlingRetryPolicy({ maxRetries: 3 }));
  return pipeline.sendRequest(server, createPipelineRequest({ url: 'https://127.0.0.1/throttled' }));
}

void describe('the Azure SDK retry waits on the manual clock', () => {
  void it('retries a throttled call without sleeping through its Retry-After', async () => {
    const restore = skipSdkRetryWaits();
    try {
      const before = skippedSdkRetryWaits();
      const server = throttlingServer(2);
      // Two ten-minute waits: without the cut the test would outlive its timeout.
      const response = await send(server);
      assert.equal(response.status, 200);
      assert.equal(server.calls, 3, 'the SDK retried twice, as it does');
      assert.equal(skippedSdkRetryWaits() - before, 2, 'both waits were cut');
    } finally {
      restore();
    }
  });

  void it('leaves other timers their delay, and the SDK its waits once restored', async () => {
    const real = globalThis.setTimeout;
    const restore = skipSdkRetryWaits();
    const nested = skipSdkRetryWaits();
    try {
      assert.notEqual(globalThis.setTimeout, real, 'installed while a harness runs');
      const before = skippedSdkRetryWaits();
      // A timer of the test's own is not the SDK's wait: it keeps its delay (it has not fired when a
      // zero-delay timer set after it has).
      let fired = false;
      const own = setTimeout(() => (fired = true), 60_000);
      await new Promise((resolve) => setTimeout(resolve, 0));
      clearTimeout(own);
      assert.equal(fired, false);
      assert.equal(skippedSdkRetryWaits(), before);
      nested();
      assert.notEqual(globalThis.setTimeout, real, 'kept while another harness runs');
    } finally {
      restore();
    }
    assert.equal(globalThis.setTimeout, real, 'removed with the last harness');
  });
});
