/**
 * Run metrics end to end: a real refresh on the simulator, with ARM throttling injected,
 * read back from OpenTelemetry's in-memory exporter: the pool's freshness, the phase durations, the
 * donor's time out of service, the outcome count, and the 429s the ARM adapter saw.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { DataPoint, Histogram, MetricData } from '@opentelemetry/sdk-metrics';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import type { PoolRefreshResult } from '../../shared/application/refresh-contracts.js';
import { METRIC_NAMES } from '../../shared/application/run-metrics.js';
import { assertIdentityClean, POOL1, startHarness } from './harness.js';

function metricsNamed(exporter: InMemoryMetricExporter, name: string): MetricData[] {
  return exporter
    .getMetrics()
    .flatMap((resource) => resource.scopeMetrics)
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name);
}

function lastPoints(exporter: InMemoryMetricExporter, name: string): DataPoint<unknown>[] {
  const found = metricsNamed(exporter, name);
  const last = found.at(-1);
  assert.ok(last, `metric ${name} was exported`);
  return last.dataPoints;
}

void describe('run metrics', { concurrency: false }, () => {
  void it('a throttled refresh on the simulator records freshness, phases, outcome and 429s', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const harness = await startHarness({ clock: 'manual', compose: { meterProvider: provider } });
    try {
      const faults = harness.sim.running.faults;
      faults.add({
        api: 'arm',
        operation: 'Microsoft.Compute/*/read',
        status: 429,
        code: 'TooManyRequests',
        message: 'The request is being throttled.',
        retryAfterSeconds: 1,
        times: 2,
      });
      const status = await harness.run(
        ORCHESTRATION.refreshPool,
        { cluster: 'prod', pool: POOL1, trigger: 'test' },
        'metrics-ok',
      );
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      const result = status.output as PoolRefreshResult;
      assert.equal(result.outcome, 'refreshed', result.reason);
      const fired = faults.rules().reduce((sum, rule) => sum + rule.fired, 0);
      assert.equal(fired, 2, 'the simulator throttled twice');
      await reader.forceFlush();

      const pool = { 'vmssp.cluster': 'prod', 'vmssp.pool': POOL1 };
      const outcomes = lastPoints(exporter, METRIC_NAMES.refreshes);
      assert.deepEqual(
        outcomes.map((point) => [point.attributes, point.value]),
        [[{ ...pool, 'vmssp.refresh.outcome': 'succeeded' }, 1]],
      );
      const refreshes = metricsNamed(exporter, METRIC_NAMES.refreshes).at(-1);
      assert.equal(refreshes?.descriptor.unit, '{refresh}');

      const phases = lastPoints(exporter, METRIC_NAMES.phaseDuration) as DataPoint<Histogram>[];
      const byPhase = new Map(phases.map((point) => [point.attributes['vmssp.refresh.phase'], point.value]));
      assert.ok(
        byPhase.has('capture') && byPhase.has('image') && byPhase.has('model'),
        [...byPhase.keys()].join(),
      );
      assert.ok((byPhase.get('capture')?.sum ?? 0) > 0, 'the capture took simulated time');
      assert.equal(metricsNamed(exporter, METRIC_NAMES.phaseDuration).at(-1)?.descriptor.unit, 's');

      const donor = lastPoints(exporter, METRIC_NAMES.donorOutOfService) as DataPoint<Histogram>[];
      assert.equal(donor[0]?.value.sum, result.donorOutOfServiceSeconds);

      const freshness = lastPoints(exporter, METRIC_NAMES.freshness) as DataPoint<number>[];
      const since = Date.parse(result.freshness?.since ?? '');
      assert.ok(Number.isFinite(since), JSON.stringify(result.freshness));
      assert.deepEqual(freshness[0]?.attributes, pool);
      assert.equal(freshness[0]?.value, (harness.sim.clock.now() - since) / 1000);

      const throttled = lastPoints(exporter, METRIC_NAMES.armThrottled) as DataPoint<number>[];
      const scaleSetReads = throttled.filter(
        (point) =>
          point.attributes['vmssp.arm.operation'] === 'Microsoft.Compute/virtualMachineScaleSets/read',
      );
      assert.equal(
        scaleSetReads.reduce((sum, point) => sum + point.value, 0),
        2,
      );
      assert.equal(scaleSetReads[0]?.attributes['http.response.status_code'], 429);
      assertIdentityClean(harness, 'the canary built from the new image');
    } finally {
      await harness.stop();
      await provider.shutdown();
    }
  });
});
