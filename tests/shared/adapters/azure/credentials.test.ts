// A credential that cannot give a token says what to do first and gives up within its deadline: with
// stand-in credentials, and with the real DefaultAzureCredential on a machine with no source configured
// (no variables, no az/azd/pwsh on PATH, a managed identity endpoint on 127.0.0.1 that knows no identity
// or never answers).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/core-auth';
import {
  AggregateAuthenticationError,
  AuthenticationError,
  CredentialUnavailableError,
} from '@azure/identity';

import {
  createAzureCredential,
  explainCredentialFailures,
  NO_CREDENTIAL_FIX,
} from '../../../../shared/adapters/azure/credentials.js';
import { TerminalError, TransientError } from '../../../../shared/domain/errors.js';

const ARM = 'https://management.azure.com/.default';

function failing(error: unknown): TokenCredential {
  return { getToken: () => Promise.reject(error instanceof Error ? error : new Error(String(error))) };
}

async function rejection(credential: TokenCredential, options?: GetTokenOptions): Promise<Error> {
  try {
    await credential.getToken(ARM, options);
  } catch (error) {
    assert.ok(error instanceof Error);
    return error;
  }
  assert.fail('expected getToken to fail');
}

void describe('explainCredentialFailures', () => {
  void it('passes a token through', async () => {
    const token: AccessToken = { token: 't', expiresOnTimestamp: 1 };
    const credential = explainCredentialFailures({ getToken: () => Promise.resolve(token) });
    assert.deepEqual(await credential.getToken(ARM), token);
  });

  void it('no source available: terminal, the fix first, then what each source said', async () => {
    const error = await rejection(
      explainCredentialFailures(
        failing(
          new AggregateAuthenticationError(
            [
              new CredentialUnavailableError(
                'EnvironmentCredential is unavailable. No underlying credential could be used. To troubleshoot, visit https://aka.ms/x.',
              ),
              new CredentialUnavailableError(
                'Azure CLI could not be found. Please visit https://aka.ms/azure-cli for installation instructions and then, once installed, authenticate to your Azure account using az login.',
              ),
            ],
            'ChainedTokenCredential authentication failed.',
          ),
        ),
      ),
    );
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'AzureCredentialUnavailable');
    assert.equal(
      error.message,
      `getting an Azure token for ${ARM}: no Azure credential is available: ${NO_CREDENTIAL_FIX}. ` +
        'Tried: EnvironmentCredential is unavailable; Azure CLI could not be found',
    );
  });

  void it('a source that refused: terminal, log in again', async () => {
    const refused = new AuthenticationError(400, {
      error: 'invalid_grant',
      error_description: 'AADSTS700082: The refresh token has expired due to inactivity.',
    });
    const error = await rejection(explainCredentialFailures(failing(refused)));
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'AzureAuthenticationFailed');
    assert.match(error.message, /the credential was refused: run `az login` again/);
    assert.match(error.message, /AADSTS700082/);
  });

  void it('a wrong AZURE_CLIENT_ID: names it and where the right one comes from', async () => {
    const error = await rejection(
      explainCredentialFailures(
        failing(new CredentialUnavailableError('ManagedIdentityCredential: Identity not found')),
        { clientId: '0a1b2c3d-0000-0000-0000-000000000000' },
      ),
    );
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'ManagedIdentityNotFound');
    assert.match(
      error.message,
      /AZURE_CLIENT_ID 0a1b2c3d-0000-0000-0000-000000000000 is not a managed identity/,
    );
    assert.match(error.message, /az identity show .* --query clientId/);
  });

  void it('a source that never answers: transient after the deadline, and the request is aborted', async () => {
    let signal: GetTokenOptions['abortSignal'];
    const hanging: TokenCredential = {
      getToken: (_scopes, options) => {
        signal = options?.abortSignal;
        return new Promise<never>(() => undefined);
      },
    };
    const error = await rejection(explainCredentialFailures(hanging, { deadlineMs: 50 }));
    assert.ok(error instanceof TransientError);
    assert.equal(error.code, 'AzureCredentialTimeout');
    assert.match(error.message, /no credential source answered within 0s; run `az login`/);
    assert.equal(signal?.aborted, true);
  });

  void it("forwards the caller's abort", async () => {
    let signal: GetTokenOptions['abortSignal'];
    const credential = explainCredentialFailures({
      getToken: (_scopes, options) => {
        signal = options?.abortSignal;
        return Promise.resolve({ token: 't', expiresOnTimestamp: 1 });
      },
    });
    const controller = new AbortController();
    await credential.getToken(ARM, { abortSignal: controller.signal });
    controller.abort();
    assert.equal(signal?.aborted, true);
  });
});

/**
 * A stand-in managed identity endpoint on 127.0.0.1 that answers like Azure's for a machine without that
 * identity, or (`hang`) accepts requests and never answers. One for the whole file: the managed identity
 * client remembers the endpoint it first found.
 */
async function identityEndpoint(): Promise<{
  url: string;
  requests: string[];
  hang: boolean;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  const state = { requests: [] as string[], hang: false };
  const server: Server = createServer((request, response) => {
    state.requests.push(request.url ?? '');
    if (state.hang) return;
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'invalid_request', error_description: 'Identity not found' }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return state.requests;
    },
    get hang() {
      return state.hang;
    },
    set hang(value: boolean) {
      state.hang = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

void describe('createAzureCredential on a machine with no credential', () => {
  const saved = { ...process.env };
  let home: string;
  let endpoint: Awaited<ReturnType<typeof identityEndpoint>>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'vmssp-credential-'));
    endpoint = await identityEndpoint();
    // DefaultAzureCredential reads the environment when it is created: this file runs in its own process.
    for (const key of Object.keys(process.env)) {
      if (/^(AZURE_|IDENTITY_|MSI_|IMDS_)/.test(key)) delete process.env[key];
    }
    process.env['PATH'] = home;
    process.env['HOME'] = home;
    process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = endpoint.url;
  });

  after(async () => {
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, saved);
    await endpoint.close();
    await rm(home, { recursive: true, force: true });
  });

  void it('names the fix: az login, or AZURE_CLIENT_ID', async () => {
    const asked = endpoint.requests.length;
    const error = await rejection(createAzureCredential());
    assert.ok(error instanceof TerminalError, String(error));
    assert.equal(error.code, 'AzureCredentialUnavailable');
    assert.ok(
      error.message.startsWith(
        `getting an Azure token for ${ARM}: no Azure credential is available: run \`az login\``,
      ),
    );
    assert.match(
      error.message,
      /Tried: .*EnvironmentCredential.*ManagedIdentityCredential.*Azure CLI could not be found/,
    );
    assert.ok(endpoint.requests.length > asked, 'the managed identity endpoint was asked');
  });

  void it('with AZURE_CLIENT_ID of no assigned identity: names the client id', async () => {
    const error = await rejection(createAzureCredential('0a1b2c3d-0000-0000-0000-000000000000'));
    assert.ok(error instanceof TerminalError, String(error));
    assert.match(
      error.message,
      /AZURE_CLIENT_ID 0a1b2c3d-0000-0000-0000-000000000000 is not a managed identity/,
    );
  });

  void it('a managed identity endpoint that never answers: given up at the deadline', async () => {
    endpoint.hang = true;
    const asked = endpoint.requests.length;
    const error = await rejection(createAzureCredential(undefined, { deadlineMs: 500 }));
    assert.ok(error instanceof TransientError, String(error));
    assert.equal(error.code, 'AzureCredentialTimeout');
    assert.ok(endpoint.requests.length > asked, 'the managed identity endpoint was asked');
  });
});
