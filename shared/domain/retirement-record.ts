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
  /** `sku.capacity` before the surge: the size the pool goes back to. */
  readonly priorCapacity: number;
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
  const surgeInstanceId = text('surgeInstanceId');
  return {
    run,
    node,
    instanceId,
    priorCapacity,
    startedAt,
    ...(surgeInstanceId === undefined ? {} : { surgeInstanceId }),
  };
}
