/**
 * `doctor`'s check of a cluster's PoolImagePolicy objects, on the port fakes: not installed and none are
 * fine, valid objects are named, an invalid one and one named after no pool are reported with the fix.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { poolPolicyChecks } from '../../cli/doctor-policies.js';
import { TransientError } from '../../shared/domain/errors.js';
import { createFakeWorld } from '../functions/orchestrations/fake-world.js';

async function check(setUp: (world: ReturnType<typeof createFakeWorld>) => void) {
  const world = createFakeWorld({ pools: ['pool1', 'pool2'] });
  setUp(world);
  return poolPolicyChecks('prod', world.handle);
}

void describe('poolPolicyChecks', () => {
  void it('passes when the resource is not installed, or there is none', async () => {
    const [notInstalled] = await check((world) => world.kube.poolPolicies.setInstalled(false));
    assert.equal(notInstalled?.result, 'ok');
    assert.match(notInstalled?.detail ?? '', /not installed: every pool follows the settings/);
    const [none] = await check(() => undefined);
    assert.equal(none?.result, 'ok');
  });

  void it('names the valid objects', async () => {
    const [valid] = await check((world) => {
      world.kube.poolPolicies.apply('pool1', { paused: true });
      world.kube.poolPolicies.apply('pool2', { canary: { soak: '1m' } });
    });
    assert.equal(valid?.result, 'ok');
    assert.equal(valid?.detail, '2 valid: pool1, pool2');
  });

  void it('reports an invalid object and one named after no pool, with the fix', async () => {
    const [invalid] = await check((world) => {
      world.kube.poolPolicies.apply('pool1', { retirement: { budget: '0%' } });
      world.kube.poolPolicies.apply('pool9', {});
    });
    assert.equal(invalid?.result, 'error');
    assert.match(invalid?.detail ?? '', /PoolImagePolicy pool1 is invalid.*spec\.retirement\.budget/);
    assert.match(
      invalid?.detail ?? '',
      /PoolImagePolicy pool9 names no pool of cluster prod \(its pools: pool1, pool2\)/,
    );
    assert.match(invalid?.fix ?? '', /kubectl edit poolimagepolicy/);
  });

  void it('reports a list that failed', async () => {
    const [failed] = await check((world) =>
      world.kube.nextError(
        'poolPolicies.list',
        new TransientError('ApiServerUnavailable', 'listing: unavailable'),
      ),
    );
    assert.equal(failed?.result, 'error');
    assert.equal(failed?.detail, 'listing: unavailable');
  });
});
