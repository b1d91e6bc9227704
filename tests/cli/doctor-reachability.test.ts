// How doctor reports an API server it cannot reach: the URL and cause, and the network checks of
// docs/private-clusters.md ordered by the cause. The CLI against a closed 127.0.0.1 port is in doctor.test.ts.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  isUnreachable,
  networkCodeOf,
  PRIVATE_CLUSTERS_DOC,
  unreachableAdvice,
  unreachableCheck,
} from '../../cli/doctor-reachability.js';
import { TerminalError, TransientError } from '../../shared/domain/errors.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const URL_6443 = 'https://k8s.internal.contoso.com:6443';

function socketError(code: string): TransientError {
  const socket = Object.assign(new Error(`connect ${code} 10.0.0.4:6443`), { code });
  const fetchFailed = new TypeError('fetch failed', { cause: socket });
  return new TransientError(
    'ClusterUnreachable',
    `reading the nodes: cannot reach the API server (${code})`,
    {
      cause: fetchFailed,
    },
  );
}

void describe('doctor: an unreachable API server', () => {
  void it('is told apart from other failures by the error code', () => {
    assert.equal(isUnreachable(socketError('ECONNREFUSED')), true);
    assert.equal(
      isUnreachable(new TransientError('ClusterRequestTimeout', 'the API server did not answer in time')),
      true,
    );
    assert.equal(isUnreachable(new TerminalError('ClusterTlsVerificationFailed', 'bad certificate')), false);
    assert.equal(isUnreachable(new Error('cannot reach the API server')), false);
  });

  void it('finds the socket code under the wrappers', () => {
    assert.equal(networkCodeOf(socketError('ENOTFOUND')), 'ENOTFOUND');
    assert.equal(networkCodeOf(new TransientError('ClusterRequestTimeout', 'timeout')), undefined);
  });

  const cases: readonly { code: string | undefined; first: RegExp }[] = [
    { code: 'ENOTFOUND', first: /^check \(1\) DNS: k8s\.internal\.contoso\.com must resolve/ },
    { code: 'EAI_AGAIN', first: /^check \(1\) DNS:/ },
    {
      code: 'ECONNREFUSED',
      first: /^check \(1\) the server: something must listen on k8s\.internal\.contoso\.com:6443/,
    },
    {
      code: 'ETIMEDOUT',
      first: /^check \(1\) network path: the function app needs virtual network integration/,
    },
    { code: undefined, first: /^check \(1\) network path:/ },
  ];
  for (const { code, first } of cases) {
    void it(`${code ?? 'a timeout'}: leads with the likeliest check and names all of them`, () => {
      const advice = unreachableAdvice(URL_6443, code);
      assert.match(advice, first);
      assert.match(advice, /network\.appSubnetId/);
      assert.match(
        advice,
        /NSG rule on the API server's subnet allowing TCP 6443 from the integration subnet/,
      );
      assert.match(advice, /authorized IP ranges: .*NAT gateway's public IP/);
      assert.match(advice, /DNS: k8s\.internal\.contoso\.com must resolve/);
      assert.ok(advice.endsWith(`see ${PRIVATE_CLUSTERS_DOC}`), advice);
    });
  }

  void it('takes port 443 when the URL names none', () => {
    assert.match(unreachableAdvice('https://k8s.example.com', 'ETIMEDOUT'), /allowing TCP 443/);
  });

  void it('reports the URL and the cause, with the checks as the fix', () => {
    const check = unreachableCheck(
      { check: 'kubernetes', cluster: 'prod', target: URL_6443 },
      URL_6443,
      socketError('ECONNREFUSED'),
    );
    assert.equal(check.result, 'error');
    assert.match(
      check.detail,
      /^cannot reach the API server https:\/\/k8s\.internal\.contoso\.com:6443 \(ECONNREFUSED\): /,
    );
    assert.match(check.fix ?? '', /docs\/private-clusters\.md$/);
  });

  void it('points at a page that exists', () => {
    assert.ok(existsSync(join(ROOT, PRIVATE_CLUSTERS_DOC)));
  });
});
