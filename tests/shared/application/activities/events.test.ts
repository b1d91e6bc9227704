// The run events activity completes only once its events left the worker (or after its bound): a worker
// recycled after it completed cannot lose them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { runActivity } from '../../../../shared/application/activities/activity.js';
import {
  EVENT_ACTIVITIES,
  EVENT_DELIVERY_WAIT_MS,
} from '../../../../shared/application/activities/events.js';
import type { RefreshDependencies } from '../../../../shared/application/refresh-dependencies.js';
import { NotFoundError } from '../../../../shared/domain/errors.js';
import type { RunEvent, RunEventPublisher } from '../../../../shared/ports/run-events.js';

const EVENT: RunEvent = {
  id: 'run-1/refresh.started/runs/run-1',
  type: 'io.vmss-prototype.refresh.started',
  source: '/clusters/c1/pools/pool1',
  subject: 'runs/run-1',
  time: '2026-11-26T18:00:00Z',
  data: { cluster: 'c1', pool: 'pool1' },
};

/** A publisher that delivers when the test says so, and records what was asked of it. */
class ControlledPublisher implements RunEventPublisher {
  readonly delivered: RunEvent[] = [];
  readonly flushBounds: (number | undefined)[] = [];
  readonly #pending: RunEvent[] = [];
  #release: (() => void) | undefined;
  readonly #released = new Promise<void>((resolve) => {
    this.#release = resolve;
  });

  publish(events: readonly RunEvent[]): void {
    this.#pending.push(...events);
  }

  async flush(timeoutMs?: number): Promise<void> {
    this.flushBounds.push(timeoutMs);
    await this.#released;
    this.delivered.push(...this.#pending.splice(0));
  }

  deliver(): void {
    this.#release?.();
  }
}

function depsWith(events: RunEventPublisher): RefreshDependencies {
  return {
    clusterNames: [],
    cluster: (name) => Promise.reject(new NotFoundError('ClusterNotConfigured', `finding cluster ${name}`)),
    now: () => new Date(0),
    runner: { kind: 'test', host: 'events-test' },
    events,
  };
}

void describe('reportRunEvents', () => {
  void it('completes only once its events were delivered, waiting at most its bound', async () => {
    const publisher = new ControlledPublisher();
    let completed = false;
    const running = runActivity(EVENT_ACTIVITIES.reportRunEvents, depsWith(publisher), {
      events: [EVENT],
    }).then((result) => {
      completed = true;
      return result;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(completed, false, 'still waiting for the topic');
    assert.equal(publisher.delivered.length, 0, 'nothing delivered yet');

    publisher.deliver();
    const result = await running;

    assert.deepEqual(result, { ok: true, value: { handedOver: 1 } });
    assert.deepEqual(
      publisher.delivered.map((event) => event.id),
      [EVENT.id],
    );
    assert.deepEqual(publisher.flushBounds, [EVENT_DELIVERY_WAIT_MS]);
  });

  void it('without a topic it hands over nothing and completes at once', async () => {
    const deps: RefreshDependencies = { ...depsWith(new ControlledPublisher()), events: undefined };
    assert.deepEqual(await runActivity(EVENT_ACTIVITIES.reportRunEvents, deps, { events: [EVENT] }), {
      ok: true,
      value: { handedOver: 1 },
    });
  });
});
