/**
 * The run events activity (issue 16): the orchestrations call it at their milestones with the events
 * they built (run-events.ts). It hands them to the publisher, which delivers them in the background, and
 * records the metrics they carry (run-metrics.ts explains why here and not in orchestrator code). It
 * never waits for the topic and never fails for it: a refresh does not depend on its observers.
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

const reportRunEventsActivity = defineActivity(
  'reportRunEvents',
  z.object({ events: z.array(RunEventInput).max(100) }),
  (deps, input) => {
    const sensitive = deps.sensitiveValues ?? [];
    const events: readonly RunEvent[] = input.events.map((event) => redactEvent(event, sensitive));
    deps.events?.publish(events);
    deps.metrics?.record(events);
    return Promise.resolve({ handedOver: events.length });
  },
);

export const EVENT_ACTIVITIES = { reportRunEvents: reportRunEventsActivity } as const;
