// A pool's history from version tags, ARM creation times and the pool lease: states, run timelines, freshness.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PoolHistoryInput, VersionFacts } from '../../../shared/domain/pool-history.js';
import { poolHistoryOf } from '../../../shared/domain/pool-history.js';

const NOW = new Date('2026-11-23T12:00:00Z');

/** One of our versions, named for `named` (YYYY.MMDD.HHMMSS), created at `created`. */
function ours(
  name: string,
  options: {
    created?: string;
    patched?: string;
    run?: string;
    donor?: string;
    state?: string;
    exclude?: boolean;
    tags?: Record<string, string>;
  } = {},
): VersionFacts {
  return {
    name,
    provisioningState: options.state ?? 'Succeeded',
    excludeFromLatest: options.exclude ?? false,
    ...(options.created === undefined ? {} : { publishedAt: options.created }),
    tags: {
      'vmss-prototype.created-by': 'vmss-prototype',
      'vmss-prototype.source-node': options.donor ?? 'node-1',
      'vmss-prototype.source-vm-id': 'vm-1',
      'vmss-prototype.cluster': 'prod',
      'vmss-prototype.pool': 'pool1',
      'vmss-prototype.patched-at': options.patched ?? '2026-11-20T00:00:00Z',
      'vmss-prototype.run-id': options.run ?? `run-${name}`,
      ...options.tags,
    },
  };
}

function input(versions: VersionFacts[], overrides: Partial<PoolHistoryInput> = {}): PoolHistoryInput {
  return { now: NOW, versions, lease: { state: 'free' }, ...overrides };
}

void describe('poolHistoryOf: version states', () => {
  const cases: readonly {
    name: string;
    version: VersionFacts;
    current?: string;
    state: string;
    reason?: string;
  }[] = [
    {
      name: 'the current one',
      version: ours('2026.1122.100000'),
      current: '2026.1122.100000',
      state: 'current',
    },
    { name: 'a retained one', version: ours('2026.1122.100000'), state: 'usable' },
    {
      name: 'rejected by its canary, with the reason',
      version: ours('2026.1122.100000', {
        exclude: true,
        tags: {
          'vmss-prototype.rejected': 'pods crash',
          'vmss-prototype.rejected-at': '2026-11-22T11:00:00Z',
        },
      }),
      state: 'rejected',
      reason: 'pods crash',
    },
    {
      name: 'abandoned',
      version: ours('2026.1122.100000', { exclude: true, tags: { 'vmss-prototype.abandoned': 'cancelled' } }),
      state: 'abandoned',
      reason: 'cancelled',
    },
    {
      name: 'failed in ARM',
      version: ours('2026.1122.100000', { state: 'Failed' }),
      state: 'failed',
      reason: 'provisioning state Failed',
    },
    { name: 'still building', version: ours('2026.1122.100000', { state: 'Creating' }), state: 'building' },
    {
      name: 'hidden while a canary judges it',
      version: ours('2026.1122.100000', { exclude: true }),
      state: 'hidden',
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const history = poolHistoryOf(
        input([c.version], c.current === undefined ? {} : { currentVersion: c.current }),
      );
      assert.equal(history.versions[0]?.state, c.state);
      if (c.reason !== undefined) assert.equal(history.versions[0]?.reason, c.reason);
    });
  }
});

void describe('poolHistoryOf: runs and their timelines', () => {
  void it('capture runs from the naming second to the creation; the last run ends when it let go of the lease', () => {
    const history = poolHistoryOf(
      input(
        [
          ours('2026.1122.100000', { created: '2026-11-22T10:04:30Z', run: 'r1', donor: 'n1' }),
          ours('2026.1123.090000', { created: '2026-11-23T09:05:00Z', run: 'r2', donor: 'n2' }),
        ],
        {
          currentVersion: '2026.1123.090000',
          lease: { state: 'free', lastHolder: 'cli/host/r2', releasedAt: '2026-11-23T09:20:00Z' },
        },
      ),
    );
    assert.deepEqual(
      history.runs.map((run) => [run.runId, run.outcome, run.donor, run.seconds]),
      [
        ['r2', 'refreshed', 'n2', 1200],
        ['r1', 'refreshed', 'n1', undefined],
      ],
    );
    const [latest, earlier] = history.runs;
    assert.deepEqual(
      latest?.steps.map((step) => [step.step, step.seconds]),
      [
        ['capture', 300],
        ['build-and-roll-out', 900],
      ],
    );
    // The earlier run's end was not recorded (the lease names the later one): its last step stays open.
    assert.deepEqual(
      earlier?.steps.map((step) => [step.step, step.seconds, step.to]),
      [
        ['capture', 270, '2026-11-22T10:04:30.000Z'],
        ['build-and-roll-out', undefined, undefined],
      ],
    );
  });

  void it('a published run: capture (labelled by its mode), build and publish, then the roll-out to the lease release', () => {
    const history = poolHistoryOf(
      input(
        [
          ours('2026.1123.090000', {
            created: '2026-11-23T09:05:00Z',
            run: 'r2',
            tags: {
              'vmss-prototype.capture-mode': 'live',
              'vmss-prototype.in-latest-at': '2026-11-23T09:30:00Z',
            },
          }),
        ],
        {
          currentVersion: '2026.1123.090000',
          lease: { state: 'free', lastHolder: 'cli/host/r2', releasedAt: '2026-11-23T09:32:00Z' },
        },
      ),
    );
    assert.deepEqual(
      history.runs[0]?.steps.map((step) => [step.step, step.label, step.seconds]),
      [
        ['capture', "capture: freeze, snapshot and scrub a copy of the running donor's disk", 300],
        ['build-and-publish', 'build the image version (and its canary, when on), publish it', 1500],
        ['roll-out', 'roll out: model, bootstrap extensions, pruning, node labels', 120],
      ],
    );
    assert.equal(history.versions[0]?.captureMode, 'live');
  });

  const labels: { mode: string | undefined; label: string }[] = [
    { mode: 'drain-and-stop', label: 'capture: cordon, drain, snapshot the donor' },
    { mode: 'run-command', label: 'capture: cordon, drain, prepare by Run Command, snapshot the donor' },
    { mode: undefined, label: 'capture the donor' },
    { mode: 'teleport', label: 'capture the donor' },
  ];
  for (const row of labels) {
    void it(`the capture step of a ${row.mode ?? 'version without a capture-mode tag'} run says what it did`, () => {
      const history = poolHistoryOf(
        input([
          ours('2026.1123.090000', {
            created: '2026-11-23T09:05:00Z',
            ...(row.mode === undefined ? {} : { tags: { 'vmss-prototype.capture-mode': row.mode } }),
          }),
        ]),
      );
      assert.equal(history.runs[0]?.steps[0]?.label, row.label);
    });
  }

  void it('a publication time that is not RFC 3339 is ignored: one step from the creation on', () => {
    const history = poolHistoryOf(
      input([
        ours('2026.1123.090000', {
          created: '2026-11-23T09:05:00Z',
          tags: { 'vmss-prototype.in-latest-at': 'yesterday' },
        }),
      ]),
    );
    assert.deepEqual(
      history.runs[0]?.steps.map((step) => step.step),
      ['capture', 'build-and-roll-out'],
    );
  });

  void it('a rejected run ends at its rejection and says why', () => {
    const history = poolHistoryOf(
      input([
        ours('2026.1122.100000', {
          created: '2026-11-22T10:05:00Z',
          exclude: true,
          tags: {
            'vmss-prototype.rejected': 'canary not Ready',
            'vmss-prototype.rejected-at': '2026-11-22T10:35:00Z',
          },
        }),
      ]),
    );
    const run = history.runs[0];
    assert.equal(run?.outcome, 'rejected');
    assert.equal(run.reason, 'canary not Ready');
    assert.equal(run.seconds, 35 * 60);
    assert.deepEqual(
      run.steps.map((step) => step.step),
      ['capture', 'build-and-canary'],
    );
  });

  void it('a run holding the pool now: running until now, before and after it named its version', () => {
    const before = poolHistoryOf(
      input([], { lease: { state: 'held', runId: 'r9', since: '2026-11-23T11:50:00Z' } }),
    );
    assert.deepEqual(
      before.runs.map((run) => [run.runId, run.outcome, run.steps[0]?.seconds]),
      [['r9', 'running', 600]],
    );
    const after = poolHistoryOf(
      input([ours('2026.1123.115000', { created: '2026-11-23T11:55:00Z', run: 'r9', exclude: true })], {
        lease: { state: 'held', runId: 'r9', since: '2026-11-23T11:50:00Z' },
      }),
    );
    assert.deepEqual(
      after.runs.map((run) => [run.outcome, run.steps.map((step) => [step.step, step.seconds])]),
      [
        [
          'running',
          [
            ['capture', 300],
            ['running', 300],
          ],
        ],
      ],
    );
  });

  void it("an earlier run without a recorded end had ended by the next run's start", () => {
    const history = poolHistoryOf(
      input(
        [
          ours('2026.1122.100000', { created: '2026-11-22T10:04:30Z', run: 'r1' }),
          ours('2026.1123.090000', { created: '2026-11-23T09:05:00Z', run: 'r2' }),
        ],
        {
          currentVersion: '2026.1123.090000',
          lease: { state: 'free', lastHolder: 'cli/host/r2', releasedAt: '2026-11-23T09:20:00Z' },
        },
      ),
    );
    assert.deepEqual(
      history.runs.map((run) => [run.runId, run.endedAt, run.endedBy, run.secondsAtMost]),
      [
        ['r2', '2026-11-23T09:20:00.000Z', undefined, undefined],
        ['r1', undefined, '2026-11-23T09:00:00.000Z', 82_800],
      ],
    );
  });

  void it('an interrupted run (its lease expired) is not running: it ends when it was last seen', () => {
    const lease = {
      state: 'interrupted' as const,
      runId: 'r9',
      since: '2026-11-23T10:00:00Z',
      lastSeenAt: '2026-11-23T10:10:00Z',
    };
    const before = poolHistoryOf(input([], { lease }));
    assert.deepEqual(
      before.runs.map((run) => [
        run.outcome,
        run.endedAt,
        run.steps.map((step) => [step.label, step.seconds]),
      ]),
      [['interrupted', '2026-11-23T10:10:00.000Z', [['held the pool until it was last seen', 600]]]],
    );
    const after = poolHistoryOf(
      input([ours('2026.1123.100000', { created: '2026-11-23T10:05:00Z', run: 'r9', exclude: true })], {
        lease,
      }),
    );
    assert.deepEqual(
      after.runs.map((run) => [run.outcome, run.endedAt, run.steps.map((step) => step.step)]),
      [['interrupted', '2026-11-23T10:10:00.000Z', ['capture', 'build-and-canary']]],
    );
  });

  void it('no versions and a free lease: nothing to show', () => {
    assert.deepEqual(poolHistoryOf(input([])), { versions: [], runs: [], freshness: [] });
  });

  void it('keeps the newest `limit` versions and runs, newest first by version number', () => {
    const versions = Array.from({ length: 14 }, (_, index) =>
      ours(`2026.1123.${String(100000 + index * 100)}`, { created: '2026-11-23T10:00:00Z' }),
    );
    const history = poolHistoryOf(input(versions, { limit: 10 }));
    assert.equal(history.versions.length, 10);
    assert.equal(history.runs.length, 10);
    assert.equal(history.versions[0]?.name, '2026.1123.101300');
  });
});

void describe('poolHistoryOf: freshness over time', () => {
  void it('each usable version from its creation to the next one, the last one until now; rejected ones never served', () => {
    const history = poolHistoryOf(
      input(
        [
          ours('2026.1120.000000', { created: '2026-11-20T00:00:00Z', patched: '2026-11-19T00:00:00Z' }),
          ours('2026.1121.000000', {
            created: '2026-11-21T00:00:00Z',
            patched: '2026-11-20T12:00:00Z',
            exclude: true,
            tags: { 'vmss-prototype.rejected': 'bad' },
          }),
          ours('2026.1122.000000', { created: '2026-11-22T00:00:00Z', patched: '2026-11-21T00:00:00Z' }),
        ],
        { currentVersion: '2026.1122.000000' },
      ),
    );
    assert.deepEqual(
      history.freshness.map((s) => [s.version, s.ageFromSeconds / 3600, s.ageToSeconds / 3600]),
      [
        ['2026.1120.000000', 24, 72],
        ['2026.1122.000000', 24, 60],
      ],
    );
  });
});
