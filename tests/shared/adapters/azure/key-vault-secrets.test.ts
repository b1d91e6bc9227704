// Key Vault failures name what to change, and an unreachable vault is reported within the reader's
// bounds: a real SecretClient against a 127.0.0.1 port that refuses or never answers, and the mapping
// of the vault's refusals (network rule, role, access policy, tenant) from the errors it raises.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { RestError } from '@azure/core-rest-pipeline';

import { createStaticCredential } from '../../../../shared/adapters/azure/credentials.js';
import { keyVaultError, KeyVaultSecretReader } from '../../../../shared/adapters/azure/key-vault-secrets.js';
import { NotFoundError, TerminalError, TransientError } from '../../../../shared/domain/errors.js';

const ACTION = 'reading secret prod-token from https://kv-vmssp.vault.azure.net';

async function readFailure(reader: KeyVaultSecretReader, vaultUrl: string): Promise<Error> {
  try {
    await reader.read(vaultUrl, 'prod-token');
  } catch (error) {
    assert.ok(error instanceof Error);
    return error;
  }
  assert.fail('expected the read to fail');
}

/** A TCP port that accepts connections and never says a word (a firewall that drops, a stuck proxy). */
async function silentPort(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  return {
    port: address.port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on. */
async function refusingPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

void describe('KeyVaultSecretReader against a vault that cannot be reached', () => {
  let silent: Awaited<ReturnType<typeof silentPort>>;
  before(async () => {
    silent = await silentPort();
  });
  after(async () => {
    await silent.close();
  });

  void it('a refused connection: terminal, the network rules and the URL to check', async () => {
    const url = `https://127.0.0.1:${await refusingPort()}`;
    const error = await readFailure(new KeyVaultSecretReader(createStaticCredential('t')), url);
    assert.ok(error instanceof TerminalError, String(error));
    assert.equal(error.code, 'KeyVaultUnreachable');
    assert.match(
      error.message,
      new RegExp(
        `^reading secret prod-token from ${url}: the vault did not answer \\(ECONNREFUSED after \\d+s\\)`,
      ),
    );
    assert.match(
      error.message,
      /check the vault's Networking settings let this client in .* and that the vault URL is right/,
    );
  });

  void it('a vault that never answers: given up within the reader bounds, not the system connect timeout', async () => {
    const url = `https://127.0.0.1:${silent.port}`;
    const error = await readFailure(new KeyVaultSecretReader(createStaticCredential('t')), url);
    assert.ok(error instanceof TerminalError, String(error));
    assert.equal(error.code, 'KeyVaultUnreachable');
    assert.match(error.message, /the vault did not answer \(no answer after \d+s\)/);
    assert.ok(silent.connections() >= 1);
  });

  void it('the bounds are the reader options', async () => {
    const url = `https://127.0.0.1:${silent.port}`;
    const error = await readFailure(
      new KeyVaultSecretReader(createStaticCredential('t'), { tryTimeoutMs: 100, deadlineMs: 300 }),
      url,
    );
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'KeyVaultUnreachable');
  });
});

function restError(statusCode: number, message: string, innerCode?: string): RestError {
  const error = new RestError(message, { statusCode, code: statusCode === 403 ? 'Forbidden' : 'Error' });
  error.details = {
    error: {
      code: statusCode === 403 ? 'Forbidden' : 'Error',
      message,
      ...(innerCode === undefined ? {} : { innererror: { code: innerCode } }),
    },
  };
  return error;
}

void describe('keyVaultError', () => {
  void it('the firewall: the network rule, with the address the vault saw', () => {
    const error = keyVaultError(
      restError(
        403,
        'Client address is not authorized and caller is not a trusted service.\r\nClient address: 203.0.113.7\r\nCaller: appid=…;oid=…\r\nVault: kv-vmssp;location=westeurope',
        'ForbiddenByFirewall',
      ),
      ACTION,
      200,
    );
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'KeyVaultNetworkRule');
    assert.match(
      error.message,
      /^reading secret prod-token from https:\/\/kv-vmssp\.vault\.azure\.net: the vault's network rules refuse this client \(address 203\.0\.113\.7\)/,
    );
  });

  void it('no role: the role, the principal and the command', () => {
    const oid = '9f8e7d6c-5b4a-3f2e-1d0c-ba9876543210';
    const error = keyVaultError(
      restError(
        403,
        `Caller is not authorized to perform action on resource. Caller: appid=04b07795-8ddb-461a-bbee-02f9e1bf7b46;oid=${oid};iss=https://sts.windows.net/t/ Action: 'Microsoft.KeyVault/vaults/secrets/getSecret/action'`,
        'ForbiddenByRbac',
      ),
      ACTION,
      200,
    );
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'KeyVaultAccessDenied');
    assert.match(
      error.message,
      new RegExp(`grant the identity with object id ${oid} the Key Vault Secrets User role on the vault`),
    );
    assert.match(
      error.message,
      new RegExp(`az role assignment create --role "Key Vault Secrets User" --assignee-object-id ${oid}`),
    );
  });

  void it('access policies instead of RBAC', () => {
    const error = keyVaultError(
      restError(
        403,
        'The user, group or application does not have secrets get permission on key vault',
        'ForbiddenByPolicy',
      ),
      ACTION,
      200,
    );
    assert.ok(error instanceof TerminalError);
    assert.match(
      error.message,
      /access denied by the vault's access policies: give the identity this runs as the Get permission on secrets/,
    );
  });

  void it('a token of another tenant', () => {
    const error = keyVaultError(restError(401, 'AKV10032: Invalid issuer.'), ACTION, 200);
    assert.ok(error instanceof TerminalError);
    assert.match(error.message, /az login --tenant/);
  });

  void it('a missing secret: not found, and how to create it', () => {
    const error = keyVaultError(
      restError(404, 'A secret with (name/id) prod-token was not found in this key vault.'),
      ACTION,
      200,
    );
    assert.ok(error instanceof NotFoundError);
    assert.match(error.message, /it does not exist; create it/);
  });

  void it('throttling and server errors stay transient', () => {
    for (const status of [429, 500, 503]) {
      const error = keyVaultError(restError(status, 'busy'), ACTION, 200);
      assert.ok(error instanceof TransientError, String(status));
    }
  });

  void it('a name that does not resolve: the vault name or its private DNS zone', () => {
    const error = keyVaultError(
      Object.assign(
        new RestError('getaddrinfo ENOTFOUND kv-typo.vault.azure.net', { code: 'REQUEST_SEND_ERROR' }),
        {
          cause: Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }),
        },
      ),
      ACTION,
      200,
    );
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'KeyVaultNotFound');
    assert.match(
      error.message,
      /host name does not resolve \(ENOTFOUND\): check the vault name in keyVaultSecretUri/,
    );
  });

  void it("the credential's own explanation is kept, with the secret it was for", () => {
    const cause = new TerminalError(
      'AzureCredentialUnavailable',
      'getting an Azure token for https://vault.azure.net/.default: no Azure credential is available: run `az login`',
    );
    const error = keyVaultError(cause, ACTION, 10);
    assert.ok(error instanceof TerminalError);
    assert.equal(error.code, 'AzureCredentialUnavailable');
    assert.equal(error.message, `${ACTION}: ${cause.message}`);
  });
});
