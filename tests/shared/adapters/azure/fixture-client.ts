/**
 * Test helper: a real ComputeManagementClient whose HTTP client answers from the JSON fixtures in
 * tests/fixtures/arm, so converter tests see exactly what the SDK's own deserializers make of an ARM
 * payload (flattened `properties`, Dates, renamed fields) without a network.
 */
import { readFileSync } from 'node:fs';

import { ComputeManagementClient } from '@azure/arm-compute';
import type { TokenCredential } from '@azure/core-auth';
import { createHttpHeaders, type HttpClient, type PipelineRequest } from '@azure/core-rest-pipeline';

const FIXTURES = new URL('../../../../../tests/fixtures/arm/', import.meta.url);

export const SUBSCRIPTION = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

/** Raw fixture JSON (for tests that need to tweak a payload before the SDK sees it). */
export function readFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;
}

/** A credential that hands out a fixed token; the fixture client never sends it anywhere. */
export const fixedCredential: TokenCredential = {
  getToken: () => Promise.resolve({ token: 'test-token', expiresOnTimestamp: Number.MAX_SAFE_INTEGER }),
};

/** A client that answers every GET with `body` (200) and records the request paths it saw. */
export function clientServing(body: unknown): { client: ComputeManagementClient; paths: string[] } {
  return clientAnswering(200, {}, body);
}

/** A client that answers every request with `status`, `headers` and `body` (SDK retries off). */
export function clientAnswering(
  status: number,
  headers: Record<string, string>,
  body: unknown,
): { client: ComputeManagementClient; paths: string[] } {
  const paths: string[] = [];
  const httpClient: HttpClient = {
    sendRequest: (request: PipelineRequest) => {
      paths.push(new URL(request.url).pathname);
      return Promise.resolve({
        request,
        status,
        headers: createHttpHeaders({ 'content-type': 'application/json; charset=utf-8', ...headers }),
        bodyAsText: JSON.stringify(body),
      });
    },
  };
  const client = new ComputeManagementClient(fixedCredential, SUBSCRIPTION, {
    httpClient,
    retryOptions: { maxRetries: 0 },
  });
  return { client, paths };
}

/** A client that serves one fixture file. */
export function clientForFixture(name: string): ComputeManagementClient {
  return clientServing(readFixture(name)).client;
}
