/**
 * Turns the simulated world's guest reboots (kured stand-in) into what Azure would publish: a Health
 * Resources `ResourceAnnotated` (`VirtualMachineRestarted`) event, optionally followed by an
 * `AvailabilityStatusChanged` back to Available, delivered to a storage queue the way an Event Grid
 * storage-queue subscription does (Event Grid schema or CloudEvents, plain JSON or base64).
 */
import { createHash } from 'node:crypto';

import type { QueueClient } from '@azure/storage-queue';

import type { GuestRebootEvent, World } from '../world/world.js';

export const ANNOTATED_TYPE = 'Microsoft.ResourceNotifications.HealthResources.ResourceAnnotated';
export const AVAILABILITY_TYPE = 'Microsoft.ResourceNotifications.HealthResources.AvailabilityStatusChanged';

export interface HealthEventEmitterOptions {
  readonly world: World;
  readonly queue: QueueClient;
  readonly schema?: 'eventgrid' | 'cloudevents';
  /** Event Grid has been seen writing both; default plain JSON. */
  readonly encoding?: 'json' | 'base64';
  /** Also publish the availability change (Unavailable → Available); default false. */
  readonly availability?: boolean;
}

export interface HealthEventEmitter {
  /** Messages enqueued so far. */
  readonly sent: readonly string[];
  /** Resolves when every reboot seen so far is in the queue; rejects with the first send failure. */
  flush(): Promise<void>;
  stop(): void;
}

/** Deterministic event id (a GUID shape) from what happened: replays of a scenario give the same ids. */
function eventId(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The Health Resources events Azure publishes for one guest reboot of `resourceId`. */
export function healthEventsFor(
  reboot: GuestRebootEvent,
  resourceId: string,
  subscriptionId: string,
  options: { readonly availability: boolean; readonly schema: 'eventgrid' | 'cloudevents' },
): Record<string, unknown>[] {
  const topic = `/subscriptions/${subscriptionId}`;
  const statusId = `${resourceId}/providers/Microsoft.ResourceHealth/availabilityStatuses/current`;
  const annotated = {
    id: eventId(`annotated:${resourceId}:${reboot.at}`),
    type: ANNOTATED_TYPE,
    data: {
      resourceInfo: {
        id: statusId,
        name: 'current',
        type: 'Microsoft.ResourceHealth/resourceAnnotations',
        properties: {
          targetResourceId: resourceId,
          targetResourceType: resourceId.toLowerCase().includes('/virtualmachinescalesets/')
            ? 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines'
            : 'Microsoft.Compute/virtualMachines',
          occurredTime: reboot.at,
          annotationName: 'VirtualMachineRestarted',
          reason: 'Restarted from within the virtual machine',
          summary:
            'The virtual machine is restarting as requested by an authorized user or process from within the virtual machine.',
          context: 'Customer Initiated',
          category: 'Not Applicable',
        },
      },
      operationalInfo: { resourceEventTime: reboot.at },
      apiVersion: '2023-12-01',
    },
  };
  const changed = {
    id: eventId(`availability:${resourceId}:${reboot.at}`),
    type: AVAILABILITY_TYPE,
    data: {
      resourceInfo: {
        id: statusId,
        name: 'current',
        type: 'Microsoft.ResourceHealth/availabilityStatuses',
        properties: {
          targetResourceId: resourceId,
          targetResourceType: annotated.data.resourceInfo.properties.targetResourceType,
          occurredTime: reboot.at,
          previousAvailabilityState: 'Unavailable',
          availabilityState: 'Available',
        },
      },
      operationalInfo: { resourceEventTime: reboot.at },
      apiVersion: '2023-12-01',
    },
  };
  const events = options.availability ? [annotated, changed] : [annotated];
  return events.map((event) =>
    options.schema === 'cloudevents'
      ? {
          specversion: '1.0',
          id: event.id,
          type: event.type,
          source: topic,
          subject: resourceId,
          time: reboot.at,
          data: event.data,
        }
      : {
          id: event.id,
          topic,
          subject: resourceId,
          eventType: event.type,
          eventTime: reboot.at,
          data: event.data,
          dataVersion: '2023-12-01',
          metadataVersion: '1',
        },
  );
}

/** Enqueues one message per event, as an Event Grid storage-queue subscription does. */
export function startHealthEventEmitter(options: HealthEventEmitterOptions): HealthEventEmitter {
  const sent: string[] = [];
  const pending = new Set<Promise<void>>();
  let failure: unknown;
  const unsubscribe = options.world.onGuestReboot((reboot) => {
    const instance = options.world.compute.findInstanceByVmId(reboot.vmId);
    if (instance === undefined) return;
    const subscriptionId = instance.id.split('/')[2] ?? options.world.scenario.subscriptionId;
    for (const event of healthEventsFor(reboot, instance.id, subscriptionId, {
      availability: options.availability ?? false,
      schema: options.schema ?? 'eventgrid',
    })) {
      const json = JSON.stringify(event);
      const text = options.encoding === 'base64' ? Buffer.from(json, 'utf8').toString('base64') : json;
      const send = options.queue.sendMessage(text).then(
        () => {
          sent.push(text);
        },
        (error: unknown) => {
          failure ??= error;
        },
      );
      pending.add(send);
      void send.finally(() => pending.delete(send));
    }
  });
  return {
    sent,
    async flush() {
      while (pending.size > 0) await Promise.all([...pending]);
      if (failure !== undefined)
        throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
    },
    stop: unsubscribe,
  };
}
