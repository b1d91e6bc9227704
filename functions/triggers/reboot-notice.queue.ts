/**
 * The one place reboot notices are APPLIED (`%VMSSP_REBOOT_QUEUE%`): decodes a message (plain or base64
 * JSON, one item or an array; our notices, Event Grid or CloudEvents events), maps each notice to its
 * cluster and pool, and signals that pool's debounce. Bad input is logged and dropped; only transient
 * failures throw, so the host retries them and parks the message in `<queue>-poison` after
 * `maxDequeueCount` attempts.
 */
import { randomUUID } from 'node:crypto';

import type { InvocationContext } from '@azure/functions';
import * as df from 'durable-functions';

import { deserializeEvent } from '../../shared/adapters/eventgrid/event-envelopes.js';
import { EVENT, signalInstanceId } from '../../shared/application/orchestration-ids.js';
import type { RebootNotice, RejectionReason } from '../../shared/application/reboot-notices.js';
import {
  decodeQueueMessage,
  envelopeOfDecoded,
  normalizeEnvelope,
  resolvePoolTarget,
} from '../../shared/application/reboot-notices.js';
import type { OrchestrationClient } from '../../shared/application/singleton.js';
import { signalSingleton } from '../../shared/application/singleton.js';
import { isTerminal, messageOf } from '../../shared/domain/errors.js';
import { startRequest } from '../orchestration.js';
import { orchestrations } from '../orchestrations/index.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export type NoticeDependencies = Pick<
  TriggerDependencies,
  | 'clusters'
  | 'quietPeriodSeconds'
  | 'minimumReadySeconds'
  | 'nodeResourceId'
  | 'scaleSetOfVirtualMachine'
  | 'now'
>;

export type DropReason = RejectionReason | 'node-not-found' | 'node-lookup-refused';

export interface QueueMessageResult {
  readonly signalled: readonly {
    readonly cluster: string;
    readonly pool: string;
    readonly how: 'raised' | 'started';
  }[];
  readonly dropped: readonly { readonly reason: DropReason; readonly message: string }[];
}

type Applied =
  | { readonly ok: true; readonly cluster: string; readonly pool: string; readonly how: 'raised' | 'started' }
  | { readonly ok: false; readonly reason: DropReason; readonly message: string };

export async function handleRebootQueueMessage(
  entry: unknown,
  client: OrchestrationClient,
  context: InvocationContext,
  deps: NoticeDependencies,
): Promise<QueueMessageResult> {
  const signalled: { cluster: string; pool: string; how: 'raised' | 'started' }[] = [];
  const dropped: { reason: DropReason; message: string }[] = [];
  let transient: unknown = undefined;
  for (const item of decodeQueueMessage(entry)) {
    let notice: RebootNotice;
    if ('ok' in item) {
      dropped.push({ reason: item.reason, message: item.message });
      continue;
    }
    if (item.kind === 'notice') {
      notice = item.notice;
    } else {
      const envelope = envelopeOfDecoded(await deserializeEvent(item.event));
      if ('ok' in envelope) {
        dropped.push({ reason: envelope.reason, message: envelope.message });
        continue;
      }
      const normalized = normalizeEnvelope(envelope, deps.now());
      if (!normalized.ok) {
        dropped.push({ reason: normalized.reason, message: normalized.message });
        continue;
      }
      notice = normalized.notice;
    }
    try {
      const applied = await applyNotice(notice, client, deps);
      if (applied.ok) signalled.push({ cluster: applied.cluster, pool: applied.pool, how: applied.how });
      else dropped.push({ reason: applied.reason, message: applied.message });
    } catch (error) {
      // Keep going: the other items of the message still get their chance before the retry.
      transient ??= error;
    }
  }
  for (const drop of dropped) context.warn('reboot notice dropped', drop);
  for (const signal of signalled) context.log('reboot notice signalled pool', signal);
  if (transient !== undefined) {
    // Items already applied are signalled again on the retry: the debounce absorbs duplicates.
    throw new Error(`applying reboot notices: ${messageOf(transient)}`, {
      cause: transient,
    });
  }
  return { signalled, dropped };
}

/** Maps a notice to its pool and signals the pool's debounce. Throws only for transient failures. */
async function applyNotice(
  notice: RebootNotice,
  client: OrchestrationClient,
  deps: NoticeDependencies,
): Promise<Applied> {
  let resourceId = notice.resourceId;
  if (resourceId === undefined) {
    const cluster = notice.cluster;
    const node = notice.nodeName;
    if (cluster === undefined || node === undefined || !deps.clusters.some((c) => c.name === cluster)) {
      return {
        ok: false,
        reason: 'unknown-cluster',
        message: `cluster ${cluster ?? '(none)'} is not configured`,
      };
    }
    try {
      resourceId = await deps.nodeResourceId(cluster, node);
    } catch (error) {
      if (isTerminal(error)) return { ok: false, reason: 'node-lookup-refused', message: error.message };
      throw error;
    }
    if (resourceId === undefined) {
      return {
        ok: false,
        reason: 'node-not-found',
        message: `node ${node} of cluster ${cluster} has no Azure VM`,
      };
    }
  }
  const target = await resolvePoolTarget(
    resourceId,
    deps.clusters,
    notice.cluster,
    deps.scaleSetOfVirtualMachine,
  );
  if (!target.ok) return target;
  const input = {
    cluster: target.cluster,
    pool: target.pool,
    quietPeriodSeconds: deps.quietPeriodSeconds,
    minimumReadySeconds: deps.minimumReadySeconds(target.cluster, target.pool),
    notice,
    runSeed: randomUUID(),
  };
  const how = await signalSingleton(client, {
    ...startRequest(orchestrations.poolSignal, signalInstanceId(target.cluster, target.pool), input),
    eventName: EVENT.rebootNotice,
    eventData: notice,
  });
  return { ok: true, cluster: target.cluster, pool: target.pool, how };
}

export function registerRebootNoticeQueue(): void {
  df.app.client.storageQueue('rebootNoticeQueue', {
    queueName: '%VMSSP_REBOOT_QUEUE%',
    connection: 'AzureWebJobsStorage',
    handler: async (entry: unknown, client: df.DurableClient, context: InvocationContext): Promise<void> => {
      await handleRebootQueueMessage(entry, client, context, workerTriggerDependencies());
    },
  });
}
