import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  ACCESS_REVIEW_TTL_MS,
  rememberAccessReviews,
} from '../../../shared/application/access-review-memo.js';
import { requiredAccessFor } from '../../../shared/application/kubernetes-permissions.js';
import { describeAccess } from '../../../shared/domain/kubernetes-access.js';
import { FakeKubernetes } from '../../../shared/ports/fake/kubernetes/index.js';

const ACCESSES = requiredAccessFor({ captureMode: 'drain-and-stop', namespace: 'vmss-prototype' });
const START = Date.parse('2026-12-03T10:00:00Z');

function setup() {
  const kube = new FakeKubernetes();
  let at = START;
  const server = rememberAccessReviews(kube.server, () => new Date(at));
  return {
    kube,
    server,
    reviews: () => kube.callsTo('server.reviewAccess').length,
    advance: (ms: number) => (at += ms),
  };
}

void describe('rememberAccessReviews', () => {
  void it('answers a second ask within the TTL from memory, with the same decisions', async () => {
    const { server, reviews, advance } = setup();
    const first = await server.reviewAccess(ACCESSES);
    assert.equal(reviews(), 1);
    advance(ACCESS_REVIEW_TTL_MS - 1);
    const second = await server.reviewAccess(ACCESSES);
    assert.equal(reviews(), 1, 'no request within the TTL');
    assert.deepEqual(second, first);
    assert.ok(second.every((decision) => decision.allowed));
  });

  void it('asks the server again once the TTL has passed', async () => {
    const { server, reviews, advance } = setup();
    await server.reviewAccess(ACCESSES);
    advance(ACCESS_REVIEW_TTL_MS);
    await server.reviewAccess(ACCESSES);
    assert.equal(reviews(), 2);
  });

  void it('asks again an access the server denied, and only the accesses it does not know', async () => {
    const { kube, server, advance } = setup();
    const denied = ACCESSES[3]!;
    kube.server.deny(describeAccess(denied));
    const first = await server.reviewAccess(ACCESSES);
    assert.equal(first[3]?.allowed, false);
    // The role is applied: the next ask sees it, and sends only the access that was denied.
    kube.server.reset();
    advance(1_000);
    const second = await server.reviewAccess(ACCESSES);
    assert.ok(second.every((decision) => decision.allowed));
    const calls = kube.callsTo('server.reviewAccess');
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]?.args[0], [denied]);
  });

  void it('answers in the order asked when only some accesses are remembered', async () => {
    const { kube, server } = setup();
    await server.reviewAccess(ACCESSES.slice(0, 2));
    kube.server.deny(describeAccess(ACCESSES[2]!));
    const answers = await server.reviewAccess(ACCESSES.slice(0, 3));
    assert.deepEqual(
      answers.map((decision) => decision.allowed),
      [true, true, false],
    );
    assert.deepEqual(kube.callsTo('server.reviewAccess')[1]?.args[0], [ACCESSES[2]]);
  });

  void it('does not trust an answer from a clock that went back', async () => {
    const { server, reviews, advance } = setup();
    await server.reviewAccess(ACCESSES);
    advance(-1);
    await server.reviewAccess(ACCESSES);
    assert.equal(reviews(), 2);
  });
});
