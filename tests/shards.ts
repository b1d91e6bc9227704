/**
 * A fixed partition of a sweep into shards, one test file per shard, so that the suite's two processes at a
 * time stay busy and no one file dominates its wall time (tests/run-tiers.mjs). Shard k of n takes the k-th
 * of n contiguous, nearly equal slices of the items in their order: every item is in exactly one shard,
 * and an item added later (a new variant, a new fault kind) lands in a shard without any file changing.
 * Contiguous slices keep the items that share a setup (a variant's uninterrupted run) mostly together.
 */
export function shardOf<T>(items: readonly T[], shard: number, of: number): T[] {
  if (!Number.isInteger(of) || of < 1) throw new Error(`shards: ${of} is not a positive whole number`);
  if (!Number.isInteger(shard) || shard < 1 || shard > of) {
    throw new Error(`shards: shard ${shard} is not one of 1..${of}`);
  }
  const start = Math.floor(((shard - 1) * items.length) / of);
  const end = Math.floor((shard * items.length) / of);
  return items.slice(start, end);
}
