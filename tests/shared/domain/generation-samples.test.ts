import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { GenerationSample } from '../../../shared/domain/generation-samples.js';
import {
  appendGenerationSample,
  countGenerations,
  MAX_GENERATION_SAMPLES,
  MAX_GENERATION_SAMPLES_CHARS,
  parseGenerationSamples,
  recordGenerationSample,
  serialiseGenerationSamples,
} from '../../../shared/domain/generation-samples.js';

const OLD = '2026.1120.3';
const NEW = '2026.1127.1';

function sample(at: string, counts: Record<string, number>): GenerationSample {
  return { at, counts };
}

void describe('countGenerations', () => {
  void it('counts the nodes of each generation, names in order', () => {
    const counts = countGenerations([NEW, OLD, NEW, 'unknown', NEW]);
    assert.deepEqual(counts, { [OLD]: 1, [NEW]: 3, unknown: 1 });
    assert.deepEqual(Object.keys(counts), [OLD, NEW, 'unknown']);
  });
  void it('no nodes: no generations', () => assert.deepEqual(countGenerations([]), {}));
});

void describe('parseGenerationSamples', () => {
  const good = sample('2026-11-27T02:00:00.000Z', { [OLD]: 4 });
  const cases: { name: string; value: string | undefined; expected: GenerationSample[] }[] = [
    { name: 'no record', value: undefined, expected: [] },
    { name: 'empty', value: '  ', expected: [] },
    { name: 'not JSON', value: '{"at":', expected: [] },
    { name: 'not a list', value: '{"at":"2026-11-27T02:00:00Z","counts":{}}', expected: [] },
    { name: 'a list of numbers', value: '[1,2]', expected: [] },
    { name: 'one good sample', value: JSON.stringify([good]), expected: [good] },
    {
      name: 'a bad time, a bad count, a list for counts and a null are left out',
      value: JSON.stringify([
        { at: 'yesterday', counts: { [OLD]: 1 } },
        { at: '2026-11-27T01:00:00Z', counts: { [OLD]: -1 } },
        { at: '2026-11-27T01:00:00Z', counts: { [OLD]: 1.5 } },
        { at: '2026-11-27T01:00:00Z', counts: [3] },
        null,
        good,
      ]),
      expected: [good],
    },
    {
      name: 'generations without nodes are dropped',
      value: JSON.stringify([{ at: good.at, counts: { [OLD]: 4, [NEW]: 0 } }]),
      expected: [good],
    },
    {
      name: 'out of order: sorted by time',
      value: JSON.stringify([good, sample('2026-11-26T02:00:00Z', { [OLD]: 5 })]),
      expected: [sample('2026-11-26T02:00:00Z', { [OLD]: 5 }), good],
    },
  ];
  for (const { name, value, expected } of cases) {
    void it(name, () => assert.deepEqual(parseGenerationSamples(value), expected));
  }

  void it('a record past the bounds keeps its newest samples', () => {
    const many = Array.from({ length: MAX_GENERATION_SAMPLES + 5 }, (_, index) =>
      sample(new Date(Date.UTC(2026, 10, 1, index)).toISOString(), { [OLD]: index + 1 }),
    );
    const parsed = parseGenerationSamples(JSON.stringify(many));
    assert.equal(parsed.length, MAX_GENERATION_SAMPLES);
    assert.deepEqual(parsed.at(-1), many.at(-1));
  });
});

void describe('appendGenerationSample', () => {
  const T0 = '2026-11-20T02:00:00.000Z';
  const T1 = '2026-11-27T02:00:00.000Z';
  const T1_SOON = '2026-11-27T02:03:00.000Z';
  const T2 = '2026-11-28T02:00:00.000Z';
  const T3 = '2026-11-29T02:00:00.000Z';
  const A = { [OLD]: 6 };
  const B = { [OLD]: 4, [NEW]: 2 };
  const cases: {
    name: string;
    samples: GenerationSample[];
    added: GenerationSample;
    expected: GenerationSample[];
  }[] = [
    { name: 'the first reading', samples: [], added: sample(T0, A), expected: [sample(T0, A)] },
    {
      name: 'a change is appended',
      samples: [sample(T0, A)],
      added: sample(T1, B),
      expected: [sample(T0, A), sample(T1, B)],
    },
    {
      name: 'a repeat within minutes is dropped (the first keeps its time)',
      samples: [sample(T0, A), sample(T1, B)],
      added: sample(T1_SOON, B),
      expected: [sample(T0, A), sample(T1, B)],
    },
    {
      name: 'a later repeat marks the end of the run of identical readings',
      samples: [sample(T0, A), sample(T1, B)],
      added: sample(T2, B),
      expected: [sample(T0, A), sample(T1, B), sample(T2, B)],
    },
    {
      name: 'a third identical reading moves that end mark, the list does not grow',
      samples: [sample(T0, A), sample(T1, B), sample(T2, B)],
      added: sample(T3, B),
      expected: [sample(T0, A), sample(T1, B), sample(T3, B)],
    },
    {
      name: 'counts compare by value, whatever the key order and empty generations',
      samples: [sample(T1, B)],
      added: sample(T1_SOON, { [NEW]: 2, [OLD]: 4, unknown: 0 }),
      expected: [sample(T1, B)],
    },
    {
      name: 'an older reading (another runner behind in time) goes in its place',
      samples: [sample(T0, A), sample(T2, B)],
      added: sample(T1, { [OLD]: 5, [NEW]: 1 }),
      expected: [sample(T0, A), sample(T1, { [OLD]: 5, [NEW]: 1 }), sample(T2, B)],
    },
    {
      name: 'a reading with a bad time is ignored',
      samples: [sample(T0, A)],
      added: sample('now', B),
      expected: [sample(T0, A)],
    },
  ];
  for (const { name, samples, added, expected } of cases) {
    void it(name, () => assert.deepEqual(appendGenerationSample(samples, added), expected));
  }

  void it(`keeps at most ${MAX_GENERATION_SAMPLES} samples, dropping the oldest`, () => {
    let samples: GenerationSample[] = [];
    for (let index = 0; index < MAX_GENERATION_SAMPLES + 3; index++) {
      const at = new Date(Date.UTC(2026, 10, 1, index)).toISOString();
      samples = appendGenerationSample(samples, sample(at, { [OLD]: index % 2 === 0 ? 3 : 4 }));
    }
    assert.equal(samples.length, MAX_GENERATION_SAMPLES);
    assert.equal(samples[0]?.at, new Date(Date.UTC(2026, 10, 1, 3)).toISOString());
  });

  void it(`stays within ${MAX_GENERATION_SAMPLES_CHARS} characters with many generations`, () => {
    let samples: GenerationSample[] = [];
    for (let index = 0; index < MAX_GENERATION_SAMPLES; index++) {
      const at = new Date(Date.UTC(2026, 10, 1, index)).toISOString();
      const counts = Object.fromEntries(
        Array.from({ length: 8 }, (_, g) => [`2026.${1101 + g}.${100000 + index}`, g + 1]),
      );
      samples = appendGenerationSample(samples, sample(at, counts));
    }
    const text = serialiseGenerationSamples(samples);
    assert.ok(text.length <= MAX_GENERATION_SAMPLES_CHARS, `${text.length} characters`);
    assert.ok(samples.length > 1 && samples.length < MAX_GENERATION_SAMPLES);
    assert.equal(
      samples.at(-1)?.at,
      new Date(Date.UTC(2026, 10, 1, MAX_GENERATION_SAMPLES - 1)).toISOString(),
    );
  });
});

void describe('recordGenerationSample', () => {
  void it('round-trips through the annotation text', () => {
    const first = recordGenerationSample(undefined, sample('2026-11-27T02:00:00.000Z', { [OLD]: 3 }));
    assert.equal(first, '[{"at":"2026-11-27T02:00:00.000Z","counts":{"2026.1120.3":3}}]');
    const second = recordGenerationSample(first, sample('2026-11-28T02:00:00.000Z', { [OLD]: 2, [NEW]: 1 }));
    assert.deepEqual(parseGenerationSamples(second), [
      sample('2026-11-27T02:00:00.000Z', { [OLD]: 3 }),
      sample('2026-11-28T02:00:00.000Z', { [OLD]: 2, [NEW]: 1 }),
    ]);
  });
  void it('a garbled record starts over', () => {
    assert.deepEqual(
      parseGenerationSamples(
        recordGenerationSample('not json', sample('2026-11-27T02:00:00.000Z', { [NEW]: 1 })),
      ),
      [sample('2026-11-27T02:00:00.000Z', { [NEW]: 1 })],
    );
  });
});
