/**
 * The real-engine tier's seeded orchestrations (docs/real-engine.md): patterns whose outcome on the engine
 * the local runner must reproduce, registered next to the app's before the engine starts.
 */
import type * as df from 'durable-functions';

/** The #574 pattern, seeded: a task still pending is yielded again inside a new Task.any. */
export const SEEDED_574 = 'realEngineSeeded574';
export const SEEDED_ACTIVITY = 'realEngineEcho';
/** A sub-orchestration started under the id of an instance that is running. */
export const SEEDED_PARENT = 'realEngineParentOverRunning';
export const SEEDED_CHILD = 'realEngineWaitingChild';

/** Waits for a `go` event and returns what it was started with and what the event said. */
export function* waitingChild(context: df.OrchestrationContext): Generator<df.Task, unknown, unknown> {
  const go: unknown = yield context.df.waitForExternalEvent('go');
  return { input: context.df.getInput(), go };
}

/** Starts the waiting child under the id `seeded-child`, which the test started first. */
export function* parentOverRunning(context: df.OrchestrationContext): Generator<df.Task, unknown, unknown> {
  try {
    const child: unknown = yield context.df.callSubOrchestrator(SEEDED_CHILD, 'parent', 'seeded-child');
    return { child };
  } catch (error) {
    return { refused: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

/** The seeded activity: slower than the orchestrator's first timer, so the timer wins, the activity pends. */
export async function seededActivity(input: unknown): Promise<unknown> {
  if (input === 'first') await new Promise((done) => setTimeout(done, 3_000));
  return input;
}

export function* seeded574(context: df.OrchestrationContext): Generator<df.Task, unknown, unknown> {
  const pending = context.df.callActivity(SEEDED_ACTIVITY, 'first');
  const soon = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000));
  const winner: unknown = yield context.df.Task.any([pending, soon]);
  if (winner === soon) {
    // #574: `pending` again, in a new Task.any: durable-functions 3.5 sends its action a second time.
    yield context.df.Task.any([
      pending,
      context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000)),
    ]);
  }
  const second: unknown = yield context.df.callActivity(SEEDED_ACTIVITY, 'second');
  return second;
}

export interface SeededHost {
  start(name: string, input: unknown, instanceId: string): Promise<void>;
  status(instanceId: string): Promise<{ runtimeStatus: string; output: unknown }>;
  raise(instanceId: string, data: unknown): Promise<void>;
}

/**
 * The child started by a client and waiting; the parent starts it again under its id; the child is then
 * told to go. What each ended as (bounded: a parent the engine left waiting is reported as such).
 */
export async function overRunning(host: SeededHost): Promise<Record<string, unknown>> {
  const until = async (instanceId: string, done: (status: string) => boolean): Promise<string> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { runtimeStatus } = await host.status(instanceId);
      if (done(runtimeStatus) || Date.now() > deadline) return runtimeStatus;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await host.start(SEEDED_CHILD, 'client', 'seeded-child');
  await until('seeded-child', (status) => status === 'Running');
  await host.start(SEEDED_PARENT, null, 'seeded-parent');
  const parentBefore = await until('seeded-parent', (status) => status !== 'Pending');
  // Whatever the parent's start did to the child has landed once the parent waits (or ended).
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  await host.raise('seeded-child', 'go');
  const childStatus = await until('seeded-child', (status) => !['Running', 'Pending'].includes(status));
  const parentStatus = await until('seeded-parent', (status) => !['Running', 'Pending'].includes(status));
  return {
    parentBefore,
    child: { status: childStatus, output: (await host.status('seeded-child')).output },
    parent: { status: parentStatus, output: (await host.status('seeded-parent')).output },
  };
}
