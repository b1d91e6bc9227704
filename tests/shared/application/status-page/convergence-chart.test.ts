// The convergence chart of the status page: one band per generation in the right order and shade, its
// geometry, a legend and a retirement line that read without colour, escaping, and the empty states.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  bandClass,
  convergenceSection,
} from '../../../../shared/application/status-page/convergence-chart.js';
import type { PoolConvergence } from '../../../../shared/domain/convergence.js';

const NEW = '2026.1127.1';
const MID = '2026.1120.3';
const OLD = '2026.1106.2';
const NOW = '2026-11-28T03:00:00.000Z';

const CONVERGENCE: PoolConvergence = {
  newest: NEW,
  samples: [
    { at: '2026-11-20T02:00:00.000Z', counts: { [MID]: 2, [OLD]: 2, unknown: 2 } },
    { at: '2026-11-27T02:00:00.000Z', counts: { [MID]: 4, [OLD]: 1, unknown: 1 } },
  ],
  now: { at: NOW, counts: { [NEW]: 3, [MID]: 2, unknown: 1 } },
  retirement: {
    enabled: true,
    budget: { nodes: 1 },
    budgetAllowed: 1,
    usedInWindow: 1,
    windowed: true,
    windowOpen: { openedAt: '2026-11-28T02:00:00.000Z', closesAt: '2026-11-28T04:00:00.000Z' },
  },
};

/** Each band's generation, class and points, in document order (bottom of the stack first). */
function bands(
  html: string,
): { generation: string; kind: string; points: [number, number][]; fill?: string }[] {
  return [
    ...html.matchAll(
      /<polygon\s+class="band ([^"]+)"\s+data-generation="([^"]*)"\s+points="([^"]+)"\s*(?:fill="([^"]+)")?/g,
    ),
  ].map((match) => ({
    kind: match[1] ?? '',
    generation: match[2] ?? '',
    points: (match[3] ?? '').split(' ').map((pair) => pair.split(',').map(Number) as [number, number]),
    ...(match[4] === undefined ? {} : { fill: match[4] }),
  }));
}

function text(html: string): string {
  return html.replaceAll(/<[^>]+>/g, ' ').replaceAll(/\s+/g, ' ');
}

void describe('convergenceSection', () => {
  const html = convergenceSection(CONVERGENCE, 'pool1', 'pool-0-0-convergence').text;

  void it('draws one band per generation: the newest at the bottom in its colour, older ones greyer, unknown hatched', () => {
    assert.deepEqual(
      bands(html).map(({ generation, kind, fill }) => [generation, kind, fill]),
      [
        [NEW, 'newest', undefined],
        [MID, 'older-1', undefined],
        [OLD, 'older-2', undefined],
        ['unknown', 'unknown', 'url(#pool-0-0-convergence-unknown)'],
      ],
    );
    assert.match(html, /<pattern\s+id="pool-0-0-convergence-unknown"/);
  });

  void it('stacks the counts over time: x from the first reading to now, y in nodes of the tallest stack', () => {
    const [newest, mid] = bands(html);
    // Three points (two readings and now), top edge then bottom edge. The plot spans x 6–314, y 14 (6 nodes) to 104 (0).
    const y = (nodes: number): number => Number((14 + (1 - nodes / 6) * 90).toFixed(1));
    // Readings 168 h and 0 h before the second; now 25 h after it: 193 h in all.
    const x = (hours: number): number => Number((6 + (hours / 193) * 308).toFixed(1));
    assert.deepEqual(newest?.points.slice(0, 3), [
      [x(0), y(0)],
      [x(168), y(0)],
      [x(193), y(3)],
    ]);
    assert.deepEqual(mid?.points.slice(0, 3), [
      [x(0), y(2)],
      [x(168), y(4)],
      [x(193), y(3 + 2)],
    ]);
    // The bottom edge of the second band is the top edge of the first, walked back.
    assert.deepEqual(mid?.points.slice(3), newest?.points.slice(0, 3).reverse());
  });

  void it('has a title and a description, and a legend that reads without colour', () => {
    assert.match(
      html,
      /<title id="pool-0-0-convergence-title">pool pool1: nodes per generation over time; now 2026\.1127\.1: 3 nodes, 2026\.1120\.3: 2 nodes, unknown: 1 node<\/title>/,
    );
    assert.match(
      html,
      /<desc id="pool-0-0-convergence-desc">2 readings from 2026-11-20 02:00 UTC; at the first 2026\.1120\.3: 2 nodes, 2026\.1106\.2: 2 nodes, unknown: 2 nodes; now /,
    );
    assert.match(html, /aria-labelledby="pool-0-0-convergence-title pool-0-0-convergence-desc"/);
    const words = text(html);
    for (const line of [
      '2026.1127.1 (new nodes get it): 3 nodes',
      '2026.1120.3: 2 nodes',
      '2026.1106.2: 0 nodes now',
      'unknown: 1 node',
    ]) {
      assert.ok(words.includes(line), `${line} in ${words}`);
    }
  });

  void it('says where retirement stands under the chart', () => {
    assert.ok(
      text(html).includes('retirement: budget 1 node per window, 1 used in the window open until 04:00 UTC'),
    );
    const off = convergenceSection(
      { ...CONVERGENCE, retirement: { ...CONVERGENCE.retirement, enabled: false } },
      'pool1',
      'c',
    ).text;
    assert.match(off, /<p class="retirement">\s*retirement: off\s*<\/p>/);
  });

  void it('without readings, draws the nodes now across the whole width and says why', () => {
    const only = convergenceSection(
      {
        ...CONVERGENCE,
        newest: undefined,
        samples: [],
        now: { at: NOW, counts: { unknown: 3, unlabelled: 1 } },
      },
      'pool2',
      'c',
    ).text;
    const drawn = bands(only);
    assert.deepEqual(
      drawn.map(({ generation, kind }) => [generation, kind]),
      [
        ['unknown', 'unknown'],
        ['unlabelled', 'unlabelled'],
      ],
    );
    assert.deepEqual(
      drawn[0]?.points.map(([x]) => x),
      [6, 314, 314, 6],
    );
    assert.match(text(only), /no earlier readings: each run that holds the pool records one/);
  });

  void it('no nodes and no readings: says so, and still the retirement line', () => {
    const none = convergenceSection(
      { ...CONVERGENCE, samples: [], now: { at: NOW, counts: {} } },
      'p',
      'c',
    ).text;
    assert.doesNotMatch(none, /<svg/);
    assert.match(none, /No nodes now and no readings recorded yet\./);
    assert.match(none, /retirement: budget 1 node per window/);
  });

  void it('escapes generation names from the lease record', () => {
    const hostile = '<script>x</script>"';
    const page = convergenceSection(
      { ...CONVERGENCE, samples: [], now: { at: NOW, counts: { [hostile]: 1 } } },
      'p',
      'c',
    ).text;
    assert.doesNotMatch(page, /<script>/);
    assert.match(page, /data-generation="&lt;script&gt;x&lt;\/script&gt;&quot;"/);
  });
});

void describe('bandClass', () => {
  const order = [NEW, MID, OLD, '2026.1030.1', '2026.1001.1', '2026.901.1', 'unknown', 'unlabelled'];
  const cases: [string, string | undefined, string][] = [
    [NEW, NEW, 'newest'],
    [MID, NEW, 'older-1'],
    ['2026.1001.1', NEW, 'older-4'],
    ['2026.901.1', NEW, 'older-4'],
    ['unknown', NEW, 'unknown'],
    ['unlabelled', NEW, 'unlabelled'],
    // The model is not on ours: no generation is the one new nodes get.
    [NEW, undefined, 'older-1'],
  ];
  for (const [generation, newest, expected] of cases) {
    void it(`${generation} (newest ${newest ?? 'none'}) → ${expected}`, () =>
      assert.equal(bandClass(generation, order, newest), expected));
  }
});
