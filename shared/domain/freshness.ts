/**
 * Freshness of a pool: how old are the patches a node created now would boot with. For one of
 * our versions, the donor's last-patch time recorded on the version; for a marketplace image, its
 * publish date when the version name tells it (Canonical's and most publishers' `…YYYYMMDD…` builds).
 * Pure: `now` comes in.
 */
import { parseRfc3339 } from './rfc3339.js';

export type FreshnessBasis = 'donor-patch' | 'marketplace-publish-date' | 'unknown';

export interface Freshness {
  readonly basis: FreshnessBasis;
  /** RFC 3339: when the patches were taken (or the image published). */
  readonly since?: string;
  readonly ageSeconds?: number;
  /** What the age means, in words. */
  readonly detail: string;
}

/** A `YYYYMMDD` run inside a marketplace version (e.g. `22.04.202411120` → 2024-11-12), if it is a real date. */
export function marketplacePublishDate(version: string, now: Date): Date | undefined {
  for (const match of version.matchAll(/(?<!\d)(\d{4})(\d{2})(\d{2})\d{0,2}(?!\d)/g)) {
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (year < 2000 || month < 1 || month > 12 || day < 1 || day > 31) continue;
    const date = new Date(Date.UTC(year, month - 1, day));
    if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) continue;
    if (date.getTime() > now.getTime()) continue;
    return date;
  }
  return undefined;
}

export function freshnessOf(input: {
  readonly now: Date;
  /** The donor's last-patch time (RFC 3339) of the version new nodes get, when it is ours. */
  readonly patchedAt?: string;
  /** The version new nodes get, for the message. */
  readonly version?: string;
  /** The model's marketplace image version, when the model uses one. */
  readonly marketplaceVersion?: string;
}): Freshness {
  const nowMs = input.now.getTime();
  const age = (ms: number): number => Math.max(0, Math.floor((nowMs - ms) / 1000));
  const patchedMs = input.patchedAt === undefined ? undefined : parseRfc3339(input.patchedAt);
  if (patchedMs !== undefined) {
    return {
      basis: 'donor-patch',
      since: new Date(patchedMs).toISOString(),
      ageSeconds: age(patchedMs),
      detail: `the donor of ${input.version ?? 'the current version'} was patched then`,
    };
  }
  if (input.marketplaceVersion !== undefined) {
    const published = marketplacePublishDate(input.marketplaceVersion, input.now);
    if (published !== undefined) {
      return {
        basis: 'marketplace-publish-date',
        since: published.toISOString(),
        ageSeconds: age(published.getTime()),
        detail: `marketplace image version ${input.marketplaceVersion} was published then`,
      };
    }
    return {
      basis: 'unknown',
      detail: `marketplace image version ${input.marketplaceVersion} does not tell its publish date`,
    };
  }
  return { basis: 'unknown', detail: 'the image records no patch time' };
}
