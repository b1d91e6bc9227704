/**
 * Where the reboot-notice queues live, read from the host's settings. Apart from the queue client
 * (reboot-queue.ts) so that deciding whether a queue is configured does not load the storage SDK.
 */
import type { TokenCredential } from '@azure/core-auth';

/** Where the queues live: a connection string (Azurite, keys) or an account URL with an identity. */
export type QueueConnection =
  | { readonly connectionString: string }
  | { readonly queueServiceUrl: string; readonly credential: TokenCredential };

/**
 * The queue connection of the Functions host's own storage (`AzureWebJobsStorage`): a connection
 * string locally (Azurite), or the identity-based form in Azure (`AzureWebJobsStorage__queueServiceUri`
 * or `__accountName`, with the managed identity). Undefined when neither is set.
 */
export function hostQueueConnection(
  env: Readonly<Record<string, string | undefined>>,
  credential: () => TokenCredential,
): QueueConnection | undefined {
  const connectionString = env['AzureWebJobsStorage'];
  if (connectionString !== undefined && connectionString.trim() !== '') {
    return {
      connectionString:
        connectionString.trim() === 'UseDevelopmentStorage=true'
          ? DEVELOPMENT_STORAGE
          : connectionString.trim(),
    };
  }
  const url =
    env['AzureWebJobsStorage__queueServiceUri'] ??
    (env['AzureWebJobsStorage__accountName'] === undefined
      ? undefined
      : `https://${env['AzureWebJobsStorage__accountName']}.queue.core.windows.net`);
  return url === undefined ? undefined : { queueServiceUrl: url, credential: credential() };
}

/** Azurite's well-known development account (the SDK does not expand `UseDevelopmentStorage=true`). */
const DEVELOPMENT_STORAGE =
  'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;' +
  'AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;' +
  'QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;';
