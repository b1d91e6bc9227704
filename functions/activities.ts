/**
 * Typed handles of the catalogue's activities, for the orchestrators: `activities.planPool` carries the
 * registered name and, as types only, the input the activity takes and the output it returns. The call
 * helper (orchestrations/call.ts) is the one place that turns a handle into a durable task.
 *
 * Why not durable-functions' own `RegisteredActivity` (what `df.app.activity` returns): its input and
 * result are `unknown`, so it would not type a call; and it exists only as the return value of the
 * registration, whose side effect (`app.generic`) would run wherever an orchestrator is imported — the
 * CLI and the tests, where @azure/functions warns that it skips registration. A handle of our own is
 * data: importing it registers nothing.
 */
import type { AnyActivity, InputOf, OutputOf } from '../shared/application/activities/activity.js';
import type { ActivityCatalogue } from '../shared/application/activities/catalogue.js';
import { ACTIVITIES } from '../shared/application/activities/catalogue.js';

declare const carries: unique symbol;

/** An activity to call: its registered name; its input and output as phantom types. */
export interface ActivityHandle<Input, Output> {
  readonly name: string;
  /** Never set: only says what the activity takes and returns. */
  readonly [carries]?: { readonly input: Input; readonly output: Output };
}

export type ActivityHandles = {
  readonly [K in keyof ActivityCatalogue]: ActivityHandle<
    InputOf<ActivityCatalogue[K]>,
    OutputOf<ActivityCatalogue[K]>
  >;
};

/** What an activity of the catalogue returns, for orchestrators that pass its result on. */
export type ActivityOutput<K extends keyof ActivityCatalogue> = OutputOf<ActivityCatalogue[K]>;

function handleOf<A extends AnyActivity>(activity: A): ActivityHandle<InputOf<A>, OutputOf<A>> {
  return { name: activity.name };
}

function handlesOf(catalogue: ActivityCatalogue): ActivityHandles {
  const entries = Object.entries(catalogue).map(([key, activity]) => [key, handleOf(activity)] as const);
  // Each entry is handleOf(catalogue[key]), which is exactly the mapped type's member for that key.
  return Object.fromEntries(entries) as ActivityHandles;
}

export const activities: ActivityHandles = handlesOf(ACTIVITIES);
