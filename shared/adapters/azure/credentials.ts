/**
 * Azure identities for the product: the managed identity (or developer login) in production, and a
 * fixed bearer token for the simulator, which cannot verify Entra ID tokens.
 */
import type { AccessToken, TokenCredential } from '@azure/core-auth';
import { DefaultAzureCredential } from '@azure/identity';

export type AzureCredential = TokenCredential;

/** DefaultAzureCredential, pinned to a user-assigned managed identity when `clientId` is given. */
export function createAzureCredential(clientId?: string): AzureCredential {
  return clientId === undefined
    ? new DefaultAzureCredential()
    : new DefaultAzureCredential({ managedIdentityClientId: clientId });
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
