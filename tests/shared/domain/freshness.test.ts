import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { freshnessOf, marketplacePublishDate } from '../../../shared/domain/freshness.js';

const NOW = new Date('2026-11-23T12:00:00Z');

void describe('freshnessOf', () => {
  void it("our version: the age of its donor's patches", () => {
    assert.deepEqual(
      freshnessOf({ now: NOW, patchedAt: '2026-11-21T12:00:00Z', version: '2026.1121.120000' }),
      {
        basis: 'donor-patch',
        since: '2026-11-21T12:00:00.000Z',
        ageSeconds: 2 * 86_400,
        detail: 'the donor of 2026.1121.120000 was patched then',
      },
    );
  });
  void it('a marketplace image: its publish date when the version tells it', () => {
    const freshness = freshnessOf({ now: NOW, marketplaceVersion: '22.04.202411120' });
    assert.equal(freshness.basis, 'marketplace-publish-date');
    assert.equal(freshness.since, '2024-11-12T00:00:00.000Z');
  });
  void it('otherwise unknown, and says why', () => {
    assert.equal(freshnessOf({ now: NOW, marketplaceVersion: 'latest' }).basis, 'unknown');
    assert.match(freshnessOf({ now: NOW }).detail, /no patch time/);
  });
});

void describe('marketplacePublishDate', () => {
  const cases: readonly [string, string | undefined][] = [
    ['22.04.202411120', '2024-11-12T00:00:00.000Z'],
    ['0.20241112.0', '2024-11-12T00:00:00.000Z'],
    ['1.2.3', undefined],
    ['22.04.202413450', undefined],
    ['22.04.209901010', undefined],
  ];
  for (const [version, expected] of cases) {
    void it(version, () => assert.equal(marketplacePublishDate(version, NOW)?.toISOString(), expected));
  }
});
