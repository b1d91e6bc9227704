// Table tests for image version names: parsing, ordering (kamino included), next-name and provenance tags.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buildImageVersionTags,
  compareImageVersions,
  donorPatchedAtOf,
  IMAGE_VERSION_TAG_KEYS,
  type ImageVersionProvenance,
  INT32_MAX,
  isKaminoVersion,
  nextImageVersionName,
  parseImageVersion,
  parseImageVersionTags,
  RUN_TIMELINE_TAG_KEYS,
  runTimelineTagsOf,
  tagKeyProblem,
  tagValueProblem,
} from '../../../shared/domain/image-version.js';

void describe('parseImageVersion', () => {
  const valid: readonly (readonly [string, string, string | undefined])[] = [
    ['2026.1122.143059', 'prototype', '2026-11-22T14:30:59.000Z'],
    ['2026.105.7', 'prototype', '2026-01-05T00:00:07.000Z'],
    ['2028.229.0', 'prototype', '2028-02-29T00:00:00.000Z'],
    ['2026.1231.235959', 'prototype', '2026-12-31T23:59:59.000Z'],
    ['2026.1122.235960', 'prototype', undefined],
    ['2026.1122.999999', 'prototype', undefined],
    ['2021.05.19', 'kamino', '2021-05-19T00:00:00.000Z'],
    ['2021.12.31', 'kamino', '2021-12-31T00:00:00.000Z'],
    ['2021.02.30', 'other', undefined],
    ['2021.5.19', 'other', undefined],
    ['1.0.0', 'other', undefined],
    ['0.0.0', 'other', undefined],
    [`${INT32_MAX}.${INT32_MAX}.${INT32_MAX}`, 'other', undefined],
  ];
  for (const [name, scheme, encodedTime] of valid) {
    void it(`${name} is ${scheme}`, () => {
      const parsed = parseImageVersion(name);
      assert.ok(parsed);
      assert.equal(parsed.scheme, scheme);
      assert.equal(parsed.encodedTime, encodedTime);
    });
  }

  const invalid = [
    '',
    '1.0',
    '1.0.0.0',
    '1..0',
    '-1.0.0',
    '1.0.0 ',
    'v1.0.0',
    '1.0.x',
    `${INT32_MAX + 1}.0.0`,
    `0.0.${INT32_MAX + 1}`,
    '99999999999.0.0',
    'latest',
  ];
  for (const name of invalid)
    void it(`rejects ${JSON.stringify(name)}`, () => assert.equal(parseImageVersion(name), undefined));
});

void describe('isKaminoVersion', () => {
  const cases: readonly (readonly [string, boolean])[] = [
    ['2021.05.19', true],
    ['2021.01.01', true],
    ['2021.13.01', false],
    ['2021.1.1', false],
    ['2026.1122.143059', false],
  ];
  for (const [name, kamino] of cases)
    void it(`${name} → ${kamino}`, () => assert.equal(isKaminoVersion(name), kamino));
});

void describe('compareImageVersions', () => {
  // Each pair: left sorts strictly before right.
  const older: readonly (readonly [string, string])[] = [
    ['2021.05.19', '2021.519.0'],
    ['2021.12.31', '2021.101.0'],
    ['2026.12.31', '2026.101.1'],
    ['2025.12.31', '2026.101.0'],
    ['2021.05.19', '2021.05.20'],
    ['2026.1122.143059', '2026.1122.143100'],
    ['2026.1231.235959', '2027.101.0'],
    ['2026.929.0', '2026.1001.0'],
    ['1.9.0', '1.10.0'],
    ['2021.05.19', '2021.5.19'],
    ['0.0.0', `0.0.${INT32_MAX}`],
  ];
  for (const [left, right] of older) {
    void it(`${left} < ${right}`, () => {
      assert.ok(compareImageVersions(left, right) < 0);
      assert.ok(compareImageVersions(right, left) > 0);
    });
  }
  void it('is zero for the same name', () =>
    assert.equal(compareImageVersions('2026.1122.1', '2026.1122.1'), 0));
  void it('sorts a mixed list', () => {
    const names = [
      '2026.1122.143059',
      '2021.05.19',
      '2026.101.0',
      '2021.12.31',
      '2026.1122.143060',
      '2022.01.01',
    ];
    assert.deepEqual([...names].sort(compareImageVersions), [
      '2021.05.19',
      '2021.12.31',
      '2022.01.01',
      '2026.101.0',
      '2026.1122.143059',
      '2026.1122.143060',
    ]);
  });
  void it('throws on an invalid name', () => {
    assert.throws(
      () => compareImageVersions('latest', '1.0.0'),
      /comparing image versions: "latest" is not a version name/,
    );
  });
});

void describe('nextImageVersionName', () => {
  const cases: readonly (readonly [string, string, readonly string[], string])[] = [
    ['first version', '2026-11-22T14:30:59Z', [], '2026.1122.143059'],
    ['no leading zeros', '2026-01-05T00:00:07Z', [], '2026.105.7'],
    ['leap day', '2028-02-29T23:59:59Z', [], '2028.229.235959'],
    ['new year midnight', '2027-01-01T00:00:00Z', ['2026.1231.235959'], '2027.101.0'],
    ['last second of the year', '2026-12-31T23:59:59.999Z', [], '2026.1231.235959'],
    [
      'after kamino versions of the same day',
      '2021-05-19T08:00:00Z',
      ['2021.05.18', '2021.05.19'],
      '2021.519.80000',
    ],
    ['January after kamino December', '2022-01-01T00:00:01Z', ['2021.12.31'], '2022.101.1'],
    ['same second collision bumps', '2026-11-22T14:30:59Z', ['2026.1122.143059'], '2026.1122.143060'],
    [
      'second collision in the same second bumps again',
      '2026-11-22T14:30:59Z',
      ['2026.1122.143059', '2026.1122.143060'],
      '2026.1122.143061',
    ],
    ['clock behind the gallery', '2026-11-22T10:00:00Z', ['2026.1122.143059'], '2026.1122.143060'],
    ['later second needs no bump', '2026-11-22T14:31:00Z', ['2026.1122.143059'], '2026.1122.143100'],
    ['patch at int32 max rolls the minor', '2026-01-01T00:00:00Z', [`2026.1122.${INT32_MAX}`], '2026.1123.0'],
    [
      'ignores order of existing names',
      '2026-11-22T00:00:00Z',
      ['2026.1122.5', '2026.1122.9', '2026.1122.1'],
      '2026.1122.10',
    ],
  ];
  for (const [name, now, existing, expected] of cases) {
    void it(name, () => {
      const next = nextImageVersionName(new Date(now), existing);
      assert.equal(next, expected);
      for (const other of existing) assert.ok(compareImageVersions(next, other) > 0);
    });
  }
  void it('rejects an invalid date', () => {
    assert.throws(() => nextImageVersionName(new Date(Number.NaN), []), /invalid Date/);
  });
  void it('rejects an invalid existing name', () => {
    assert.throws(
      () => nextImageVersionName(new Date('2026-01-01T00:00:00Z'), ['1.0']),
      /naming an image version/,
    );
  });
  void it('produces only int32 components for the latest representable year', () => {
    const name = nextImageVersionName(new Date('9999-12-31T23:59:59Z'), []);
    assert.equal(name, '9999.1231.235959');
  });
});

const PROVENANCE: ImageVersionProvenance = {
  sourceNode: 'k8s-agents-31415926-vmss000003',
  sourceVmId: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  cluster: 'prod',
  pool: 'agents',
  patchedAt: '2026-11-21T03:12:44Z',
  runId: 'refresh-prod-agents-20261122T1430',
};

void describe('image version tags', () => {
  void it('round-trips through build and parse', () => {
    const tags = buildImageVersionTags(PROVENANCE);
    assert.equal(tags[IMAGE_VERSION_TAG_KEYS.createdBy], 'vmss-prototype');
    assert.deepEqual(parseImageVersionTags(tags), { kind: 'ours', provenance: PROVENANCE });
  });

  void it('uses tag names Azure accepts', () => {
    for (const key of Object.values(IMAGE_VERSION_TAG_KEYS)) assert.equal(tagKeyProblem(key), undefined);
  });

  void it('matches tag names case-insensitively', () => {
    const tags = Object.fromEntries(
      Object.entries(buildImageVersionTags(PROVENANCE)).map(([k, v]) => [k.toUpperCase(), v]),
    );
    assert.equal(parseImageVersionTags(tags).kind, 'ours');
  });

  void it('reports versions without our tag as foreign', () => {
    assert.deepEqual(parseImageVersionTags({ owner: 'kamino' }), { kind: 'foreign' });
    assert.deepEqual(parseImageVersionTags(undefined), { kind: 'foreign' });
  });

  void it('reports edited tags as damaged', () => {
    const tags = buildImageVersionTags(PROVENANCE);
    delete tags[IMAGE_VERSION_TAG_KEYS.runId];
    tags[IMAGE_VERSION_TAG_KEYS.patchedAt] = 'yesterday';
    const parsed = parseImageVersionTags(tags);
    assert.equal(parsed.kind, 'damaged');
    assert.ok(parsed.kind === 'damaged');
    assert.deepEqual(parsed.problems, [
      'runId is empty',
      'patchedAt "yesterday" is not an RFC 3339 timestamp',
    ]);
  });

  const badProvenance: readonly (readonly [string, Partial<ImageVersionProvenance>, RegExp])[] = [
    ['empty node', { sourceNode: '' }, /sourceNode is empty/],
    [
      'value of 257 characters',
      { runId: 'r'.repeat(257) },
      /runId has 257 characters, a tag value at most 256/,
    ],
    ['date without time', { patchedAt: '2026-11-21' }, /patchedAt "2026-11-21" is not an RFC 3339/],
    ['impossible time', { patchedAt: '2026-13-45T99:00:00Z' }, /not an RFC 3339/],
  ];
  for (const [name, patch, problem] of badProvenance) {
    void it(`refuses to build with ${name}`, () => {
      assert.throws(() => buildImageVersionTags({ ...PROVENANCE, ...patch }), problem);
    });
  }
  void it('accepts a value of exactly 256 characters and an offset timestamp', () => {
    const tags = buildImageVersionTags({
      ...PROVENANCE,
      runId: 'r'.repeat(256),
      patchedAt: '2026-11-21T04:12:44+01:00',
    });
    assert.equal(tags[IMAGE_VERSION_TAG_KEYS.runId]?.length, 256);
  });

  const keys: readonly (readonly [string, boolean])[] = [
    ['vmss-prototype.pool', true],
    ['k'.repeat(512), true],
    ['k'.repeat(513), false],
    ['', false],
    ...['<', '>', '%', '&', '\\', '?', '/'].map((c): [string, boolean] => [`a${c}b`, false]),
  ];
  for (const [key, ok] of keys) {
    void it(`tag name ${JSON.stringify(key.slice(0, 20))}${key.length > 20 ? '…' : ''} ${ok ? 'accepted' : 'rejected'}`, () => {
      assert.equal(tagKeyProblem(key) === undefined, ok);
    });
  }
  void it('limits tag values to 256 characters', () => {
    assert.equal(tagValueProblem('v'.repeat(256)), undefined);
    assert.match(tagValueProblem('v'.repeat(257)) ?? '', /at most 256/);
  });
});

void describe('runTimelineTagsOf', () => {
  const cases: readonly (readonly [string, Record<string, string> | undefined, object])[] = [
    ['no tags', undefined, {}],
    [
      'a kubeadm version: drain-and-stop, new nodes run the pool bootstrap',
      {
        [RUN_TIMELINE_TAG_KEYS.captureMode]: 'drain-and-stop',
        [RUN_TIMELINE_TAG_KEYS.newNodes]: 'run-pool-bootstrap',
      },
      { captureMode: 'drain-and-stop', newNodes: 'run-pool-bootstrap' },
    ],
    [
      'names matched case-insensitively',
      { 'VMSS-Prototype.New-Nodes': 'boot-from-image' },
      { newNodes: 'boot-from-image' },
    ],
    [
      'unknown values left out',
      { [RUN_TIMELINE_TAG_KEYS.newNodes]: 'sometimes', [RUN_TIMELINE_TAG_KEYS.captureMode]: 'magic' },
      {},
    ],
  ];
  for (const [name, tags, expected] of cases) {
    void it(name, () => assert.deepEqual(runTimelineTagsOf(tags), expected));
  }
});

void describe('donorPatchedAtOf', () => {
  const CASES: readonly [string, Record<string, string> | undefined, string | undefined][] = [
    [
      'the donor’s patch',
      { 'vmss-prototype.patched-at': '2026-11-25T10:00:00Z', 'vmss-prototype.patched-at-basis': 'donor' },
      '2026-11-25T10:00:00Z',
    ],
    [
      'a version from before the basis tag',
      { 'vmss-prototype.patched-at': '2026-11-25T10:00:00Z' },
      '2026-11-25T10:00:00Z',
    ],
    [
      'the capture time stands in: unknown',
      { 'vmss-prototype.patched-at': '2026-11-27T10:00:00Z', 'vmss-prototype.patched-at-basis': 'capture' },
      undefined,
    ],
    ['no tags', undefined, undefined],
  ];
  for (const [name, tags, expected] of CASES) {
    void it(name, () => assert.equal(donorPatchedAtOf(tags), expected));
  }
});
