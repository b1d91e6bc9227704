import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  guestDownSinceMs,
  nextPowerOffStep,
  type PowerOffNext,
  type PowerOffSignals,
  type PowerOffWatch,
} from '../../../shared/domain/power-off-signal.js';

const CREATED = Date.parse('2026-11-28T01:00:00Z');
const s = (seconds: number): number => CREATED + seconds * 1000;

const WATCH: PowerOffWatch = {
  prepPodCreatedAtMs: CREATED,
  signalIntervalSeconds: 5,
  nodeMonitorGraceSeconds: 40,
  stillUpAfterSeconds: 60,
  guestHaltSeconds: 115,
  fallbackFirstReadSeconds: 135,
};

const READY_BEFORE = { status: 'True', sinceMs: s(-3600) } as const;

void describe('nextPowerOffStep: the cluster says when the guest went down, ARM is read a halt later', () => {
  const cases: readonly [string, PowerOffSignals, number, PowerOffNext][] = [
    [
      'the pod still runs, the node Ready: read the cluster again shortly',
      { podPhase: 'Running', nodeReady: READY_BEFORE },
      5,
      { kind: 'read-signals', atMs: s(10) },
    ],
    [
      'the pod not started yet: the same',
      { podPhase: 'Pending', nodeReady: READY_BEFORE },
      5,
      { kind: 'read-signals', atMs: s(10) },
    ],
    [
      'the pod ended, the node still Ready: ARM read a halt after the end unless the node stays Ready; checked first',
      { podPhase: 'Succeeded', podEndedAtMs: s(6), nodeReady: READY_BEFORE },
      10,
      { kind: 'read-signals', atMs: s(66) },
    ],
    [
      'the pod ended and the node went Unknown since: ARM read a halt after the pod ended',
      { podPhase: 'Succeeded', podEndedAtMs: s(6), nodeReady: { status: 'Unknown', sinceMs: s(46) } },
      66,
      { kind: 'read-instance', atMs: s(121), sinceMs: s(6), why: 'guest-down' },
    ],
    [
      'the pod ended a minute ago and the node is still Ready: the guest is up, ARM read now',
      { podPhase: 'Succeeded', podEndedAtMs: s(6), nodeReady: READY_BEFORE },
      66,
      { kind: 'read-instance', atMs: s(66), sinceMs: s(66), why: 'guest-still-up' },
    ],
    [
      'the pod still shown Running (its kubelet died with the host), the node Unknown: dated a grace before',
      { podPhase: 'Running', nodeReady: { status: 'Unknown', sinceMs: s(50) } },
      55,
      { kind: 'read-instance', atMs: s(125), sinceMs: s(10), why: 'guest-down' },
    ],
    [
      'the node NotReady after the pod was made (the kubelet reported its own shutdown): dated then',
      { podPhase: 'Running', nodeReady: { status: 'False', sinceMs: s(8) } },
      10,
      { kind: 'read-instance', atMs: s(123), sinceMs: s(8), why: 'guest-down' },
    ],
    [
      'the node NotReady since before the pod: no signal, the cluster is read again',
      { podPhase: 'Running', nodeReady: { status: 'False', sinceMs: s(-20) } },
      10,
      { kind: 'read-signals', atMs: s(15) },
    ],
    [
      'no signal by the old first read: ARM read then, on the old schedule',
      { podPhase: 'Running', nodeReady: READY_BEFORE },
      130,
      { kind: 'read-instance', atMs: s(135), sinceMs: CREATED, why: 'no-signal' },
    ],
    [
      'the node gone and the pod too: the old schedule',
      { podPhase: 'Absent' },
      132,
      { kind: 'read-instance', atMs: s(135), sinceMs: CREATED, why: 'no-signal' },
    ],
    [
      'an end stamped in the future by a skewed clock counts from now',
      { podPhase: 'Succeeded', podEndedAtMs: s(30), nodeReady: { status: 'Unknown', sinceMs: s(70) } },
      20,
      { kind: 'read-instance', atMs: s(135), sinceMs: s(20), why: 'guest-down' },
    ],
  ];
  for (const [name, signals, nowSeconds, expected] of cases) {
    void it(name, () => {
      assert.deepEqual(nextPowerOffStep(signals, WATCH, s(nowSeconds)), expected);
    });
  }

  void it('every cheap read is scheduled later than the last: the wait ends by the old first read', () => {
    let now = CREATED;
    let step: PowerOffNext = { kind: 'read-signals', atMs: s(5) };
    let reads = 0;
    while (step.kind === 'read-signals' && reads < 1000) {
      assert.ok(step.atMs > now);
      now = step.atMs;
      reads += 1;
      step = nextPowerOffStep({ podPhase: 'Running', nodeReady: READY_BEFORE }, WATCH, now);
    }
    assert.deepEqual(step, { kind: 'read-instance', atMs: s(135), sinceMs: CREATED, why: 'no-signal' });
    assert.equal(reads, 26);
  });
});

void describe('guestDownSinceMs', () => {
  void it('never before the pod was made', () => {
    const signals: PowerOffSignals = {
      podPhase: 'Running',
      nodeReady: { status: 'Unknown', sinceMs: s(20) },
    };
    assert.equal(guestDownSinceMs(signals, WATCH, s(25)), CREATED);
  });
  void it('a node still Ready says nothing, whatever the pod', () => {
    const signals: PowerOffSignals = { podPhase: 'Succeeded', podEndedAtMs: s(6), nodeReady: READY_BEFORE };
    assert.equal(guestDownSinceMs(signals, WATCH, s(30)), undefined);
  });
  void it('a pod that ended after the node went Unknown is not the power-off: the node dates it', () => {
    const signals: PowerOffSignals = {
      podPhase: 'Succeeded',
      podEndedAtMs: s(60),
      nodeReady: { status: 'Unknown', sinceMs: s(50) },
    };
    assert.equal(guestDownSinceMs(signals, WATCH, s(65)), s(10));
  });
});
