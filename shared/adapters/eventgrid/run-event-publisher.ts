/**
 * Publishes run events (ports/run-events.ts) to an Event Grid topic as CloudEvents 1.0, through
 * @azure/eventgrid's EventGridPublisherClient with a token credential (the app's managed identity: the
 * Bicep grants it `EventGrid Data Sender` on the topic; no access key anywhere).
 *
 * Delivery is in the background and in order: `publish` appends to a queue and returns; one sender
 * drains the queue a batch at a time, retrying a failed batch with exponential backoff a bounded number
 * of times before it logs the loss and moves on. So a topic that is slow or down never slows or fails a
 * refresh, and a subscriber sees a run's events in the order the run emitted them. Event ids are the
 * run's deterministic ids: a batch re-sent after a lost answer is deduplicated by subscribers.
 */
import type { TokenCredential } from '@azure/core-auth';
import type { EventGridPublisherClient, SendCloudEventInput } from '@azure/eventgrid';

import { messageOf } from '../../domain/errors.js';
import type { RunEvent, RunEventPublisher } from '../../ports/run-events.js';

export interface RunEventPublisherOptions {
  /** The topic's endpoint, e.g. `https://<topic>.<region>-1.eventgrid.azure.net/api/events`. */
  readonly endpoint: string;
  readonly credential: TokenCredential;
  /** PEM of a CA to trust instead of the system's (a local test receiver's self-signed certificate). */
  readonly ca?: string;
  /** Attempts per batch, the first included (default 5). */
  readonly maxAttempts?: number;
  /** Wait before the second attempt, doubled for each next one (default 1 s, at most 30 s). */
  readonly firstDelayMs?: number;
  /** Events per request (Event Grid accepts up to 1 MB per request; ours are small). */
  readonly batchSize?: number;
  /** Where a lost batch is reported (default console.warn). Static message, details as metadata. */
  readonly log?: (message: string, details: Readonly<Record<string, unknown>>) => void;
}

const MAX_DELAY_MS = 30_000;

export class EventGridRunEventPublisher implements RunEventPublisher {
  readonly #options: RunEventPublisherOptions;
  /** Loaded with the first event: a CLI command that publishes nothing never pays for the SDK. */
  #client: Promise<EventGridPublisherClient<'CloudEvent'>> | undefined;
  readonly #queue: RunEvent[] = [];
  readonly #maxAttempts: number;
  readonly #firstDelayMs: number;
  readonly #batchSize: number;
  readonly #log: NonNullable<RunEventPublisherOptions['log']>;
  #draining: Promise<void> | undefined;

  constructor(options: RunEventPublisherOptions) {
    this.#options = options;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.#firstDelayMs = options.firstDelayMs ?? 1000;
    this.#batchSize = Math.max(1, options.batchSize ?? 50);
    this.#log = options.log ?? ((message, details) => console.warn(message, details));
  }

  publish(events: readonly RunEvent[]): void {
    if (events.length === 0) return;
    this.#queue.push(...events);
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  async flush(timeoutMs = 60_000): Promise<void> {
    const draining = this.#draining;
    if (draining === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([draining, timeout]);
    clearTimeout(timer);
  }

  async #drain(): Promise<void> {
    for (;;) {
      const batch = this.#queue.splice(0, this.#batchSize);
      if (batch.length === 0) return;
      await this.#deliver(batch);
    }
  }

  #sdkClient(): Promise<EventGridPublisherClient<'CloudEvent'>> {
    const options = this.#options;
    this.#client ??= import('@azure/eventgrid').then(
      ({ EventGridPublisherClient: Client }) =>
        new Client(options.endpoint, 'CloudEvent', options.credential, {
          ...(options.ca === undefined ? {} : { tlsOptions: { ca: options.ca } }),
          // Our own bounded retries (below) replace the SDK's, which would hold the queue longer.
          retryOptions: { maxRetries: 0 },
          userAgentOptions: { userAgentPrefix: 'vmss-prototype' },
        }),
    );
    return this.#client;
  }

  async #deliver(batch: readonly RunEvent[]): Promise<void> {
    const cloudEvents = batch.map(toCloudEvent);
    for (let attempt = 1; ; attempt++) {
      try {
        await (await this.#sdkClient()).send(cloudEvents);
        return;
      } catch (error) {
        if (attempt >= this.#maxAttempts) {
          this.#log('vmss-prototype: run events not delivered to the Event Grid topic, given up', {
            attempts: attempt,
            ids: batch.map((event) => event.id),
            // The SDK's message names the status; never the request (it carries the bearer token).
            cause: messageOf(error),
          });
          return;
        }
        const delay = Math.min(MAX_DELAY_MS, this.#firstDelayMs * 2 ** (attempt - 1));
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }
}

function toCloudEvent(event: RunEvent): SendCloudEventInput<unknown> {
  return {
    id: event.id,
    type: event.type,
    source: event.source,
    subject: event.subject,
    time: new Date(event.time),
    datacontenttype: 'application/json',
    data: event.data,
  };
}
