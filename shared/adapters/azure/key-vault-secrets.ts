/**
 * Reads secrets (cluster service-account tokens, CA bundles) from Key Vault with the app's identity.
 * The value is returned to the caller and never logged; errors name the secret, not its value.
 */
import { SecretClient } from '@azure/keyvault-secrets';

import { NotFoundError, TerminalError, TransientError } from '../../domain/errors.js';
import type { AzureCredential } from './credentials.js';

export class KeyVaultSecretReader {
  readonly #credential: AzureCredential;
  readonly #clients = new Map<string, SecretClient>();

  constructor(credential: AzureCredential) {
    this.#credential = credential;
  }

  async read(vaultUrl: string, name: string, version?: string): Promise<string> {
    let client = this.#clients.get(vaultUrl);
    if (client === undefined) {
      client = new SecretClient(vaultUrl, this.#credential);
      this.#clients.set(vaultUrl, client);
    }
    try {
      const secret = await client.getSecret(name, version === undefined ? {} : { version });
      if (secret.value === undefined) {
        throw new TerminalError('SecretEmpty', `reading secret ${name} from ${vaultUrl}: it has no value`);
      }
      return secret.value;
    } catch (error) {
      if (error instanceof TerminalError) throw error;
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 404) {
        throw new NotFoundError(
          'SecretNotFound',
          `reading secret ${name} from ${vaultUrl}: it does not exist`,
        );
      }
      if (status === 401 || status === 403) {
        throw new TerminalError(
          'SecretAccessDenied',
          `reading secret ${name} from ${vaultUrl}: access denied; grant the app's identity the ` +
            `Key Vault Secrets User role on the vault`,
        );
      }
      throw new TransientError(
        'SecretReadFailed',
        `reading secret ${name} from ${vaultUrl}: the vault did not answer`,
      );
    }
  }
}
