/**
 * How `plan` says a pool's donor would be captured: the mode the plan chose, the setting it came from, and
 * whether `auto` fell back from live capture to drain-and-stop (shared/domain/capture-mode.ts decides; the
 * plan carries the decision and the setting, so nothing here parses the reason). A live capture does not
 * fall back at run time: one that fails thaws, detaches and deletes its copy, and the run fails
 * (functions/orchestrations/refresh-pool/live-capture.phase.ts).
 */
import { scrubbedDiskOf } from '../shared/application/pool-plan.js';
import type { PoolRefreshResult } from '../shared/application/refresh-contracts.js';
import type { CaptureMode, CaptureModeSetting, ScrubbedDisk } from '../shared/domain/capture-mode.js';

/** One pool's capture as `plan --json` writes it under `captures`. */
export interface CaptureSummary {
  readonly cluster: string;
  readonly pool: string;
  readonly mode: CaptureMode;
  /** `capture.mode` as set (`auto` unless an operator chose). */
  readonly setting: CaptureModeSetting;
  /** True when `auto` took drain-and-stop because live capture is not known to work here (`reason` says why). */
  readonly fellBackFromLive: boolean;
  /** The disk de-identified: the donor's own, or a copy of it (live; kubeadm under drain-and-stop). */
  readonly scrubbed: ScrubbedDisk;
  readonly reason: string;
}

/** The capture of a pool the plan would refresh; undefined when it would not capture anything. */
export function captureSummaryOf(pool: PoolRefreshResult): CaptureSummary | undefined {
  const plan = pool.plan;
  const capture = plan?.capture;
  if (plan === undefined || capture === undefined) return undefined;
  const setting = plan.settings.captureMode;
  return {
    cluster: pool.cluster,
    pool: pool.pool,
    mode: capture.mode,
    setting,
    fellBackFromLive: setting === 'auto' && capture.mode !== 'live',
    scrubbed: scrubbedDiskOf(plan),
    reason: capture.reason,
  };
}

/** The plan table's CAPTURE cell: `live`, `drain-and-stop`, `drain-and-stop (auto fell back from live)`… */
export function captureCell(summary: CaptureSummary | undefined): string {
  if (summary === undefined) return '-';
  const notes = [
    ...(summary.fellBackFromLive ? ['auto fell back from live'] : []),
    ...(summary.mode !== 'live' && summary.scrubbed === 'copy' ? ['scrubs a copy'] : []),
  ];
  return notes.length === 0 ? summary.mode : `${summary.mode} (${notes.join(', ')})`;
}
