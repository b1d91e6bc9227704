/**
 * Azure identities for the product: the managed identity (or the operator's `az login`) through
 * DefaultAzureCredential, and a fixed bearer token for the simulator, which cannot verify Entra ID tokens.
 * A credential that cannot give a token says what to do first (`az login`, AZURE_CLIENT_ID), then what
 * each source answered, and gives up within CREDENTIAL_DEADLINE_MS however its sources behave.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/core-auth';

import { formatDuration } from '../../domain/duration-text.js';
import { messageOf, TerminalError, TransientError } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';

export type AzureCredential = TokenCredential;

/**
 * How long one token request may take. Every source answers at once when it is missing (no variables,
 * no CLI on PATH, the managed identity endpoint probed for 1 s); only a source that hangs reaches this.
 */
export const CREDENTIAL_DEADLINE_MS = 10_000;

/** What the operator does when no source gives a token; first in every message, so it is never cut. */
export const NO_CREDENTIAL_FIX =
  'run `az login` (and `az account set --subscription <id>`) on your machine; in Azure, give the app a ' +
  'user-assigned managed identity and set AZURE_CLIENT_ID to its client id';

/** DefaultAzureCredential, pinned to a user-assigned managed identity when `clientId` is given. */
export function createAzureCredential(
  clientId?: string,
  options: Pick<ExplainOptions, 'deadlineMs'> = {},
): AzureCredential {
  const credential = lazyDefaultCredential(clientId);
  return explainCredentialFailures(credential, {
    ...options,
    ...definedOnly({ clientId }),
  });
}

/**
 * DefaultAzureCredential, its SDK loaded on the first token request: a command that never asks Azure for
 * a token (help, a simulator run) does not pay for loading @azure/identity.
 */
function lazyDefaultCredential(clientId: string | undefined): TokenCredential {
  let credential: Promise<TokenCredential> | undefined;
  return {
    async getToken(scopes: string | string[], tokenOptions?: GetTokenOptions): Promise<AccessToken | null> {
      credential ??= import('@azure/identity').then(({ DefaultAzureCredential }) =>
        clientId === undefined
          ? new DefaultAzureCredential()
          : new DefaultAzureCredential({ managedIdentityClientId: clientId }),
      );
      credential.catch(() => (credential = undefined));
      return (await credential).getToken(scopes, tokenOptions);
    },
  };
}

export interface ExplainOptions {
  /** The AZURE_CLIENT_ID in use, named when the managed identity is not found. */
  readonly clientId?: string;
  readonly deadlineMs?: number;
}

/**
 * Wraps a credential so that a failure is a domain error that names the fix: TerminalError when no
 * source can give a token or one refused (retrying changes nothing), TransientError when the sources
 * did not answer within the deadline. The token itself never appears in a message.
 */
export function explainCredentialFailures(
  credential: TokenCredential,
  options: ExplainOptions = {},
): TokenCredential {
  const deadlineMs = options.deadlineMs ?? CREDENTIAL_DEADLINE_MS;
  return {
    async getToken(scopes: string | string[], getOptions?: GetTokenOptions): Promise<AccessToken | null> {
      const scope = Array.isArray(scopes) ? scopes.join(' ') : scopes;
      let timer: NodeJS.Timeout | undefined;
      const controller = new AbortController();
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(
            new TransientError(
              'AzureCredentialTimeout',
              `getting an Azure token for ${scope}: no credential source answered within ` +
                `${formatDuration(deadlineMs / 1000)}; ${NO_CREDENTIAL_FIX}`,
            ),
          );
        }, deadlineMs);
      });
      const caller = getOptions?.abortSignal;
      if (caller?.aborted === true) controller.abort();
      caller?.addEventListener('abort', () => controller.abort(), { once: true });
      try {
        return await Promise.race([
          credential.getToken(scopes, { ...getOptions, abortSignal: controller.signal }),
          deadline,
        ]);
      } catch (error) {
        if (error instanceof TransientError && error.code === 'AzureCredentialTimeout') throw error;
        throw explainCredentialError(error, scope, options.clientId);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The sources DefaultAzureCredential tried, each in a few words (its own messages run to paragraphs). */
function triedSources(error: unknown): string[] {
  const errors = (error as { errors?: unknown }).errors;
  const list = Array.isArray(errors) ? errors : [error];
  return list.map((item) => {
    const message = messageOf(item);
    return firstSentence(message);
  });
}

function firstSentence(message: string): string {
  const flat = message.replaceAll(/\s+/g, ' ').trim();
  const end = flat.search(/\.(\s|$)/);
  const sentence = end === -1 ? flat : flat.slice(0, end);
  return sentence.length > 140 ? `${sentence.slice(0, 139)}…` : sentence;
}

/** Maps what @azure/identity throws to a domain error whose message starts with the fix. */
export function explainCredentialError(error: unknown, scope: string, clientId?: string): TerminalError {
  const name = error instanceof Error ? error.name : '';
  const message = messageOf(error);
  const action = `getting an Azure token for ${scope}`;
  if (
    clientId !== undefined &&
    /identity not found|not assigned|unable to load the proper managed identity/i.test(message)
  ) {
    return new TerminalError(
      'ManagedIdentityNotFound',
      `${action}: AZURE_CLIENT_ID ${clientId} is not a managed identity of this machine or app: set it to the ` +
        'client id (not the object id) of the user-assigned identity assigned to it ' +
        '(`az identity show -g <group> -n <name> --query clientId`), or unset it to use `az login`',
      { cause: error },
    );
  }
  if (name === 'AggregateAuthenticationError' || name === 'CredentialUnavailableError') {
    return new TerminalError(
      'AzureCredentialUnavailable',
      `${action}: no Azure credential is available: ${NO_CREDENTIAL_FIX}. Tried: ${triedSources(error).join('; ')}`,
      { cause: error },
    );
  }
  if (name === 'AuthenticationError' || name === 'AuthenticationRequiredError') {
    return new TerminalError(
      'AzureAuthenticationFailed',
      `${action}: the credential was refused: run \`az login\` again (an expired or wrong-tenant login), or ` +
        `check AZURE_CLIENT_ID and the identity's tenant. Azure said: ${firstSentence(message)}`,
      { cause: error },
    );
  }
  return new TerminalError(
    'AzureCredentialFailed',
    `${action}: ${firstSentence(message) || 'the credential failed'}; ${NO_CREDENTIAL_FIX}`,
    { cause: error },
  );
}

/** A credential that always answers the same token (the simulator's). Expires an hour after each call. */
export function createStaticCredential(token: string): AzureCredential {
  return {
    getToken(): Promise<AccessToken> {
      return Promise.resolve({ token, expiresOnTimestamp: Date.now() + 3_600_000 });
    },
  };
}

/** A bearer-token provider for an Entra ID protected API (AKS-style API servers), cached by the credential. */
export function entraTokenProvider(credential: AzureCredential, scope: string): () => Promise<string> {
  return async () => {
    const token = await credential.getToken(scope);
    if (token === null)
      throw new Error(`getting an Entra ID token for ${scope}: the credential returned none`);
    return token.token;
  };
}
