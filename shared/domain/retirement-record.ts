/**
 * The record a retirement run keeps on the pool lease while it retires one node: enough for
 * the reaper to give the pool back its size and the node its state when the run is gone — which run,
 * which node and instance, the scale set's capacity before the surge, and the surge's instance once seen.
 * Pure: parse and write.
 */

export interface RetirementRecord {
  readonly run: string;
  readonly node: string;
  readonly instanceId: string;
  /** `sku.capacity` before the run's first surge (what it reports; the pool's demand may grow meanwhile). */
  readonly priorCapacity: number;
  /**
   * The scale set's instance ids right before this node's surge was asked: the surge is an instance not
   * among them. Absent in records written before it was kept (and read as before: the newest instance).
   */
  readonly baseline?: readonly string[];
  /**
   * The capacity this node's scale-out asked for (the capacity it read, plus one), once ARM took the
   * request: absent, no surge of this record was asked (a spare stands in, surge is off, or the run died
   * before asking).
   */
  readonly capacityAsked?: number;
  /** The instance the surge added (once seen). */
  readonly surgeInstanceId?: string;
  readonly startedAt: string;
}

export function writeRetirementRecord(record: RetirementRecord): string {
  return JSON.stringify(record);
}

/** The record, `damaged` when the annotation cannot be read, undefined when there is none. */
export function parseRetirementRecord(value: string | undefined): RetirementRecord | 'damaged' | undefined {
  if (value === undefined || value === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return 'damaged';
  }
  if (typeof parsed !== 'object' || parsed === null) return 'damaged';
  const record = parsed as Record<string, unknown>;
  const text = (key: string): string | undefined =>
    typeof record[key] === 'string' && record[key] !== '' ? record[key] : undefined;
  const run = text('run');
  const node = text('node');
  const instanceId = text('instanceId');
  const startedAt = text('startedAt');
  const priorCapacity = record['priorCapacity'];
  if (
    run === undefined ||
    node === undefined ||
    instanceId === undefined ||
    startedAt === undefined ||
    typeof priorCapacity !== 'number' ||
    !Number.isInteger(priorCapacity) ||
    priorCapacity < 0
  ) {
    return 'damaged';
  }
  const baseline = record['baseline'];
  if (
    baseline !== undefined &&
    (!Array.isArray(baseline) || !baseline.every((id) => typeof id === 'string' && id !== ''))
  ) {
    return 'damaged';
  }
  const capacityAsked = record['capacityAsked'];
  if (
    capacityAsked !== undefined &&
    (typeof capacityAsked !== 'number' || !Number.isInteger(capacityAsked) || capacityAsked < 1)
  ) {
    return 'damaged';
  }
  const surgeInstanceId = text('surgeInstanceId');
  return {
    run,
    node,
    instanceId,
    priorCapacity,
    startedAt,
    ...(baseline === undefined ? {} : { baseline: baseline as string[] }),
    ...(capacityAsked === undefined ? {} : { capacityAsked }),
    ...(surgeInstanceId === undefined ? {} : { surgeInstanceId }),
  };
}
