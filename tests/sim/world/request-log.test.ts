/**
 * The request log counts requests, and hands each one, with what it named, to its listeners in the order
 * served (the bench judges polls from that order).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createRequestLog, type LoggedRequest } from '../../../sim/world/request-log.js';

void describe('request log', () => {
  void it('counts every request and tells listeners each one in order until they unsubscribe', () => {
    const log = createRequestLog();
    const seen: LoggedRequest[] = [];
    const stop = log.subscribe((request) => seen.push(request));
    log.record('arm', 'Microsoft.Compute/snapshots/write', 202, { method: 'PUT', path: '/s/snap' });
    log.record('kube', 'nodes:list', 200);
    stop();
    log.record('arm', 'Microsoft.Compute/snapshots/read', 200, { method: 'GET', path: '/s/snap' });
    assert.deepEqual(seen, [
      {
        api: 'arm',
        operation: 'Microsoft.Compute/snapshots/write',
        status: 202,
        target: { method: 'PUT', path: '/s/snap' },
      },
      { api: 'kube', operation: 'nodes:list', status: 200 },
    ]);
    assert.equal(log.total(), 3);
    assert.equal(log.count({ api: 'arm' }), 2);
  });
});
