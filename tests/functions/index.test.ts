import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

void describe('function app entry point', () => {
  void it('registers every function without reading settings at import time', async () => {
    // Outside the host, @azure/functions skips registration with a warning; settings are read lazily
    // on the first invocation, so importing must succeed with an empty environment.
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
    try {
      await import('../../functions/index.js');
    } finally {
      console.warn = warn;
    }
    const registered = warnings.flatMap((w) => /register function "([^"]+)"/.exec(w)?.[1] ?? []);
    for (const name of [
      'refreshSchedule',
      'reaperSchedule',
      'retirementSchedule',
      'refreshClusterApi',
      'clusterStatusApi',
      'clusterPlanApi',
      'rollbackPoolApi',
      'retirePoolApi',
      'rebootNoticeEventGrid',
      'rebootNoticeQueue',
      'kuredNotify',
      'poolSignal',
      'reapCluster',
      'retirePool',
      'retireCluster',
    ]) {
      assert.ok(registered.includes(name), `${name} not registered (${registered.join(', ')})`);
    }
  });
});
