/**
 * Event Grid and CloudEvents envelopes through @azure/eventgrid's own deserializer (it checks the
 * required envelope properties and decodes base64 CloudEvent data), handed on as plain envelope fields.
 * The envelope and its data are left to the application's zod schemas (reboot-notices.ts envelopeOf).
 */
import { type CloudEvent, EventGridDeserializer, type EventGridEvent } from '@azure/eventgrid';

import { messageOf } from '../../domain/errors.js';
import { definedOnly } from '../../domain/optional.js';

/** The fields of one deserialized event, or why the SDK refused it. */
export type DeserializedEvent =
  | { readonly ok: true; readonly fields: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly message: string };

const deserializer = new EventGridDeserializer();

/**
 * Deserializes one event (an object already parsed from JSON). Never throws: anything the SDK
 * refuses becomes a `malformed` rejection naming the cause.
 */
export async function deserializeEvent(value: unknown): Promise<DeserializedEvent> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'an event must be a JSON object' };
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
    const message = messageOf(error);
    return { ok: false, message: `deserializing event: ${message.slice(0, 200)}` };
  }
}

function empty(): DeserializedEvent {
  return { ok: false, message: 'deserializing event: no event' };
}

function fromEventGridEvent(event: EventGridEvent<unknown>): DeserializedEvent {
  // The SDK no longer converts data properties (since 4.0): the application's zod schemas read them.
  return {
    ok: true,
    fields: {
      id: event.id,
      eventType: event.eventType,
      subject: event.subject,
      eventTime: event.eventTime,
      data: event.data,
      dataVersion: event.dataVersion,
      ...definedOnly({ topic: event.topic }),
    },
  };
}

function fromCloudEvent(event: CloudEvent<unknown>): DeserializedEvent {
  return {
    ok: true,
    fields: {
      specversion: '1.0',
      id: event.id,
      type: event.type,
      source: event.source,
      ...definedOnly({ subject: event.subject, time: event.time }),
      data: event.data,
    },
  };
}
