/**
 * The port to the reboot-notice queue: the HTTP and Event Grid triggers enqueue one notice; the queue
 * trigger applies it. Implemented over @azure/storage-queue by shared/adapters/storage-queue.
 */

/** A notice as the application validated it: plain JSON, named by its source event's id. */
export interface QueuedNotice {
  readonly eventId: string;
  readonly [field: string]: unknown;
}

/** `Notice` narrows what a caller sends (the application's validated RebootNotice). */
export interface RebootNoticeSender<Notice extends QueuedNotice = QueuedNotice> {
  /** Enqueues one notice; a failure to reach the queue is a TransientError. */
  send(notice: Notice): Promise<void>;
}
