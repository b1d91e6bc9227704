/**
 * Error mapping table: RestErrors as the SDK builds them (and a few produced by the real SDK from an
 * ARM error answer) → NotFound / Transient / Terminal with the right code, wait and message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createHttpHeaders, createPipelineRequest, RestError } from '@azure/core-rest-pipeline';

import {
  isZrsUnsupported,
  retryAfterFromHeaders,
  toRefreshError,
} from '../../../../shared/adapters/azure/errors.js';
import { NotFoundError, type RefreshErrorKind, TransientError } from '../../../../shared/domain/errors.js';
import { clientAnswering } from './fixture-client.js';

const NOW = Date.parse('2026-11-22T16:00:00Z');
const ACTION = 'requesting snapshot snap-x';

function restError(
  statusCode: number | undefined,
  code: string | undefined,
  message: string,
  headers: Record<string, string> = {},
): RestError {
  const request = createPipelineRequest({
    url: 'https://management.azure.com/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/snapshots/snap-x',
    headers: createHttpHeaders({ authorization: 'Bearer eyJ0eXAiOiJKV1Qi.secret.token' }),
    body: '{"secret":"request body"}',
  });
  return new RestError(message, {
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(code === undefined ? {} : { code }),
    request,
    ...(statusCode === undefined
      ? {}
      : { response: { request, status: statusCode, headers: createHttpHeaders(headers) } }),
  });
}

interface Case {
  readonly name: string;
  readonly error: unknown;
  readonly kind: RefreshErrorKind;
  readonly code: string;
  readonly retryAfterMs?: number;
  /** Substring the message must contain (after the action prefix). */
  readonly mentions?: string;
}

const AUTHZ_MESSAGE =
  "The client 'a1b2' with object id 'a1b2' does not have authorization to perform action " +
  "'Microsoft.Compute/snapshots/write' over scope '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/snapshots/snap-x' " +
  'or the scope is invalid. If access was recently granted, please refresh your credentials.';
const LINKED_MESSAGE =
  "The client 'a1b2' with object id 'a1b2' has permission to perform action 'Microsoft.Compute/virtualMachineScaleSets/write' " +
  "on scope '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss'; however, it does " +
  "not have permission to perform action(s) 'Microsoft.Network/virtualNetworks/subnets/join/action' on the linked " +
  "scope(s) '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes' (respectively) " +
  'or the linked scope(s) are invalid.';

const cases: readonly Case[] = [
  {
    name: '404 ResourceNotFound',
    error: restError(404, 'ResourceNotFound', "The Resource 'x' was not found."),
    kind: 'not-found',
    code: 'ResourceNotFound',
  },
  {
    name: '404 NotFound',
    error: restError(404, 'NotFound', 'The entity was not found in this Azure location.'),
    kind: 'not-found',
    code: 'NotFound',
  },
  {
    name: '404 ParentResourceNotFound',
    error: restError(
      404,
      'ParentResourceNotFound',
      "Can not perform requested operation on nested resource. Parent resource 'g' not found.",
    ),
    kind: 'not-found',
    code: 'ParentResourceNotFound',
  },
  {
    name: '404 without a body',
    error: restError(404, undefined, 'Unexpected status code: 404'),
    kind: 'not-found',
    code: 'NotFound',
  },
  {
    name: '429 with Retry-After seconds',
    error: restError(429, 'TooManyRequests', 'Too many requests.', { 'retry-after': '17' }),
    kind: 'transient',
    code: 'ArmThrottled',
    retryAfterMs: 17_000,
  },
  {
    name: '429 with x-ms-retry-after-ms',
    error: restError(429, 'TooManyRequests', 'Throttled.', { 'x-ms-retry-after-ms': '2500' }),
    kind: 'transient',
    code: 'ArmThrottled',
    retryAfterMs: 2500,
  },
  {
    name: '429 with Retry-After as an HTTP date',
    error: restError(429, undefined, 'Throttled.', { 'retry-after': 'Sun, 22 Nov 2026 16:00:30 GMT' }),
    kind: 'transient',
    code: 'ArmThrottled',
    retryAfterMs: 30_000,
  },
  {
    name: '429 from Compute RP with only an exhausted rate-limit bucket',
    error: restError(
      429,
      'OperationNotAllowed',
      'The server rejected the request because too many requests have been received for this subscription.',
      {
        'x-ms-ratelimit-remaining-resource':
          'Microsoft.Compute/VMScaleSetVMUpdate3Min;0,Microsoft.Compute/VMScaleSetVMUpdate30Min;412',
      },
    ),
    kind: 'transient',
    code: 'ArmThrottled',
    retryAfterMs: 60_000,
  },
  {
    name: '429 without any wait hint',
    error: restError(429, undefined, 'Throttled.'),
    kind: 'transient',
    code: 'ArmThrottled',
  },
  {
    name: '408',
    error: restError(408, undefined, 'Request timeout'),
    kind: 'transient',
    code: 'RequestTimeout',
  },
  {
    name: '409 Conflict (operation in progress)',
    error: restError(
      409,
      'Conflict',
      "Operation 'PUT' is not allowed on VM 'x' since the VM is marked for update.",
    ),
    kind: 'transient',
    code: 'Conflict',
  },
  {
    name: '409 OperationNotAllowed while another operation runs',
    error: restError(
      409,
      'OperationNotAllowed',
      "Operation 'powerOff' is not allowed since another operation is in progress on this scale set.",
    ),
    kind: 'transient',
    code: 'OperationNotAllowed',
  },
  {
    name: '409 OperationNotAllowed on a snapshot used by a version being created',
    error: restError(
      409,
      'OperationNotAllowed',
      "Snapshot snap-x is in use by gallery image version '/subscriptions/s/…/versions/1.0.0' that is being created.",
    ),
    kind: 'transient',
    code: 'OperationNotAllowed',
  },
  {
    name: '409 OperationNotAllowed for quota is terminal',
    error: restError(
      409,
      'OperationNotAllowed',
      'Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota.',
    ),
    kind: 'terminal',
    code: 'OperationNotAllowed',
    mentions: 'quota',
  },
  {
    name: '409 OperationNotAllowed on a deallocated VM is terminal',
    error: restError(
      409,
      'OperationNotAllowed',
      "Operation 'start' is not allowed on VM 'x' since the VM is marked for deletion.",
    ),
    kind: 'terminal',
    code: 'OperationNotAllowed',
  },
  {
    name: '409 PropertyChangeNotAllowed',
    error: restError(409, 'PropertyChangeNotAllowed', "Changing property 'osType' is not allowed."),
    kind: 'terminal',
    code: 'PropertyChangeNotAllowed',
  },
  {
    name: '409 ScopeLocked',
    error: restError(
      409,
      'ScopeLocked',
      "The scope 'x' cannot perform write operation because following scope(s) are locked.",
    ),
    kind: 'terminal',
    code: 'ScopeLocked',
  },
  {
    name: '500 InternalServerError',
    error: restError(500, 'InternalServerError', 'An internal execution error occurred.'),
    kind: 'transient',
    code: 'InternalServerError',
  },
  {
    name: '503 with Retry-After',
    error: restError(503, undefined, 'Service Unavailable', { 'retry-after': '5' }),
    kind: 'transient',
    code: 'Http503',
    retryAfterMs: 5000,
  },
  {
    name: '501 is terminal',
    error: restError(501, undefined, 'Not Implemented'),
    kind: 'terminal',
    code: 'Http501',
  },
  {
    name: 'ECONNRESET',
    error: restError(undefined, 'ECONNRESET', 'socket hang up'),
    kind: 'transient',
    code: 'ConnectionFailed',
  },
  {
    name: 'ECONNREFUSED',
    error: restError(undefined, 'ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:443'),
    kind: 'transient',
    code: 'ConnectionFailed',
  },
  {
    name: 'ETIMEDOUT',
    error: restError(undefined, 'ETIMEDOUT', 'connect ETIMEDOUT'),
    kind: 'transient',
    code: 'ConnectionFailed',
  },
  {
    name: 'TLS verification failure is terminal',
    error: restError(undefined, 'SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
    kind: 'terminal',
    code: 'TlsVerificationFailed',
  },
  {
    name: '403 AuthorizationFailed names the missing action',
    error: restError(403, 'AuthorizationFailed', AUTHZ_MESSAGE),
    kind: 'terminal',
    code: 'AuthorizationFailed',
    mentions: 'lacks permission Microsoft.Compute/snapshots/write on scope /subscriptions/s/',
  },
  {
    name: '403 LinkedAuthorizationFailed names the linked action',
    error: restError(403, 'LinkedAuthorizationFailed', LINKED_MESSAGE),
    kind: 'terminal',
    code: 'LinkedAuthorizationFailed',
    mentions: 'lacks permission Microsoft.Network/virtualNetworks/subnets/join/action',
  },
  {
    name: '401 InvalidAuthenticationToken',
    error: restError(401, 'InvalidAuthenticationToken', 'The access token is invalid.'),
    kind: 'terminal',
    code: 'InvalidAuthenticationToken',
  },
  {
    name: '400 ZRS refusal → ZrsUnsupported',
    error: restError(400, 'InvalidParameter', 'ZRS storage account type is not supported in this region.'),
    kind: 'terminal',
    code: 'ZrsUnsupported',
    mentions: 'Standard_LRS',
  },
  {
    name: '400 ZRS refusal in other words',
    error: restError(
      400,
      'BadRequest',
      "The storage account type 'Standard_ZRS' is not available; detail:ZRS is not supported in region 'westindia'",
    ),
    kind: 'terminal',
    code: 'ZrsUnsupported',
  },
  {
    name: '400 other refusal keeps the ARM code',
    error: restError(
      400,
      'InvalidParameter',
      'The image version name should follow Major(int).Minor(int).Patch(int) format',
    ),
    kind: 'terminal',
    code: 'InvalidParameter',
  },
  {
    name: 'failed long-running operation',
    error: new Error(
      'The long-running operation has failed. InternalOperationError. Replication failed in westeurope.',
    ),
    kind: 'terminal',
    code: 'InternalOperationError',
    mentions: 'Replication failed',
  },
  {
    name: 'AbortError (client timeout)',
    error: Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' }),
    kind: 'transient',
    code: 'Timeout',
  },
  {
    name: 'a TransientError from the throttle cap keeps its wait',
    error: new TransientError('ArmThrottled', 'asked to retry in 120 s', { retryAfterMs: 120_000 }),
    kind: 'transient',
    code: 'ArmThrottled',
    retryAfterMs: 120_000,
  },
  { name: 'a thrown string', error: 'boom', kind: 'terminal', code: 'Unexpected' },
];

void describe('toRefreshError', () => {
  for (const testCase of cases) {
    void it(testCase.name, () => {
      const mapped = toRefreshError(testCase.error, ACTION, NOW);

      assert.equal(mapped.kind, testCase.kind);
      assert.equal(mapped.code, testCase.code);
      assert.ok(mapped.message.startsWith(`${ACTION}: `), mapped.message);
      if (testCase.mentions !== undefined) {
        assert.ok(mapped.message.includes(testCase.mentions), mapped.message);
      }
      if (mapped instanceof TransientError) {
        assert.equal(mapped.retryAfterMs, testCase.retryAfterMs);
      } else {
        assert.equal(testCase.retryAfterMs, undefined);
      }
      assert.ok(!mapped.message.includes('Bearer'), 'no token in the message');
      assert.ok(!mapped.message.includes('request body'), 'no request body in the message');
      assert.ok(!JSON.stringify(mapped).includes('secret'), 'toJSON leaks nothing');
      assert.equal(mapped.cause, testCase.error);
    });
  }
});

void describe('errors produced by the real SDK from ARM answers', () => {
  void it('GET 404 with an ARM error body → NotFoundError with ARM code', async () => {
    const { client } = clientAnswering(
      404,
      {},
      {
        error: {
          code: 'ResourceNotFound',
          message:
            "The Resource 'Microsoft.Compute/snapshots/snap-x' under resource group 'rg' was not found.",
        },
      },
    );

    const error = await client.snapshots.get('rg', 'snap-x').then(
      () => assert.fail('expected a failure'),
      (thrown: unknown) => toRefreshError(thrown, 'reading snapshot rg/snap-x', NOW),
    );

    assert.ok(error instanceof NotFoundError);
    assert.equal(error.code, 'ResourceNotFound');
    assert.match(
      error.message,
      /^reading snapshot rg\/snap-x: The Resource .* was not found\. \(ResourceNotFound, HTTP 404\)$/,
    );
  });

  void it('LRO initial 400 ZRS refusal (beginCreateOrUpdate) → ZrsUnsupported', async () => {
    const { client } = clientAnswering(
      400,
      {},
      {
        error: {
          code: 'InvalidParameter',
          message: 'ZRS storage account type is not supported in this region.',
          target: 'storageAccountType',
        },
      },
    );

    const error = await client.galleryImageVersions
      .beginCreateOrUpdate('rg', 'g', 'i', '1.0.0', { location: 'westindia' })
      .then(
        () => assert.fail('expected a failure'),
        (thrown: unknown) => toRefreshError(thrown, 'requesting image version rg/g/i/1.0.0', NOW),
      );

    assert.equal(error.kind, 'terminal');
    assert.equal(error.code, 'ZrsUnsupported');
  });
});

void describe('retryAfterFromHeaders', () => {
  const cases: readonly { headers: Record<string, string>; expected: number | undefined }[] = [
    { headers: { 'retry-after-ms': '1500', 'retry-after': '9' }, expected: 1500 },
    { headers: { 'retry-after': '0' }, expected: 0 },
    { headers: { 'retry-after': 'Sun, 22 Nov 2026 15:59:00 GMT' }, expected: 0 },
    { headers: { 'retry-after': 'soon' }, expected: undefined },
    {
      headers: { 'x-ms-ratelimit-remaining-resource': 'Microsoft.Compute/HighCostGet3Min;159' },
      expected: undefined,
    },
    { headers: {}, expected: undefined },
  ];
  for (const testCase of cases) {
    void it(`${JSON.stringify(testCase.headers)} → ${String(testCase.expected)}`, () => {
      const headers = new Map(Object.entries(testCase.headers));
      assert.equal(
        retryAfterFromHeaders((name) => headers.get(name), NOW),
        testCase.expected,
      );
    });
  }
});

void describe('isZrsUnsupported', () => {
  const cases = [
    { message: 'ZRS storage account type is not supported in this region.', expected: true },
    { message: 'Standard_ZRS is not available in this location', expected: true },
    { message: 'Source snapshot is not available in this region', expected: false },
    { message: 'detail:ZRS is not supported', expected: true },
    { message: 'The storage account type Premium_LRS is not supported for this source', expected: false },
  ];
  for (const testCase of cases) {
    void it(testCase.message, () => {
      assert.equal(isZrsUnsupported(undefined, testCase.message), testCase.expected);
    });
  }
});
