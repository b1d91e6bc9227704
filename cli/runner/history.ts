// Orchestration history events in the wire shape durable-functions replays (PascalCase fields,
// numeric EventType from lib/src/history/HistoryEventType.js), plus the zod schema for stored ones.
import { z } from 'zod';

/** Numbering of durable-functions' HistoryEventType (a const object: the style forbids enums). */
export const HistoryEventType = {
  ExecutionStarted: 0,
  ExecutionCompleted: 1,
  ExecutionFailed: 2,
  ExecutionTerminated: 3,
  TaskScheduled: 4,
  TaskCompleted: 5,
  TaskFailed: 6,
  SubOrchestrationInstanceCreated: 7,
  SubOrchestrationInstanceCompleted: 8,
  SubOrchestrationInstanceFailed: 9,
  TimerCreated: 10,
  TimerFired: 11,
  OrchestratorStarted: 12,
  OrchestratorCompleted: 13,
  EventSent: 14,
  EventRaised: 15,
  ContinueAsNew: 16,
} as const;

export type HistoryEventTypeName = keyof typeof HistoryEventType;

/** Structured failure as the Durable extension sends it (TaskFailedError is built from it). */
export const FailureDetails = z.object({
  ErrorType: z.string(),
  ErrorMessage: z.string(),
  StackTrace: z.string().optional(),
  IsNonRetriable: z.boolean().optional(),
  Properties: z.record(z.string(), z.unknown()).optional(),
  get InnerFailure() {
    return FailureDetails.optional();
  },
});
export type FailureDetails = z.infer<typeof FailureDetails>;

/** One history event; JSON-safe (timestamps are ISO strings, payloads are JSON text). */
export const HistoryEvent = z.object({
  EventType: z.number().int().min(0).max(20),
  EventId: z.number().int(),
  Timestamp: z.string(),
  IsPlayed: z.boolean().optional(),
  Name: z.string().optional(),
  Input: z.string().optional(),
  Result: z.string().optional(),
  Version: z.string().optional(),
  InstanceId: z.string().optional(),
  TaskScheduledId: z.number().int().optional(),
  TimerId: z.number().int().optional(),
  FireAt: z.string().optional(),
  Reason: z.string().optional(),
  Details: z.string().optional(),
  FailureDetails: FailureDetails.optional(),
  OrchestrationStatus: z.string().optional(),
});
export type HistoryEvent = z.infer<typeof HistoryEvent>;

const NAMES = new Map<number, HistoryEventTypeName>(
  Object.entries(HistoryEventType).map(([name, value]) => [value, name as HistoryEventTypeName]),
);

/** `TaskCompleted` for 5; `EventType(n)` for numbers the runner never writes. */
export function historyEventName(eventType: number): string {
  return NAMES.get(eventType) ?? `EventType(${eventType})`;
}

/** Encodes a value the way the host stores payloads: JSON text, `undefined` stays absent. */
export function toPayload(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

/** Decodes a stored payload; absent stays `undefined`. */
export function fromPayload(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * Action inputs reach the runner in the SDK's pre-processed form: `Utils.processInput` turns a
 * string into its JSON text and leaves other values as they are. Returns the payload text.
 */
export function actionInputToPayload(input: unknown): string | undefined {
  return typeof input === 'string' ? input : toPayload(input);
}

/** Builds an event; `EventId` is -1 except for events that schedule something (the task id). */
export function historyEvent(
  type: HistoryEventTypeName,
  timestamp: number,
  fields: Omit<Partial<HistoryEvent>, 'EventType' | 'Timestamp'> = {},
): HistoryEvent {
  const event: HistoryEvent = {
    EventType: HistoryEventType[type],
    EventId: -1,
    Timestamp: new Date(timestamp).toISOString(),
    IsPlayed: false,
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) Object.assign(event, { [key]: value });
  }
  return event;
}

/** The id of the scheduled task a completion event answers, if it is one. */
export function completedTaskId(event: HistoryEvent): number | undefined {
  switch (event.EventType) {
    case HistoryEventType.TaskCompleted:
    case HistoryEventType.TaskFailed:
    case HistoryEventType.SubOrchestrationInstanceCompleted:
    case HistoryEventType.SubOrchestrationInstanceFailed:
      return event.TaskScheduledId;
    case HistoryEventType.TimerFired:
      return event.TimerId;
    default:
      return undefined;
  }
}

/** Whether the event schedules work under its EventId (activity, timer or sub-orchestration). */
export function isSchedulingEvent(event: HistoryEvent): boolean {
  return (
    event.EventType === HistoryEventType.TaskScheduled ||
    event.EventType === HistoryEventType.TimerCreated ||
    event.EventType === HistoryEventType.SubOrchestrationInstanceCreated
  );
}

/** Converts an error thrown by user code into FailureDetails (cause chain becomes InnerFailure). */
export function failureDetailsOf(
  error: unknown,
  properties?: (error: Error) => Record<string, unknown> | undefined,
  depth = 0,
): FailureDetails {
  if (!(error instanceof Error)) {
    return { ErrorType: typeof error, ErrorMessage: String(error), IsNonRetriable: false };
  }
  const props = properties?.(error);
  const details: FailureDetails = {
    ErrorType: error.name !== 'Error' ? error.name : error.constructor.name,
    ErrorMessage: error.message,
    IsNonRetriable: false,
  };
  if (error.stack !== undefined) details.StackTrace = error.stack;
  if (props !== undefined) details.Properties = props;
  if (error.cause !== undefined && depth < 8) {
    details.InnerFailure = failureDetailsOf(error.cause, properties, depth + 1);
  }
  return details;
}
