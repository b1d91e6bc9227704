/**
 * ARM's "permissions of the caller" API, `GET {scope}/providers/Microsoft.Authorization/permissions`
 * (api-version 2022-04-01): the actions and notActions of every role assignment of the calling identity
 * that applies at a resource group. Sent through the compute client's own pipeline (same credential,
 * endpoint, TLS settings, retries and timeouts), so no other SDK is needed for one GET.
 */
import { createDefaultHttpClient, createPipelineRequest, type HttpClient } from '@azure/core-rest-pipeline';

import type { PermissionBlock } from '../../domain/arm-permissions.js';
import { TerminalError } from '../../domain/errors.js';
import type { ArmPermissionsReader } from '../../ports/arm-permissions.js';
import { ArmClients, type ArmComputeOptions } from './arm-clients.js';
import { toRefreshError } from './errors.js';

const API_VERSION = '2022-04-01';
/** A caller has a handful of role assignments at a scope; more pages than this is a malformed answer. */
const MAX_PAGES = 20;

interface PermissionsPage {
  readonly value?: readonly { readonly actions?: unknown; readonly notActions?: unknown }[];
  readonly nextLink?: string;
}

export class ArmPermissions implements ArmPermissionsReader {
  readonly #clients: ArmClients;
  readonly #http: HttpClient = createDefaultHttpClient();

  constructor(options: ArmComputeOptions) {
    this.#clients = new ArmClients(options);
  }

  async listPermissions(subscriptionId: string, resourceGroup: string): Promise<PermissionBlock[]> {
    const action = `reading your permissions on resource group ${resourceGroup}`;
    const pipeline = this.#clients.client(subscriptionId, action).pipeline;
    const blocks: PermissionBlock[] = [];
    let url: string | undefined =
      `${this.#clients.endpoint()}/subscriptions/${encodeURIComponent(subscriptionId)}/resourceGroups/` +
      `${encodeURIComponent(resourceGroup)}/providers/Microsoft.Authorization/permissions?api-version=${API_VERSION}`;
    for (let page = 0; url !== undefined; page += 1) {
      if (page >= MAX_PAGES) {
        throw new TerminalError('TooManyPages', `${action}: more than ${MAX_PAGES} pages of permissions`);
      }
      const requestUrl: string = url;
      let response;
      try {
        response = await pipeline.sendRequest(
          this.#http,
          createPipelineRequest({ url: requestUrl, method: 'GET' }),
        );
      } catch (error) {
        throw toRefreshError(error, action);
      }
      const body = parseBody(response.bodyAsText ?? undefined);
      if (response.status !== 200) {
        const armError = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
        throw toRefreshError(
          {
            statusCode: response.status,
            code: typeof armError?.code === 'string' ? armError.code : undefined,
            message: typeof armError?.message === 'string' ? armError.message : '',
            details: { error: armError },
            response: { headers: { get: (name: string) => response.headers.get(name) } },
          },
          action,
        );
      }
      const parsed = (body ?? {}) as PermissionsPage;
      for (const entry of parsed.value ?? []) {
        blocks.push({ actions: strings(entry.actions), notActions: strings(entry.notActions) });
      }
      url = typeof parsed.nextLink === 'string' && parsed.nextLink !== '' ? parsed.nextLink : undefined;
    }
    return blocks;
  }
}

function parseBody(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
