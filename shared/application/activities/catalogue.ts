/**
 * The activity catalogue: every activity of the product, each defined once (activity.ts explains the
 * shape and why failures are values). The function app registers exactly these, the local runner runs
 * exactly these, and the orchestrators call them through handles derived from this table.
 */
import type { RefreshDependencies } from '../refresh-dependencies.js';
import type { ActivityResult, AnyActivity } from './activity.js';
import { runActivity } from './activity.js';
import { CANARY_ACTIVITIES } from './canary.js';
import { CANARY_SCALE_SET_ACTIVITIES } from './canary-scale-set.js';
import { CAPTURE_ACTIVITIES } from './capture.js';
import { CAPZ_ACTIVITIES } from './capz.js';
import { EVENT_ACTIVITIES } from './events.js';
import { IMAGE_ACTIVITIES } from './image.js';
import { LIVE_ACTIVITIES } from './live.js';
import { MODEL_ACTIVITIES } from './model.js';
import { NODE_ACTIVITIES } from './node.js';
import { OWNERSHIP_ACTIVITIES } from './ownership.js';
import { PLANNING_ACTIVITIES } from './planning.js';
import { POLICY_ACTIVITIES } from './policies.js';
import { PROMOTION_ACTIVITIES } from './promotion.js';
import { RETIREMENT_ACTIVITIES } from './retirement.js';
import { RUN_COMMAND_ACTIVITIES } from './run-command.js';

/** Checks at compile time that every entry is filed under its own name. */
function catalogue<T extends Record<string, AnyActivity>>(
  table: T & { [K in keyof T]: { readonly name: K } },
): T {
  return table;
}

export const ACTIVITIES = catalogue({
  ...PLANNING_ACTIVITIES,
  ...NODE_ACTIVITIES,
  ...CAPTURE_ACTIVITIES,
  ...RUN_COMMAND_ACTIVITIES,
  ...IMAGE_ACTIVITIES,
  ...MODEL_ACTIVITIES,
  ...LIVE_ACTIVITIES,
  ...CANARY_ACTIVITIES,
  ...CANARY_SCALE_SET_ACTIVITIES,
  ...PROMOTION_ACTIVITIES,
  ...CAPZ_ACTIVITIES,
  ...OWNERSHIP_ACTIVITIES,
  ...EVENT_ACTIVITIES,
  ...RETIREMENT_ACTIVITIES,
  ...POLICY_ACTIVITIES,
});

export type ActivityCatalogue = typeof ACTIVITIES;
export type ActivityName = keyof ActivityCatalogue;

/** A registered activity: JSON in, a result value out; it never throws. */
export type BoundActivity = (input: unknown) => Promise<ActivityResult<unknown>>;

/**
 * Every activity bound to its dependencies, by name: what `df.app.activity` registers and what the local
 * runner runs. `deps` may be a function so that the function app builds its composition on first use.
 */
export function bindActivities(
  deps: RefreshDependencies | (() => RefreshDependencies),
): Readonly<Record<ActivityName, BoundActivity>> {
  const bound: Partial<Record<ActivityName, BoundActivity>> = {};
  for (const name of Object.keys(ACTIVITIES) as ActivityName[]) {
    const activity: AnyActivity = ACTIVITIES[name];
    bound[name] = (input) => runActivity(activity, deps, input);
  }
  return bound as Record<ActivityName, BoundActivity>;
}
