/**
 * When the donor may be started again after its OS disk snapshot was asked for. An Azure snapshot is a
 * point-in-time copy usable as soon as the create call returns (docs/design.md#snapshot): only
 * Premium SSD v2 and Ultra disks fill it by a background copy, during which the source must not change.
 * Those cannot be OS disks today, so `auto` starts the donor at once for every OS disk Azure allows.
 */

/** `capture.waitForSnapshotCompletion`. */
export type SnapshotCompletionWait = 'auto' | 'always' | 'never';

/** Disk types whose snapshot is filled by a background copy (its `completionPercent` climbs). */
export const BACKGROUND_COPY_DISK_TYPES: readonly string[] = ['PremiumV2_LRS', 'UltraSSD_LRS'];

/**
 * True when the donor must stay stopped until its snapshot completed: always with `always`, never with
 * `never`; with `auto`, for the disk types that need the background copy. An unknown disk type is not
 * one of them (the VM read did not say it; Azure refuses those types as OS disks).
 */
export function mustWaitForSnapshotCompletion(
  setting: SnapshotCompletionWait,
  osDiskType: string | undefined,
): boolean {
  if (setting === 'always') return true;
  if (setting === 'never') return false;
  if (osDiskType === undefined) return false;
  return BACKGROUND_COPY_DISK_TYPES.some((type) => type.toLowerCase() === osDiskType.toLowerCase());
}
