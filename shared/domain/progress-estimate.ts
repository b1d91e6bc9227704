/**
 * When an operation that reports its progress is likely done: ARM's gallery image versions report each
 * region's replication `progress` (0–100) under `$expand=ReplicationStatus`
 * (https://learn.microsoft.com/rest/api/compute/gallery-image-versions/get). A wait that missed the
 * expected completion reads again when the progress so far says the rest should be done, instead of
 * reading every few seconds for as long as the operation overruns.
 */

/**
 * Seconds from now until an operation `progressPercent` done after `elapsedSeconds` should finish, at the
 * pace it went so far: `elapsed × (100 − progress) / progress`. Undefined when the progress says nothing
 * (absent, not above 0, or 100 and more: done or about to be).
 */
export function secondsToFinish(
  elapsedSeconds: number,
  progressPercent: number | undefined,
): number | undefined {
  if (progressPercent === undefined || !Number.isFinite(progressPercent)) return undefined;
  if (progressPercent <= 0 || progressPercent >= 100 || elapsedSeconds <= 0) return undefined;
  return (elapsedSeconds * (100 - progressPercent)) / progressPercent;
}
