/**
 * The Status schema against Status bodies as API servers send them: the fields decided on are kept,
 * the rest dropped, and a body of the wrong shape is refused rather than half-read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { KubeStatus } from '../../../../shared/adapters/kubernetes/schema.js';

const CASES: { name: string; body: unknown; expected: KubeStatus | undefined }[] = [
  {
    name: 'a NotFound Status',
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'nodes "n1" not found',
      reason: 'NotFound',
      details: { name: 'n1', kind: 'nodes' },
      code: 404,
    },
    expected: {
      message: 'nodes "n1" not found',
      reason: 'NotFound',
      details: { name: 'n1', kind: 'nodes' },
      code: 404,
    },
  },
  {
    name: 'an eviction refused by a budget',
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
          },
        ],
      },
      code: 429,
    },
    expected: {
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
          },
        ],
      },
      code: 429,
    },
  },
  {
    name: 'a throttling Status with retryAfterSeconds',
    body: {
      kind: 'Status',
      message: 'Too many requests',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 1 },
      code: 429,
    },
    expected: {
      message: 'Too many requests',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 1 },
      code: 429,
    },
  },
  { name: 'a code that is not a number', body: { code: '404' }, expected: undefined },
  {
    name: 'causes that are not a list',
    body: { details: { causes: 'DisruptionBudget' } },
    expected: undefined,
  },
];

void describe('KubeStatus', () => {
  for (const { name, body, expected } of CASES) {
    void it(`reads ${name}`, () => {
      const parsed = KubeStatus.safeParse(body);

      assert.deepEqual(parsed.success ? parsed.data : undefined, expected);
    });
  }
});
