/**
 * The mapping table from client-node failures (ApiException + Status body, socket/TLS/timeout errors) to
 * the product's error kinds, codes and messages.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ApiException } from '@kubernetes/client-node';

import {
  disruptionBudgetRefusal,
  missingPermission,
  parseStatusBody,
  retryAfterMs,
  toRefreshError,
} from '../../../../shared/adapters/kubernetes/errors.js';
import { KubeTransportError } from '../../../../shared/adapters/kubernetes/https-library.js';
import { NotFoundError, TerminalError, TransientError } from '../../../../shared/domain/errors.js';

const CONTEXT = { action: 'evicting pod shop/web-1', kind: 'Pod' };
const SECRET_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln';

function status(code: number, reason: string, message: string, details?: object): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    details,
  });
}

/** client-node hands error bodies over as raw text ("Unknown API Status Code!"), 401 with none. */
function apiError(code: number, body: unknown, headers: Record<string, string> = {}): ApiException<unknown> {
  return new ApiException(code, 'Unknown API Status Code!', body, {
    'content-type': 'application/json',
    ...headers,
  });
}

/** What the HTTPS library (https-library.ts) rejects with when the socket or TLS failed. */
function networkError(code: string): KubeTransportError {
  const cause = Object.assign(new Error(`connect ${code} 127.0.0.1:6443`), { code });
  return new KubeTransportError(cause.message, { cause });
}

const PDB_CAUSE = {
  causes: [
    {
      reason: 'DisruptionBudget',
      message: 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently',
    },
  ],
};

interface Case {
  name: string;
  error: unknown;
  kind: 'not-found' | 'transient' | 'terminal';
  code: string;
  message: RegExp;
  retryAfterMs?: number;
}

const CASES: Case[] = [
  {
    name: '404 NotFound',
    error: apiError(404, status(404, 'NotFound', 'pods "web-1" not found')),
    kind: 'not-found',
    code: 'PodNotFound',
    message: /^evicting pod shop\/web-1: not found: pods "web-1" not found$/,
  },
  {
    name: '401 without a body',
    error: new ApiException(401, 'Unauthorized', undefined, {}),
    kind: 'terminal',
    code: 'ClusterUnauthorized',
    message:
      /^evicting pod shop\/web-1: the API server rejected the service account token — check the cluster's token reference/,
  },
  {
    name: '403 RBAC denial names the missing permission',
    error: apiError(
      403,
      status(
        403,
        'Forbidden',
        'pods "web-1" is forbidden: User "system:serviceaccount:vmss-prototype:vmss-prototype" cannot create resource "pods/eviction" in API group "" in the namespace "shop"',
      ),
    ),
    kind: 'terminal',
    code: 'ClusterForbidden',
    message: /the service account may not create pods\/eviction in the namespace "shop"/,
  },
  {
    name: '403 on a cluster-scoped resource in a named group',
    error: apiError(
      403,
      status(
        403,
        'Forbidden',
        'daemonsets.apps "kured" is forbidden: User "x" cannot get resource "daemonsets" in API group "apps" at the cluster scope',
      ),
    ),
    kind: 'terminal',
    code: 'ClusterForbidden',
    message: /may not get daemonsets\.apps \(cluster-wide\)/,
  },
  {
    name: '403 that is not RBAC keeps the server message',
    error: apiError(
      403,
      status(
        403,
        'Forbidden',
        'unable to create new content in namespace shop because it is being terminated',
      ),
    ),
    kind: 'terminal',
    code: 'ClusterForbidden',
    message: /forbidden: unable to create new content in namespace shop/,
  },
  {
    name: '403 in a namespace being deleted is retried (the pods go away with it)',
    error: apiError(
      403,
      status(
        403,
        'Forbidden',
        'pods "web-1" is forbidden: unable to create new content in namespace shop because it is being terminated',
        {
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: 'namespace shop is being terminated',
              field: 'metadata.namespace',
            },
          ],
        },
      ),
    ),
    kind: 'transient',
    code: 'NamespaceTerminating',
    message: /the namespace is being deleted/,
  },
  {
    name: '409 AlreadyExists outside an idempotent create',
    error: apiError(409, status(409, 'AlreadyExists', 'pods "web-1" already exists')),
    kind: 'terminal',
    code: 'KubeAlreadyExists',
    message: /already exists/,
  },
  {
    name: '409 Conflict (optimistic concurrency) is retried',
    error: apiError(
      409,
      status(
        409,
        'Conflict',
        'Operation cannot be fulfilled on poddisruptionbudgets.policy "web-pdb": the object has been modified',
      ),
    ),
    kind: 'transient',
    code: 'KubeConflict',
    message: /conflict: Operation cannot be fulfilled/,
  },
  {
    name: '422 Invalid',
    error: apiError(
      422,
      status(422, 'Invalid', 'Pod "p" is invalid: spec.containers[0].image: Required value'),
    ),
    kind: 'terminal',
    code: 'KubeInvalid',
    message: /invalid: Pod "p" is invalid/,
  },
  {
    name: '400 BadRequest',
    error: apiError(400, status(400, 'BadRequest', 'field label not supported: spec.foo')),
    kind: 'terminal',
    code: 'KubeBadRequest',
    message: /field label not supported/,
  },
  {
    name: '429 API throttling with Retry-After',
    error: apiError(429, status(429, 'TooManyRequests', 'Too many requests, please try again later.'), {
      'retry-after': '7',
    }),
    kind: 'transient',
    code: 'KubeThrottled',
    message: /the API server is throttling requests/,
    retryAfterMs: 7000,
  },
  {
    name: '429 refused by a PodDisruptionBudget',
    error: apiError(
      429,
      status(
        429,
        'TooManyRequests',
        "Cannot evict pod as it would violate the pod's disruption budget.",
        PDB_CAUSE,
      ),
    ),
    kind: 'transient',
    code: 'EvictionBlockedByDisruptionBudget',
    message: /violate the pod's disruption budget\. The disruption budget web-pdb needs 2 healthy pods/,
  },
  {
    name: '429 from a budget still being processed carries retryAfterSeconds',
    error: apiError(
      429,
      status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
        retryAfterSeconds: 10,
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget web-pdb is still being processed by the server.',
          },
        ],
      }),
    ),
    kind: 'transient',
    code: 'EvictionBlockedByDisruptionBudget',
    message: /still being processed/,
    retryAfterMs: 10_000,
  },
  {
    name: '500 with more than one PodDisruptionBudget',
    error: apiError(
      500,
      status(
        500,
        'InternalError',
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      ),
    ),
    kind: 'terminal',
    code: 'MultiplePodDisruptionBudgets',
    message: /more than one PodDisruptionBudget/,
  },
  {
    name: '500 other',
    error: apiError(500, status(500, 'InternalError', 'etcdserver: request timed out')),
    kind: 'transient',
    code: 'KubeServerError',
    message: /API server error 500: etcdserver: request timed out/,
  },
  {
    name: '503 with a non-JSON body',
    error: apiError(503, '<html>Service Unavailable</html>', { 'retry-after': '3' }),
    kind: 'transient',
    code: 'KubeServerError',
    message: /^evicting pod shop\/web-1: API server error 503$/,
    retryAfterMs: 3000,
  },
  {
    name: '410 Expired continue token',
    error: apiError(410, status(410, 'Expired', 'The provided continue parameter is too old')),
    kind: 'transient',
    code: 'KubeResourceExpired',
    message: /too old/,
  },
  {
    name: 'ECONNREFUSED',
    error: networkError('ECONNREFUSED'),
    kind: 'transient',
    code: 'ClusterUnreachable',
    message: /cannot reach the API server \(ECONNREFUSED\)/,
  },
  {
    name: 'ECONNRESET',
    error: networkError('ECONNRESET'),
    kind: 'transient',
    code: 'ClusterUnreachable',
    message: /ECONNRESET/,
  },
  {
    name: 'undici headers timeout',
    error: networkError('UND_ERR_HEADERS_TIMEOUT'),
    kind: 'transient',
    code: 'ClusterUnreachable',
    message: /UND_ERR_HEADERS_TIMEOUT/,
  },
  {
    name: 'request deadline (AbortSignal.timeout)',
    error: new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    kind: 'transient',
    code: 'ClusterRequestTimeout',
    message: /did not answer in time/,
  },
  {
    name: 'TLS: certificate signed by another CA',
    error: networkError('SELF_SIGNED_CERT_IN_CHAIN'),
    kind: 'terminal',
    code: 'ClusterTlsVerificationFailed',
    message: /check the configured CA certificate/,
  },
  {
    name: 'TLS: server name not in the certificate',
    error: networkError('ERR_TLS_CERT_ALTNAME_INVALID'),
    kind: 'terminal',
    code: 'ClusterTlsVerificationFailed',
    message: /ERR_TLS_CERT_ALTNAME_INVALID/,
  },
  {
    name: 'a request aborted at its deadline (the signal is the cause)',
    error: new KubeTransportError('aborted', {
      cause: new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    }),
    kind: 'transient',
    code: 'ClusterRequestTimeout',
    message: /did not answer in time/,
  },
  {
    name: 'a transport failure with an unrecognised cause',
    error: new KubeTransportError('other side closed', { cause: new Error('other side closed') }),
    kind: 'transient',
    code: 'ClusterUnreachable',
    message: /other side closed/,
  },
  {
    name: 'a programming error is reported, not retried',
    error: new RangeError('Invalid array length'),
    kind: 'terminal',
    code: 'KubeRequestFailed',
    message: /Invalid array length/,
  },
];

void describe('toRefreshError', () => {
  for (const testCase of CASES) {
    void it(`maps ${testCase.name}`, () => {
      const mapped = toRefreshError(testCase.error, CONTEXT);

      assert.equal(mapped.kind, testCase.kind);
      assert.equal(mapped.code, testCase.code);
      assert.match(mapped.message, testCase.message);
      assert.ok(mapped.message.startsWith(`${CONTEXT.action}: `), mapped.message);
      if (testCase.retryAfterMs !== undefined) {
        assert.ok(mapped instanceof TransientError);
        assert.equal(mapped.retryAfterMs, testCase.retryAfterMs);
      }
    });
  }

  void it('passes product errors through unchanged', () => {
    const original = new NotFoundError('PodNotFound', 'reading pod x: not found');
    assert.equal(toRefreshError(original, CONTEXT), original);
  });

  void it('keeps headers and raw bodies out of the message, the JSON form and the cause', () => {
    const error = new ApiException(
      403,
      'Unknown API Status Code!',
      status(
        403,
        'Forbidden',
        'nodes "n" is forbidden: User "u" cannot patch resource "nodes" in API group "" at the cluster scope',
      ),
      { authorization: `Bearer ${SECRET_TOKEN}`, 'audit-id': 'a1' },
    );

    const mapped = toRefreshError(error, CONTEXT);

    assert.ok(mapped instanceof TerminalError);
    const everything = `${mapped.message} ${JSON.stringify(mapped)} ${String(mapped.cause)}`;
    assert.ok(!everything.includes(SECRET_TOKEN));
    assert.ok(!everything.includes('audit-id'));
    assert.ok(!everything.includes('"kind":"Status"'));
    assert.match(String(mapped.cause), /HTTP 403 Forbidden/);
  });
});

void describe('parseStatusBody', () => {
  const body = { kind: 'Status', message: 'm', reason: 'NotFound', code: 404 };
  const cases: { name: string; input: unknown; expected: unknown }[] = [
    {
      name: 'raw JSON text',
      input: JSON.stringify(body),
      expected: { message: 'm', reason: 'NotFound', code: 404 },
    },
    { name: 'a parsed object', input: body, expected: { message: 'm', reason: 'NotFound', code: 404 } },
    {
      name: 'a Buffer',
      input: Buffer.from(JSON.stringify(body)),
      expected: { message: 'm', reason: 'NotFound', code: 404 },
    },
    { name: 'HTML', input: '<html>bad gateway</html>', expected: undefined },
    { name: 'nothing', input: undefined, expected: undefined },
    { name: 'a wrongly typed field', input: { message: 42 }, expected: undefined },
  ];
  for (const { name, input, expected } of cases) {
    void it(`reads ${name}`, () => {
      assert.deepEqual(parseStatusBody(input), expected);
    });
  }
});

void describe('disruptionBudgetRefusal', () => {
  const cases: { name: string; status: object | undefined; expected: string | undefined }[] = [
    {
      name: 'a DisruptionBudget cause (JSON name `reason`)',
      status: {
        message: 'Cannot evict pod.',
        details: { causes: [{ reason: 'DisruptionBudget', message: 'needs 2' }] },
      },
      expected: 'Cannot evict pod. needs 2',
    },
    {
      name: 'a DisruptionBudget cause spelled `type`',
      status: {
        message: 'Cannot evict pod.',
        details: { causes: [{ type: 'DisruptionBudget', message: 'needs 3' }] },
      },
      expected: 'Cannot evict pod. needs 3',
    },
    {
      name: 'an old server that only says so in the message',
      status: { message: "Cannot evict pod as it would violate the pod's disruption budget." },
      expected: "Cannot evict pod as it would violate the pod's disruption budget.",
    },
    {
      name: 'API priority-and-fairness throttling',
      status: { message: 'Too many requests, please try again later.' },
      expected: undefined,
    },
    { name: 'no status', status: undefined, expected: undefined },
  ];
  for (const { name, status: input, expected } of cases) {
    void it(`reads ${name}`, () => {
      assert.equal(disruptionBudgetRefusal(input), expected);
    });
  }
});

void describe('missingPermission', () => {
  const cases: { message: string | undefined; expected: string | undefined }[] = [
    {
      message:
        'nodes "n" is forbidden: User "u" cannot patch resource "nodes" in API group "" at the cluster scope',
      expected: 'patch nodes (cluster-wide)',
    },
    {
      message: 'pods is forbidden: User "u" cannot list resource "pods" in API group "" at the cluster scope',
      expected: 'list pods (cluster-wide)',
    },
    {
      message: 'User "u" cannot delete resource "pods" in API group "" in the namespace "vmss-prototype"',
      expected: 'delete pods in the namespace "vmss-prototype"',
    },
    { message: 'something else', expected: undefined },
    { message: undefined, expected: undefined },
  ];
  for (const { message, expected } of cases) {
    void it(`reads ${String(expected)}`, () => {
      assert.equal(missingPermission(message), expected);
    });
  }
});

void describe('retryAfterMs', () => {
  const cases: {
    name: string;
    headers: Record<string, string> | undefined;
    details?: object;
    expected: number | undefined;
  }[] = [
    { name: 'delta-seconds header', headers: { 'retry-after': '5' }, expected: 5000 },
    { name: 'details.retryAfterSeconds', headers: {}, details: { retryAfterSeconds: 2 }, expected: 2000 },
    {
      name: 'an HTTP-date header (not used by API servers)',
      headers: { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' },
      expected: undefined,
    },
    { name: 'nothing', headers: undefined, expected: undefined },
  ];
  for (const { name, headers, details, expected } of cases) {
    void it(`reads ${name}`, () => {
      assert.equal(retryAfterMs(headers, details === undefined ? undefined : { details }), expected);
    });
  }
});
