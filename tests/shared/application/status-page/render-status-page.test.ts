// The status page's HTML: self-contained, escaped, accessible structure, and plain empty states.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { PoolStatus } from '../../../../shared/application/pool-status.js';
import {
  escapeHtml,
  renderStatusPage,
} from '../../../../shared/application/status-page/render-status-page.js';

const NOW = '2026-11-23T12:00:00.000Z';

function pool(overrides: Partial<PoolStatus> = {}): PoolStatus {
  return {
    cluster: 'prod',
    pool: 'pool1',
    scaleSet: 'k8s-pool1-vmss',
    modelImage: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/i',
    pointsAtOurImage: true,
    pinned: false,
    run: { kind: 'idle' },
    currentVersion: {
      name: '2026.1123.100000',
      id: 'v',
      sourceNode: 'node-7',
      builtAt: '2026-11-23T10:05:00Z',
    },
    versionCount: 1,
    eligible: true,
    freshness: {
      basis: 'donor-patch',
      since: '2026-11-23T09:00:00Z',
      ageSeconds: 3 * 3600,
      detail: 'patched then',
    },
    ownership: { lease: { state: 'free' }, heldNodes: [], leftovers: [], kept: [] },
    history: { versions: [], runs: [], freshness: [] },
    nodes: [],
    convergence: {
      samples: [],
      now: { at: NOW, counts: {} },
      retirement: {
        enabled: false,
        budget: { nodes: 1 },
        budgetAllowed: 1,
        usedInWindow: 0,
        windowed: false,
      },
    },
    ...overrides,
  };
}

function page(pools: PoolStatus[], error?: string): string {
  return renderStatusPage({
    generatedAt: NOW,
    clusters: [{ cluster: 'prod', pools, ...(error === undefined ? {} : { error }) }],
  });
}

const HOSTILE = `<script>alert("x")</script><img src=x onerror='y'>&amp;`;

void describe('escapeHtml', () => {
  const cases: readonly (readonly [string, string])[] = [
    ['plain', 'plain'],
    ['<b>', '&lt;b&gt;'],
    ['a & b', 'a &amp; b'],
    [`"quoted" 'single'`, '&quot;quoted&quot; &#39;single&#39;'],
    ['&amp;', '&amp;amp;'],
  ];
  for (const [input, expected] of cases) {
    void it(`${input} → ${expected}`, () => assert.equal(escapeHtml(input), expected));
  }
});

void describe('renderStatusPage', () => {
  void it('is one self-contained document: no script, no external reference, lang and viewport set', () => {
    const html = page([pool()]);
    assert.match(html, /^<!doctype html>\s*<html lang="en">/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1" ?\/?>/);
    assert.doesNotMatch(html, /<script|<link|<iframe|src=|href="(?!#)/i);
    assert.match(html, /<header>[\s\S]*<main>[\s\S]*<\/main>/);
  });

  void it('tables have a caption and scoped headers', () => {
    const html = page([
      pool({
        nodes: [
          {
            name: 'n1',
            generation: '2026.1123.100000',
            ready: true,
            cordoned: false,
            olderGeneration: false,
          },
        ],
      }),
    ]);
    assert.match(html, /<caption>\s*Node generations\s*<\/caption>/);
    assert.match(html, /<th scope="col">Node<\/th>/);
    assert.match(html, /<th scope="row" data-label="Node">n1<\/th>/);
  });

  void it('every text from outside is escaped: node names, reasons, leases, versions, errors', () => {
    const hostile = pool({
      pool: HOSTILE,
      eligible: false,
      refusal: HOSTILE,
      nodes: [{ name: HOSTILE, generation: HOSTILE, ready: false, cordoned: true, olderGeneration: true }],
      ownership: {
        lease: {
          state: 'held',
          holder: HOSTILE,
          runId: HOSTILE,
          runner: 'cli',
          host: HOSTILE,
          expiresAt: NOW,
          description: HOSTILE,
        },
        heldNodes: [{ node: HOSTILE, runId: HOSTILE, byLiveRun: false, cordoned: true, vm: HOSTILE }],
        leftovers: [HOSTILE],
        kept: [{ what: HOSTILE, reason: HOSTILE }],
      },
      history: {
        versions: [
          { name: HOSTILE, state: 'rejected', reason: HOSTILE, runId: HOSTILE, sourceNode: HOSTILE },
        ],
        runs: [{ runId: HOSTILE, outcome: 'rejected', reason: HOSTILE, steps: [] }],
        freshness: [],
      },
      canary: { state: 'damaged', problem: HOSTILE },
    });
    const html = renderStatusPage({
      generatedAt: NOW,
      clusters: [
        { cluster: HOSTILE, pools: [hostile] },
        { cluster: 'other', pools: [], error: HOSTILE },
      ],
    });
    assert.doesNotMatch(html, /<script|<img|onerror='/i);
    assert.ok(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  });

  void it('empty states say so plainly', () => {
    const html = page([
      pool({ currentVersion: undefined, freshness: { basis: 'unknown', detail: 'no version' } }),
    ]);
    for (const text of [
      'No freshness history yet',
      'No image versions of ours in the gallery yet.',
      'No runs recorded yet',
      'No canary is running.',
      'No node is held by a run.',
      'The pool has no nodes in the cluster.',
      'none of ours',
    ]) {
      assert.ok(html.includes(text), `says "${text}"`);
    }
    assert.ok(page([]).includes('No pools: no scale set of this cluster has nodes'));
    assert.ok(renderStatusPage({ generatedAt: NOW, clusters: [] }).includes('No clusters are configured.'));
    assert.ok(
      page([], 'API server unreachable').includes('Reading this cluster failed: API server unreachable'),
    );
  });

  void it("says how new nodes join: from the image, or the pool's own bootstrap (kubeadm)", () => {
    const newNodes = (html: string): string =>
      /<dt>New nodes<\/dt>\s*<dd>\s*([\s\S]*?)\s*<\/dd>/.exec(html)?.[1]?.replaceAll(/\s+/g, ' ') ?? '';
    const version = pool().currentVersion;
    assert.ok(version);
    assert.match(
      newNodes(page([pool({ currentVersion: { ...version, newNodes: 'run-pool-bootstrap' } })])),
      /run the pool&#39;s bootstrap \(customData and bootstrap extensions kept: kubeadm join/,
    );
    assert.match(
      newNodes(page([pool({ currentVersion: { ...version, newNodes: 'boot-from-image' } })])),
      /^boot from the image \(customData replaced by a no-op, bootstrap extensions removed\)$/,
    );
    // A version built before the tag existed: from the image, as every version then.
    assert.match(newNodes(page([pool()])), /^boot from the image/);
    assert.match(newNodes(page([pool({ currentVersion: undefined })])), /no version of ours yet/);
  });

  void it('labels freshness in words beside its colour', () => {
    const label = (ageSeconds: number): string | undefined =>
      /class="badge (?:good|warn|bad)">(fresh|ageing|stale)</.exec(
        page([pool({ freshness: { basis: 'donor-patch', ageSeconds, detail: '' } })]).split('<main>')[1] ??
          '',
      )?.[1];
    assert.equal(label(3600), 'fresh');
    assert.equal(label(10 * 86_400), 'ageing');
    assert.equal(label(40 * 86_400), 'stale');
  });

  void it('draws the freshness chart and the run timeline with their figures in text', () => {
    const html = page([
      pool({
        history: {
          versions: [],
          runs: [
            {
              runId: 'r1',
              outcome: 'refreshed',
              version: '2026.1123.100000',
              seconds: 1200,
              steps: [
                {
                  step: 'capture',
                  label: 'capture: cordon, drain, snapshot the donor',
                  from: '2026-11-23T10:00:00Z',
                  to: '2026-11-23T10:05:00Z',
                  seconds: 300,
                },
                {
                  step: 'build-and-roll-out',
                  label: 'build the image version, publish, roll out',
                  from: '2026-11-23T10:05:00Z',
                },
              ],
            },
          ],
          freshness: [
            {
              version: 'a',
              from: '2026-11-20T00:00:00Z',
              to: '2026-11-22T00:00:00Z',
              ageFromSeconds: 86_400,
              ageToSeconds: 259_200,
            },
            {
              version: 'b',
              from: '2026-11-22T00:00:00Z',
              to: '2026-11-23T12:00:00Z',
              ageFromSeconds: 3600,
              ageToSeconds: 133_200,
            },
          ],
        },
      }),
    ]);
    assert.match(
      html,
      /<svg\s+viewBox="0 0 320 96"\s+role="img"\s+aria-labelledby="pool-0-0-freshness-title pool-0-0-freshness-desc"\s+aria-label="pool pool1: patch age over the last 2 versions, now 1d13h, at most 3d"/,
    );
    assert.match(
      html,
      /<desc id="pool-0-0-freshness-desc">a served from 2026-11-20 00:00 to 2026-11-22 00:00 UTC/,
    );
    // The legend in words, newest first: each version's donor patch time and the ages it served with.
    assert.match(
      html,
      /<li>\s*<strong>b<\/strong>: donor patched <time datetime="2026-11-21T23:00:00.000Z">[^<]*<\/time>; served from\s+2026-11-22 00:00 UTC until now, patches\s+1h to 1d13h old/,
    );
    assert.match(html, /<polyline points="[\d., ]+"/);
    assert.match(html, /capture: cordon, drain, snapshot the donor:\s*<strong>5m<\/strong>/);
    assert.match(html, /class="step build-and-roll-out open"/);
    assert.match(html, /end not recorded/);
  });
});

void describe('renderStatusPage: convergence', () => {
  void it("each pool has its convergence chart, its ids its own, and the page's CSS styles it", () => {
    const convergence = {
      ...pool().convergence,
      now: { at: NOW, counts: { '2026.1123.100000': 2, unknown: 1 } },
    };
    const html = page([pool({ convergence }), pool({ pool: 'pool2', convergence })]);
    assert.match(html, /<h4>Convergence<\/h4>\s*<figure class="chart convergence">/);
    const ids = [...html.matchAll(/<pattern\s+id="([^"]+)"/g)].map((match) => match[1]);
    assert.deepEqual(ids, [
      'pool-0-0-convergence-unknown',
      'pool-0-0-convergence-unlabelled',
      'pool-0-1-convergence-unknown',
      'pool-0-1-convergence-unlabelled',
    ]);
    assert.match(html, /\.convergence \.newest\{fill:#0b5cad/);
    assert.equal((html.match(/<p class="retirement">\s*retirement: off\s*<\/p>/g) ?? []).length, 2);
  });
});
