/**
 * Event Grid and CloudEvents envelopes through @azure/eventgrid's own deserializer (it checks the
 * required envelope properties and decodes base64 CloudEvent data), turned into the application's
 * schema-neutral EventEnvelope. The event data is left to the application's zod schemas.
 */
import { type CloudEvent, EventGridDeserializer, type EventGridEvent } from '@azure/eventgrid';

import { envelopeOf, type EventEnvelope, type Rejection } from '../../application/reboot-notices.js';

const deserializer = new EventGridDeserializer();

/**
 * Deserializes one event (an object already parsed from JSON). Never throws: anything the SDK
 * refuses becomes a `malformed` rejection naming the cause.
 */
export async function deserializeEvent(value: unknown): Promise<EventEnvelope | Rejection> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'malformed', message: 'an event must be a JSON object' };
  }
  const record = value as Record<string, unknown>;
  try {
    if ('specversion' in record) {
      const [event] = await deserializer.deserializeCloudEvents(record);
      return event === undefined ? empty() : fromCloudEvent(event);
    }
    const [event] = await deserializer.deserializeEventGridEvents(record);
    return event === undefined ? empty() : fromEventGridEvent(event);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: 'malformed', message: `deserializing event: ${message.slice(0, 200)}` };
  }
}

function empty(): Rejection {
  return { ok: false, reason: 'malformed', message: 'deserializing event: no event' };
}

function fromEventGridEvent(event: EventGridEvent<unknown>): EventEnvelope | Rejection {
  // The SDK no longer converts data properties (since 4.0): the application's zod schemas read them.
  return envelopeOf({
    id: event.id,
    eventType: event.eventType,
    subject: event.subject,
    eventTime: event.eventTime,
    data: event.data,
    dataVersion: event.dataVersion,
    ...(event.topic === undefined ? {} : { topic: event.topic }),
  });
}

function fromCloudEvent(event: CloudEvent<unknown>): EventEnvelope | Rejection {
  return envelopeOf({
    specversion: '1.0',
    id: event.id,
    type: event.type,
    source: event.source,
    ...(event.subject === undefined ? {} : { subject: event.subject }),
    ...(event.time === undefined ? {} : { time: event.time }),
    data: event.data,
  });
}
