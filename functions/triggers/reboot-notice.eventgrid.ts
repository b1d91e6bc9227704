/**
 * Event Grid subscription (webhook delivery to the function): Health Resources, resource-action and
 * our CloudEvents, normalized into RebootNotices and enqueued for the queue trigger to apply. The
 * Functions Event Grid extension answers the subscription validation handshake itself.
 */
import type { InvocationContext } from '@azure/functions';
import azureFunctions from '@azure/functions';

import { deserializeEvent } from '../../shared/adapters/eventgrid/event-envelopes.js';
import type { RejectionReason } from '../../shared/application/reboot-notices.js';
import {
  envelopeOfDecoded,
  normalizeEnvelope,
  resolvePoolTarget,
} from '../../shared/application/reboot-notices.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export type EventGridOutcome =
  | { readonly kind: 'enqueued'; readonly eventId: string }
  | { readonly kind: 'dropped'; readonly reason: RejectionReason; readonly message: string };

/**
 * Never throws for bad input (Event Grid would redeliver it for a day); throws when the queue cannot
 * take the notice, so Event Grid's retry policy delivers it again.
 */
export async function handleRebootEvent(
  event: unknown,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters' | 'notices' | 'scaleSetOfVirtualMachine' | 'now'>,
): Promise<EventGridOutcome> {
  const envelope = envelopeOfDecoded(await deserializeEvent(event));
  const normalized = 'ok' in envelope ? envelope : normalizeEnvelope(envelope, deps.now());
  if (!normalized.ok) {
    context.warn('reboot event dropped', { reason: normalized.reason, message: normalized.message });
    return { kind: 'dropped', reason: normalized.reason, message: normalized.message };
  }
  // A VM outside every configured pool (another subscription or resource group) is dropped here, not
  // queued; the queue trigger checks again, since Event Grid may also deliver to the queue directly.
  const resourceId = normalized.notice.resourceId;
  const target =
    resourceId === undefined
      ? undefined
      : await resolvePoolTarget(
          resourceId,
          deps.clusters,
          normalized.notice.cluster,
          deps.scaleSetOfVirtualMachine,
        );
  if (target !== undefined && !target.ok) {
    context.warn('reboot event dropped', { reason: target.reason, message: target.message });
    return { kind: 'dropped', reason: target.reason, message: target.message };
  }
  await deps.notices.send(normalized.notice);
  context.log('reboot event enqueued', {
    eventId: normalized.notice.eventId,
    source: normalized.notice.source,
  });
  return { kind: 'enqueued', eventId: normalized.notice.eventId };
}

export function registerRebootNoticeEventGrid(): void {
  azureFunctions.app.eventGrid('rebootNoticeEventGrid', {
    handler: async (event: unknown, context: InvocationContext): Promise<void> => {
      await handleRebootEvent(event, context, workerTriggerDependencies());
    },
  });
}
