/**
 * Orchestrations, defined once, beside the activities (activities.ts): `defineOrchestration(name,
 * inputSchema, body)` gives the handler the host runs and a typed handle that carries the name and, as
 * types only, the input the orchestration takes and the output it returns. Whoever starts one (the
 * triggers, the CLI, the local runner, a parent orchestration) passes the handle and a typed input;
 * whoever reads one's output reads it through the handle (`outputOf`), never with a cast of its own.
 *
 * The handler
 * - reads the input once, through the schema: a bad input fails the run at once, terminal, naming the
 *   field (`validating-input`), before the body runs;
 * - records how a run failed as a value in its custom status (`failure`: step, kind, code, message,
 *   advice) before the host ends it as Failed: a parent reads that value (orchestrations/children.ts)
 *   instead of parsing the message the host delivers. The runtime status and the message stay as they
 *   were (Failed, `<step>: <cause>`), for the operators, the API and the CLI.
 */
import type { OrchestrationContext, OrchestrationHandler, Task } from 'durable-functions';
import type { z } from 'zod';

import type { OrchestrationName } from '../shared/application/orchestration-ids.js';
import { definedOnly } from '../shared/domain/optional.js';
import type { StepName } from './orchestrations/step-failure.js';
import { failedStepOf, isStepName, StepFailure } from './orchestrations/step-failure.js';

/** An orchestration to start or read: its registered name; its input and output as phantom types. */
export interface OrchestrationHandle<Input, Output> {
  readonly name: OrchestrationName;
  /** Never set: only says what the orchestration takes and returns. */
  readonly io?: { readonly input: Input; readonly output: Output };
}

/** A defined orchestration: its handle, its input schema and the handler the host runs. */
export interface Orchestration<
  Name extends OrchestrationName,
  Schema extends z.ZodType,
  Output,
> extends OrchestrationHandle<z.input<Schema>, Output> {
  readonly name: Name;
  readonly schema: Schema;
  readonly handler: OrchestrationHandler;
}

/** What an orchestration takes (what a starter sends). */
export type InputOf<H> = H extends OrchestrationHandle<infer Input, unknown> ? Input : never;
/** What an orchestration returns. */
export type OutputOf<H> = H extends OrchestrationHandle<unknown, infer Output> ? Output : never;

/** The code of a run that failed on its input. */
export const INVALID_ORCHESTRATION_INPUT = 'InvalidOrchestrationInput';

export function defineOrchestration<const Name extends OrchestrationName, Schema extends z.ZodType, Output>(
  name: Name,
  schema: Schema,
  body: (context: OrchestrationContext, input: z.output<Schema>) => Generator<Task, Output, unknown>,
): Orchestration<Name, Schema, Output> {
  function* handler(context: OrchestrationContext): Generator<Task, Output, unknown> {
    const parsed = schema.safeParse(context.df.getInput());
    if (!parsed.success) {
      const issues = parsed.error.issues.map(
        (issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`,
      );
      const failure = StepFailure.terminal(
        'validating-input',
        INVALID_ORCHESTRATION_INPUT,
        `parsing input of orchestration ${name}: ${issues.join('; ')}`,
      );
      recordFailure(context, failure);
      throw failure;
    }
    try {
      return yield* body(context, parsed.data);
    } catch (error) {
      recordFailure(context, error);
      throw error;
    }
  }
  return { name, schema, handler };
}

/** The step the run's custom status names now (`unknown` when it names none). */
function currentStep(status: unknown): StepName {
  return typeof status === 'object' && status !== null && 'step' in status && isStepName(status.step)
    ? status.step
    : 'unknown';
}

/** Keeps the custom status the run showed and adds the failure value (what a parent reads). */
function recordFailure(context: OrchestrationContext, error: unknown): void {
  const status = context.df.customStatus;
  const shown = typeof status === 'object' && status !== null ? status : {};
  context.df.setCustomStatus({ ...shown, failure: failedStepOf(error, currentStep(status)) });
}

/**
 * An orchestration's output as its handle types it. The one place the type is asserted: the host ran the
 * orchestrator registered under this name, whose body returned it, and JSON carried it here (as an
 * activity's value in call.ts).
 */
export function carriedOutput<Output>(
  _orchestration: OrchestrationHandle<unknown, Output>,
  value: unknown,
): Output {
  return value as Output;
}

/** What a reader knows of an instance: durable-functions' status, the local runner's, the triggers'. */
export interface FinishedInstance {
  readonly name?: string;
  readonly runtimeStatus: string;
  readonly output?: unknown;
}

/**
 * The output of a completed instance of `orchestration`; undefined while it runs, when it did not
 * complete, or when the status names another orchestration.
 */
export function outputOf<Output>(
  orchestration: OrchestrationHandle<unknown, Output>,
  status: FinishedInstance,
): Output | undefined {
  if (status.runtimeStatus !== 'Completed') return undefined;
  if (status.name !== undefined && status.name !== orchestration.name) return undefined;
  return carriedOutput(orchestration, status.output);
}

/** A start as the singleton helpers (shared/application/singleton.ts) take it, its input typed. */
export interface StartRequest {
  readonly name: OrchestrationName;
  readonly instanceId: string;
  readonly input: unknown;
  readonly blockers?: readonly string[];
}

/** Starts `orchestration` as `instanceId` with `input` (checked against the handle's input type). */
export function startRequest<Input>(
  orchestration: OrchestrationHandle<Input, unknown>,
  instanceId: string,
  input: NoInfer<Input>,
  blockers?: readonly string[],
): StartRequest {
  return { name: orchestration.name, instanceId, input, ...definedOnly({ blockers }) };
}
