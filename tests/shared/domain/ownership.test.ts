// Table tests for lease names, holder identities, lease states and the prior-state annotation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  decodePriorState,
  describeHolder,
  encodePriorState,
  holderIdentity,
  LEASE_ANNOTATIONS,
  leaseClock,
  leaseNameFor,
  leaseState,
  liveRunId,
  parseHolder,
  type PoolLease,
  processHolderOnHost,
} from '../../../shared/domain/ownership.js';

const SCALE_SET =
  '/subscriptions/6b1f9c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b/resourceGroups/RG-K8s/providers/Microsoft.Compute/virtualMachineScaleSets/k8s-Agents-31415926-vmss';
const NOW = new Date('2026-11-22T12:00:00Z');

function lease(overrides: Partial<PoolLease> = {}): PoolLease {
  return {
    namespace: 'vmss-prototype',
    name: 'vmssp-x',
    holder: 'cli/host-1/run-1',
    acquiredAt: '2026-11-22T11:50:00.000000Z',
    renewedAt: '2026-11-22T11:55:00.000000Z',
    durationSeconds: 900,
    annotations: {},
    ...overrides,
  };
}

void describe('leaseNameFor', () => {
  void it('is a DNS label derived from the scale set id only, case-insensitively', () => {
    const name = leaseNameFor(SCALE_SET);
    assert.match(name, /^vmssp-k8s-agents-31415926-vmss-[0-9a-f]{8}$/);
    assert.ok(name.length <= 63);
    assert.equal(leaseNameFor(SCALE_SET.toUpperCase()), name);
    assert.notEqual(
      leaseNameFor(SCALE_SET.replace('RG-K8s', 'rg-other')),
      name,
      'another scale set, another lease',
    );
  });

  void it('stays a DNS label for long and odd names', () => {
    for (const last of ['a'.repeat(64), 'x_y.z', '---', '']) {
      const name = leaseNameFor(
        `/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachineScaleSets/${last}`,
      );
      assert.match(name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, name);
      assert.ok(name.length <= 63, name);
    }
  });
});

void describe('holder identities', () => {
  const cases: readonly { kind: string; host: string; expected: string }[] = [
    { kind: 'cli', host: 'laptop', expected: 'cli/laptop/r1' },
    { kind: 'function-app', host: 'app/with slash', expected: 'function-app/app-with-slash/r1' },
    { kind: '', host: '', expected: 'unknown/unknown/r1' },
  ];
  for (const { kind, host, expected } of cases) {
    void it(`${kind || '(empty)'} on ${host || '(empty)'}`, () => {
      const identity = holderIdentity({ kind, host }, 'r1');
      assert.equal(identity, expected);
      assert.equal(parseHolder(identity)?.runId, 'r1');
    });
  }
  void it('parses nothing from an empty or short identity', () => {
    assert.equal(parseHolder(undefined), undefined);
    assert.equal(parseHolder(''), undefined);
    assert.equal(parseHolder('only/two'), undefined);
  });
});

void describe('leaseState', () => {
  const cases: readonly { name: string; lease?: PoolLease; kind: string; live?: boolean; run?: string }[] = [
    { name: 'no lease object: free', kind: 'free' },
    { name: 'released (no holder): free', lease: lease({ holder: undefined }), kind: 'free' },
    { name: 'renewed 5 min ago with 15 min: live', lease: lease(), kind: 'held', live: true, run: 'run-1' },
    {
      name: 'renewed 20 min ago: expired',
      lease: lease({ renewedAt: '2026-11-22T11:40:00Z' }),
      kind: 'held',
      live: false,
    },
    {
      name: 'expires exactly now: not live',
      lease: lease({ renewedAt: '2026-11-22T11:45:00Z' }),
      kind: 'held',
      live: false,
    },
    {
      name: 'never renewed: the acquire time counts',
      lease: lease({ renewedAt: undefined, acquiredAt: '2026-11-22T11:59:00Z' }),
      kind: 'held',
      live: true,
      run: 'run-1',
    },
    { name: 'unreadable holder: free', lease: lease({ holder: 'garbage' }), kind: 'free' },
  ];
  for (const testCase of cases) {
    void it(testCase.name, () => {
      const state = leaseState(testCase.lease, NOW);
      assert.equal(state.kind, testCase.kind);
      if (state.kind === 'held') assert.equal(state.live, testCase.live);
      assert.equal(liveRunId(testCase.lease, NOW), testCase.run);
    });
  }

  // Renewed at 11:55 (server time) for 15 minutes: expires at 12:10 on the API server's clock, whatever
  // the reader's clock says.
  const judged: readonly { name: string; serverTime?: string; callerNow: string; live: boolean }[] = [
    {
      name: 'caller 16 min ahead, server 5 min after renewal: live',
      serverTime: '2026-11-22T12:00:00Z',
      callerNow: '2026-11-22T12:16:00Z',
      live: true,
    },
    {
      name: 'caller 16 min behind, server 16 min after renewal: expired',
      serverTime: '2026-11-22T12:11:00Z',
      callerNow: '2026-11-22T11:55:00Z',
      live: false,
    },
    {
      name: 'server exactly at expiry: not live',
      serverTime: '2026-11-22T12:10:00Z',
      callerNow: '2026-11-22T11:00:00Z',
      live: false,
    },
    {
      name: 'server a second before expiry: live',
      serverTime: '2026-11-22T12:09:59Z',
      callerNow: '2026-11-22T13:00:00Z',
      live: true,
    },
    {
      name: "no server time (no Date header): the caller's clock, expired",
      callerNow: '2026-11-22T12:16:00Z',
      live: false,
    },
    {
      name: "no server time (no Date header): the caller's clock, live",
      callerNow: '2026-11-22T12:00:00Z',
      live: true,
    },
    {
      name: "unreadable server time: the caller's clock",
      serverTime: 'yesterday',
      callerNow: '2026-11-22T12:00:00Z',
      live: true,
    },
  ];
  for (const testCase of judged) {
    void it(`on the API server's clock: ${testCase.name}`, () => {
      const read = lease(testCase.serverTime === undefined ? {} : { serverTime: testCase.serverTime });
      const now = new Date(testCase.callerNow);
      const state = leaseState(read, now);
      assert.equal(state.kind === 'held' && state.live, testCase.live);
      assert.equal(liveRunId(read, now), testCase.live ? 'run-1' : undefined);
      const clock = leaseClock(read, now).toISOString();
      const server = testCase.serverTime === undefined ? Number.NaN : Date.parse(testCase.serverTime);
      assert.equal(clock, Number.isNaN(server) ? now.toISOString() : new Date(server).toISOString());
    });
  }

  void it('says who, since when and until when, and a pending cancel', () => {
    const state = leaseState(
      lease({ annotations: { [LEASE_ANNOTATIONS.cancelRequested]: 'maintenance' } }),
      NOW,
    );
    assert.equal(state.kind, 'held');
    if (state.kind !== 'held') return;
    assert.equal(state.expiresAt, '2026-11-22T12:10:00.000Z');
    assert.equal(state.cancelRequested, 'maintenance');
    assert.equal(
      describeHolder(state, 'refresh:prod:agents'),
      'run run-1 of cli on host-1 (instance refresh:prod:agents) since 2026-11-22T11:50:00.000000Z; ' +
        'its lease expires at 2026-11-22T12:10:00.000Z unless renewed',
    );
  });
});

void describe('processHolderOnHost', () => {
  const here = { kind: 'cli', host: 'host-1', pid: 4242 };
  const withPid = (pid: string, overrides: Partial<PoolLease> = {}): PoolLease =>
    lease({ annotations: { [LEASE_ANNOTATIONS.holderPid]: pid }, ...overrides });

  void it('names a live CLI run of this host with its recorded pid: the one holder whose death the CLI sees', () => {
    assert.deepEqual(processHolderOnHost(withPid('31337'), NOW, here), {
      runId: 'run-1',
      host: 'host-1',
      pid: 31337,
    });
    // The host as the holder identity writes it (characters it does not allow replaced).
    assert.deepEqual(
      processHolderOnHost(withPid('31337', { holder: 'cli/my-host.lan/run-1' }), NOW, {
        ...here,
        host: 'my host.lan',
      })?.pid,
      31337,
    );
  });

  const never: readonly [string, PoolLease | undefined][] = [
    ['a function-app holder, even on this host', withPid('31337', { holder: 'function-app/host-1/run-1' })],
    ["another host's CLI run", withPid('31337', { holder: 'cli/host-2/run-1' })],
    ['a lease without a recorded pid', lease()],
    ['a pid that is not a process id', withPid('31337; rm -rf /')],
    ['a pid of 0 (kill(0) signals the whole process group)', withPid('0')],
    ['this very process', withPid('4242')],
    ['an expired lease (anyone may take it anyway)', withPid('31337', { renewedAt: '2026-11-22T11:40:00Z' })],
    ['a released lease', withPid('31337', { holder: '' })],
    ['no lease', undefined],
  ];
  for (const [name, value] of never) {
    void it(`never ${name}`, () => assert.equal(processHolderOnHost(value, NOW, here), undefined));
  }
});

void describe('prior state annotation', () => {
  for (const prior of [
    { unschedulable: false, scaleDownDisabled: null },
    { unschedulable: true, scaleDownDisabled: 'true' },
    { unschedulable: false, scaleDownDisabled: 'false' },
  ]) {
    void it(`round-trips ${JSON.stringify(prior)}`, () => {
      assert.deepEqual(decodePriorState(encodePriorState(prior)), prior);
    });
  }
  for (const bad of [
    undefined,
    '',
    'not json',
    '[]',
    '{"unschedulable":"no"}',
    '{"unschedulable":true,"scaleDownDisabled":1}',
  ]) {
    void it(`refuses ${JSON.stringify(bad)}`, () => {
      assert.equal(decodePriorState(bad), undefined);
    });
  }
});
