/** What the copies the caller names itself (snapshot, disk, image version) share. */

/** A copy (snapshot, disk, image version) the caller names itself. */
export interface NamedByCaller {
  /**
   * The run made this name up after reading what exists (from the version name it chose under the lease):
   * the PUT goes without a read first; a retry that meets its earlier attempt's resource is told by ARM's
   * conflict and judged as usual.
   */
  readonly newName?: boolean;
}
