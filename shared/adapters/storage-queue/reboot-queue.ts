/**
 * The reboot-notice queue over @azure/storage-queue: the HTTP and Event Grid triggers enqueue
 * normalized notices here, the queue trigger applies them; the host moves a message that keeps
 * failing to `<queue>-poison` (host.json `queues.maxDequeueCount`).
 */
import type { QueueClient } from '@azure/storage-queue';
import { QueueServiceClient } from '@azure/storage-queue';

import { messageOf, TransientError } from '../../domain/errors.js';
import type { QueuedNotice, RebootNoticeSender } from '../../ports/reboot-notice-queue.js';
import type { QueueConnection } from './host-connection.js';

export { hostQueueConnection, type QueueConnection } from './host-connection.js';

export interface ReceivedMessage {
  readonly messageId: string;
  readonly popReceipt: string;
  readonly dequeueCount: number;
  readonly text: string;
}

/** The name of the queue the Functions host moves poison messages to. */
export function poisonQueueName(queueName: string): string {
  return `${queueName}-poison`;
}

export class StorageRebootQueue implements RebootNoticeSender {
  readonly queue: QueueClient;
  readonly poison: QueueClient;
  private ensured: Promise<void> | undefined;

  constructor(connection: QueueConnection, queueName: string) {
    const service =
      'connectionString' in connection
        ? QueueServiceClient.fromConnectionString(connection.connectionString)
        : new QueueServiceClient(connection.queueServiceUrl, connection.credential);
    this.queue = service.getQueueClient(queueName);
    this.poison = service.getQueueClient(poisonQueueName(queueName));
  }

  /**
   * Enqueues a notice as plain JSON text. The host reads it with `messageEncoding: "none"`, the same
   * setting that lets it read Event Grid's own (plain JSON) deliveries.
   */
  async send(notice: QueuedNotice): Promise<void> {
    await this.ensureQueues();
    try {
      await this.queue.sendMessage(JSON.stringify(notice));
    } catch (error) {
      throw new TransientError(
        'QueueSendFailed',
        `enqueueing reboot notice ${notice.eventId} to ${this.queue.name}: ${messageOf(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /** Receives up to `max` messages, hidden for `visibilitySeconds` (what the host's queue listener does). */
  async receive(max: number, visibilitySeconds: number): Promise<ReceivedMessage[]> {
    await this.ensureQueues();
    const response = await this.queue.receiveMessages({
      numberOfMessages: max,
      visibilityTimeout: visibilitySeconds,
    });
    return response.receivedMessageItems.map((item) => ({
      messageId: item.messageId,
      popReceipt: item.popReceipt,
      dequeueCount: item.dequeueCount,
      text: item.messageText,
    }));
  }

  async delete(message: ReceivedMessage): Promise<void> {
    await this.queue.deleteMessage(message.messageId, message.popReceipt);
  }

  /**
   * Makes a message whose handling failed visible again after `delaySeconds` (the host does this with
   * `queues.visibilityTimeout`, default 0), keeping its dequeue count for the poison decision.
   */
  async releaseForRetry(message: ReceivedMessage, delaySeconds = 0): Promise<ReceivedMessage> {
    const response = await this.queue.updateMessage(
      message.messageId,
      message.popReceipt,
      undefined,
      delaySeconds,
    );
    return { ...message, popReceipt: response.popReceipt ?? message.popReceipt };
  }

  /** Moves a message to the poison queue, as the host does after `maxDequeueCount` failures. */
  async moveToPoison(message: ReceivedMessage): Promise<void> {
    await this.ensureQueues();
    await this.poison.sendMessage(message.text);
    await this.delete(message);
  }

  /** Texts of the messages in the poison queue (peeked, not removed). */
  async peekPoison(max = 32): Promise<string[]> {
    await this.ensureQueues();
    const response = await this.poison.peekMessages({ numberOfMessages: max });
    return response.peekedMessageItems.map((item) => item.messageText);
  }

  private ensureQueues(): Promise<void> {
    this.ensured ??= Promise.all([this.queue.createIfNotExists(), this.poison.createIfNotExists()]).then(
      () => undefined,
      (error: unknown) => {
        this.ensured = undefined;
        throw new TransientError(
          'QueueUnavailable',
          `creating queue ${this.queue.name}: ${messageOf(error)}`,
          {
            cause: error,
          },
        );
      },
    );
    return this.ensured;
  }
}
