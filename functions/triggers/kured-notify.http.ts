/**
 * kured's `--notify-url` as a reboot notice: shoutrrr's generic webhook POSTs `{ "title", "message" }`
 * (https://containrrr.dev/shoutrrr/v0.8/services/generic/), e.g. `generic+https://<app>/api/notices/kured?cluster=prod&code=<key>`.
 * "Node <name> rebooted & uncordoned successfully!" becomes a notice on the reboot queue; kured's
 * drain/reboot messages are acknowledged and ignored (the node is on its way down).
 */
import type { HttpRequest, HttpResponse, InvocationContext } from '@azure/functions';
import azureFunctions from '@azure/functions';

import { KuredWebhook, normalizeKuredWebhook } from '../../shared/application/reboot-notices.js';
import { messageOf } from '../../shared/domain/errors.js';
import { isClusterName, json, problem, readJsonBody, shown } from './http-io.js';
import type { TriggerDependencies } from './trigger-dependencies.js';
import { workerTriggerDependencies } from './trigger-dependencies.js';

export async function handleKuredNotification(
  request: HttpRequest,
  context: InvocationContext,
  deps: Pick<TriggerDependencies, 'clusters' | 'notices' | 'now'>,
): Promise<HttpResponse> {
  const cluster = request.query.get('cluster') ?? undefined;
  const known = deps.clusters.map((c) => c.name);
  if (cluster === undefined) {
    return problem(400, 'MissingCluster', "add ?cluster=<name> to kured's --notify-url", {
      field: 'cluster',
    });
  }
  if (!isClusterName(cluster) || !known.includes(cluster)) {
    return problem(
      404,
      'ClusterNotFound',
      `cluster ${shown(cluster)} is not configured; known clusters: ${known.join(', ')}`,
    );
  }
  const body = await readJsonBody(request, KuredWebhook);
  if (!body.ok) return body.response;
  const normalized = normalizeKuredWebhook(body.value, cluster, `kured:${context.invocationId}`, deps.now());
  if (!normalized.ok && normalized.reason === 'malformed') {
    context.warn('kured notification rejected', {
      cluster,
      reason: normalized.reason,
      message: normalized.message,
    });
    return problem(400, 'InvalidNotification', normalized.message, { field: 'message' });
  }
  if (!normalized.ok) {
    context.log('kured notification ignored', {
      cluster,
      reason: normalized.reason,
      message: normalized.message,
    });
    return json(200, { accepted: false, reason: normalized.reason, message: normalized.message });
  }
  try {
    await deps.notices.send(normalized.notice);
  } catch (error) {
    context.error('kured notification: enqueueing failed', {
      error: messageOf(error),
    });
    return problem(
      503,
      'QueueUnavailable',
      'the reboot notice could not be queued; kured does not retry, the next schedule will catch up',
    );
  }
  context.log('kured notification enqueued', { cluster, node: normalized.notice.nodeName });
  return json(202, { accepted: true, eventId: normalized.notice.eventId, node: normalized.notice.nodeName });
}

export function registerKuredNotify(): void {
  azureFunctions.app.http('kuredNotify', {
    route: 'notices/kured',
    methods: ['POST'],
    authLevel: 'function',
    handler: async (request: HttpRequest, context: InvocationContext): Promise<HttpResponse> => {
      try {
        return await handleKuredNotification(request, context, workerTriggerDependencies());
      } catch (error) {
        context.error('kured notification: unexpected failure', {
          error: messageOf(error),
        });
        return problem(
          500,
          'InternalError',
          `the request failed; see the logs of invocation ${context.invocationId}`,
        );
      }
    },
  });
}
