// How a watch starts from its query (sendInitialEvents, resourceVersionMatch, allowWatchBookmarks), which
// combinations the API server refuses, and which versions stream lists at all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { KubeApiError } from '../../../sim/kube/status.js';
import { checkListOptions, watchListEnabled, watchStartOf } from '../../../sim/kube/watch-list.js';

function url(query: string): URL {
  return new URL(`http://sim/api/v1/pods?watch=1&${query}`);
}

void describe('watchStartOf', () => {
  const starts: [string, { initialEvents: boolean; initialEventsEndBookmark: boolean }][] = [
    ['', { initialEvents: true, initialEventsEndBookmark: false }],
    ['resourceVersion=0', { initialEvents: true, initialEventsEndBookmark: false }],
    ['resourceVersion=42', { initialEvents: false, initialEventsEndBookmark: false }],
    [
      'sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
      { initialEvents: true, initialEventsEndBookmark: true },
    ],
    [
      'sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=42&allowWatchBookmarks=true',
      { initialEvents: true, initialEventsEndBookmark: true },
    ],
    [
      'sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
      { initialEvents: true, initialEventsEndBookmark: false },
    ],
    [
      'sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
      { initialEvents: false, initialEventsEndBookmark: false },
    ],
  ];
  for (const [query, expected] of starts) {
    void it(`starts "${query}" as ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(watchStartOf(url(query), 'v1.32.4'), expected);
    });
  }

  const refusals: [string, string, string][] = [
    [
      'sendInitialEvents=true',
      'v1.32.4',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    ],
    [
      'resourceVersionMatch=NotOlderThan',
      'v1.32.4',
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    ],
    [
      'sendInitialEvents=true&resourceVersionMatch=Exact',
      'v1.32.4',
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    ],
    [
      'sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
      'v1.31.5',
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    ],
  ];
  for (const [query, version, message] of refusals) {
    void it(`refuses "${query}" on ${version} with 422`, () => {
      assert.throws(
        () => watchStartOf(url(query), version),
        (error: unknown) => error instanceof KubeApiError && error.code === 422 && error.message === message,
      );
    });
  }

  void it('refuses sendInitialEvents on a list', () => {
    assert.throws(
      () => checkListOptions(new URL('http://sim/api/v1/pods?sendInitialEvents=true')),
      /forbidden for list/,
    );
    assert.doesNotThrow(() => checkListOptions(new URL('http://sim/api/v1/pods?limit=5')));
  });
});

void describe('watchListEnabled', () => {
  const versions: [string, boolean][] = [
    ['v1.27.3', false],
    ['v1.30.2', false],
    ['v1.31.5', false],
    ['v1.32.4', true],
    ['v1.33.1', false],
    ['v1.34.0', true],
    ['v1.35.2', true],
  ];
  for (const [version, enabled] of versions) {
    void it(`${version}: ${enabled ? 'on' : 'off'}`, () => {
      assert.equal(watchListEnabled(version), enabled);
    });
  }
});
