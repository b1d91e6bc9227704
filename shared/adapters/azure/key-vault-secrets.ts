/**
 * Reads secrets (cluster service-account tokens, CA bundles) from Key Vault with the app's identity.
 * The value is returned to the caller and never logged; errors name the secret, not its value, and say
 * what to change: the identity's role, the vault's network rules, the URL, or the login.
 *
 * A vault that does not answer is reported within VAULT_DEADLINE_MS: a private endpoint or firewall that
 * drops packets otherwise costs the operating system's connect timeout on every retry (minutes).
 */
import { SecretClient } from '@azure/keyvault-secrets';

import { formatDuration } from '../../domain/duration-text.js';
import { isRefreshError, NotFoundError, TerminalError, TransientError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';
import type { AzureCredential } from './credentials.js';

/** The whole read, retries included. */
export const VAULT_DEADLINE_MS = 10_000;
/** One attempt: Key Vault answers in well under a second when it is reachable. */
const VAULT_TRY_TIMEOUT_MS = 5_000;
const VAULT_RETRY = { maxRetries: 2, retryDelayInMs: 500, maxRetryDelayInMs: 2_000 } as const;

/** Transport failures: the vault could not be reached at all. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'REQUEST_SEND_ERROR',
]);

const NETWORK_RULE_FIX =
  "check the vault's Networking settings let this client in (public access, firewall, or a private " +
  'endpoint reachable from here: the function app through its virtual network, your machine through a VPN ' +
  'or an allowed address)';

export interface KeyVaultSecretReaderOptions {
  /** Total time for one read (tests shorten it). */
  readonly deadlineMs?: number;
  readonly tryTimeoutMs?: number;
}

export class KeyVaultSecretReader {
  readonly #credential: AzureCredential;
  readonly #clients = new Map<string, SecretClient>();
  readonly #deadlineMs: number;
  readonly #tryTimeoutMs: number;

  constructor(credential: AzureCredential, options: KeyVaultSecretReaderOptions = {}) {
    this.#credential = credential;
    this.#deadlineMs = options.deadlineMs ?? VAULT_DEADLINE_MS;
    this.#tryTimeoutMs = options.tryTimeoutMs ?? VAULT_TRY_TIMEOUT_MS;
  }

  async read(vaultUrl: string, name: string, version?: string): Promise<string> {
    let client = this.#clients.get(vaultUrl);
    if (client === undefined) {
      client = new SecretClient(vaultUrl, this.#credential, { retryOptions: VAULT_RETRY });
      this.#clients.set(vaultUrl, client);
    }
    const action = `reading secret ${name} from ${vaultUrl}`;
    const started = Date.now();
    let secret;
    try {
      secret = await client.getSecret(name, {
        ...definedOnly({ version }),
        abortSignal: AbortSignal.timeout(this.#deadlineMs),
        requestOptions: { timeout: this.#tryTimeoutMs },
      });
    } catch (error) {
      throw keyVaultError(error, action, Date.now() - started);
    }
    if (secret.value === undefined) {
      throw new TerminalError('SecretEmpty', `${action}: it has no value`);
    }
    return secret.value;
  }
}

/** The parts of a RestError we read, duck-typed (core-rest-pipeline's or ts-http-runtime's). */
interface RestErrorLike {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly statusCode?: unknown;
  readonly message?: unknown;
  readonly details?: unknown;
  readonly cause?: unknown;
}

/** Maps what SecretClient throws to a domain error whose message says what to do. Exported for tests. */
export function keyVaultError(error: unknown, action: string, elapsedMs: number): Error {
  if (isRefreshError(error)) {
    // The credential's own explanation (az login, AZURE_CLIENT_ID), with the secret it was for.
    return error.kind === 'transient'
      ? new TransientError(error.code, `${action}: ${error.message}`, { cause: error })
      : new TerminalError(error.code, `${action}: ${error.message}`, { cause: error });
  }
  const rest = (typeof error === 'object' && error !== null ? error : {}) as RestErrorLike;
  const status = typeof rest.statusCode === 'number' ? rest.statusCode : undefined;
  const message = typeof rest.message === 'string' ? rest.message : String(error);
  if (status === undefined) return unreachable(error, rest, message, action, elapsedMs);
  const inner = innerCode(rest);
  if (status === 404) {
    return new NotFoundError(
      'SecretNotFound',
      `${action}: it does not exist; create it (infra/README.md, step 5) or fix the name in keyVaultSecretUri`,
      { cause: error },
    );
  }
  if (
    status === 403 &&
    (inner === 'ForbiddenByFirewall' || /client address is not authorized/i.test(message))
  ) {
    const address = /Client address:\s*([0-9a-fA-F.:]+)/.exec(message)?.[1];
    return new TerminalError(
      'KeyVaultNetworkRule',
      `${action}: the vault's network rules refuse this client${address === undefined ? '' : ` (address ${address})`}: ` +
        NETWORK_RULE_FIX,
      { cause: error },
    );
  }
  if (status === 403) {
    const caller = /\boid=([0-9a-fA-F-]{36})/.exec(message)?.[1];
    const who = caller === undefined ? 'the identity this runs as' : `the identity with object id ${caller}`;
    const policies = inner === 'ForbiddenByPolicy' || /access policy/i.test(message);
    return new TerminalError(
      'KeyVaultAccessDenied',
      policies
        ? `${action}: access denied by the vault's access policies: give ${who} the Get permission on secrets, or ` +
            'switch the vault to Azure RBAC and grant the Key Vault Secrets User role'
        : `${action}: access denied: grant ${who} the Key Vault Secrets User role on the vault ` +
            `(az role assignment create --role "Key Vault Secrets User" --assignee-object-id ${caller ?? '<object id>'} ` +
            '--scope <vault resource id>); new role assignments take a few minutes to apply',
      { cause: error },
    );
  }
  if (status === 401) {
    return new TerminalError(
      'KeyVaultUnauthenticated',
      `${action}: the vault did not accept the token (HTTP 401): the vault may be in another tenant than ` +
        "your login; run `az login --tenant <the vault's tenant>`",
      { cause: error },
    );
  }
  if (status === 429 || status >= 500) {
    return new TransientError(
      'SecretReadFailed',
      `${action}: the vault is busy or failing (HTTP ${status}) after ${VAULT_RETRY.maxRetries + 1} tries; try again later`,
      { cause: error },
    );
  }
  return new TerminalError('SecretReadRefused', `${action}: the vault refused the request (HTTP ${status})`, {
    cause: error,
  });
}

function unreachable(
  error: unknown,
  rest: RestErrorLike,
  message: string,
  action: string,
  elapsedMs: number,
): TerminalError {
  const code = transportCode(rest);
  const waited = formatDuration(Math.max(1, elapsedMs / 1000));
  if (code === 'ENOTFOUND') {
    return new TerminalError(
      'KeyVaultNotFound',
      `${action}: the vault's host name does not resolve (ENOTFOUND): check the vault name in keyVaultSecretUri, ` +
        'or the private DNS zone (privatelink.vaultcore.azure.net) when the vault has a private endpoint',
      { cause: error },
    );
  }
  const aborted = rest.name === 'AbortError' || /aborted|timed? ?out/i.test(message);
  if (aborted || (code !== undefined && UNREACHABLE_CODES.has(code))) {
    // The client already retried; a vault that stays silent this long is almost always a network rule
    // (or a wrong URL), which no later retry fixes.
    return new TerminalError(
      'KeyVaultUnreachable',
      `${action}: the vault did not answer (${aborted ? 'no answer' : code} after ${waited}): ` +
        `${NETWORK_RULE_FIX}, and that the vault URL is right`,
      { cause: error },
    );
  }
  if (code !== undefined && /^(?:ERR_TLS_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_|ERR_SSL_)/.test(code)) {
    return new TerminalError(
      'KeyVaultTlsFailed',
      `${action}: the vault's certificate was not accepted (${code}): a proxy that inspects TLS needs its CA in ` +
        'NODE_EXTRA_CA_CERTS',
      { cause: error },
    );
  }
  const first = message.replaceAll(/\s+/g, ' ').trim().slice(0, 200);
  return new TerminalError('SecretReadFailed', `${action}: ${first || 'the read failed'}`, { cause: error });
}

/** The transport error code, from the error or its cause (undici and core-rest-pipeline nest it). */
function transportCode(rest: RestErrorLike): string | undefined {
  for (let current: unknown = rest, depth = 0; current !== undefined && depth < 4; depth++) {
    const code = (current as RestErrorLike).code;
    if (typeof code === 'string' && code !== '' && code !== 'REQUEST_SEND_ERROR') return code;
    current = (current as RestErrorLike).cause;
  }
  return typeof rest.code === 'string' ? rest.code : undefined;
}

/** `{ error: { code, innererror: { code } } }`: the innermost code (ForbiddenByFirewall, ForbiddenByRbac). */
function innerCode(rest: RestErrorLike): string | undefined {
  let current = (rest.details as { error?: unknown } | undefined)?.error as
    { code?: unknown; innererror?: unknown } | undefined;
  let code: string | undefined;
  for (let depth = 0; current !== undefined && depth < 4; depth++) {
    if (typeof current.code === 'string') code = current.code;
    current = current.innererror as { code?: unknown; innererror?: unknown } | undefined;
  }
  return code;
}
