/**
 * The run events activity: the orchestrations call it at their milestones with the events
 * they built (run-events.ts). It hands them to the publisher, which delivers them in the background, and
 * records the metrics they carry (run-metrics.ts explains why here and not in orchestrator code).
 *
 * It completes once its events left the worker, or after EVENT_DELIVERY_WAIT_MS: a worker recycled after
 * the activity completed has nothing of it left to lose, and one recycled during it makes Durable run the
 * activity again (same ids: subscribers dedupe). It never fails for the topic, and a topic that is down
 * delays a run by at most that bound per call: a refresh does not depend on its observers.
 */
import { z } from 'zod';

import type { RunEvent } from '../../ports/run-events.js';
import { redactEvent } from '../run-events.js';
import { defineActivity } from './activity.js';

const RunEventInput = z.object({
  id: z.string().min(1),
  type: z.string().startsWith('io.vmss-prototype.'),
  source: z.string().min(1),
  subject: z.string().min(1),
  time: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});

/** How long the activity waits for its events' delivery: a healthy topic answers in well under a second. */
export const EVENT_DELIVERY_WAIT_MS = 10_000;

const reportRunEventsActivity = defineActivity(
  'reportRunEvents',
  z.object({ events: z.array(RunEventInput).max(100) }),
  async (deps, input) => {
    const sensitive = deps.sensitiveValues ?? [];
    const events: readonly RunEvent[] = input.events.map((event) => redactEvent(event, sensitive));
    deps.events?.publish(events);
    deps.metrics?.record(events);
    await deps.events?.flush(EVENT_DELIVERY_WAIT_MS);
    return { handedOver: events.length };
  },
);

export const EVENT_ACTIVITIES = { reportRunEvents: reportRunEventsActivity } as const;
