/**
 * How auto mode chooses the prototype node of a pool (docs/design.md#choosing-the-prototype-node). Settings produce this object;
 * the pure selection function consumes it.
 */
export interface SelectionPolicy {
  /** Annotation holding the RFC 3339 time the node last needed (and got) a patch reboot. */
  readonly lastPatchAnnotation: string;
  /** Annotation whose presence means a reboot is pending or under way: such a node is not a candidate. */
  readonly pendingRebootAnnotation: string;
  /** Any of these annotations present (whatever its value) excludes the node. */
  readonly ignoreAnnotations: readonly string[];
  /** Node names never to use as a prototype. */
  readonly excludeNodeNames: readonly string[];
  /** A candidate must have been Ready (condition `Ready=True`) for at least this long. */
  readonly minimumReadySeconds: number;
  /** Fewer candidates than this means no refresh (we want a choice, not the only survivor). */
  readonly minimumCandidates: number;
  /**
   * When no node qualifies and the pool's newest image is older than this, retry without the
   * "patched after the current image" rule. Undefined disables the fallback.
   */
  readonly maximumImageAgeSeconds?: number;
}

export const DEFAULT_SELECTION_POLICY: SelectionPolicy = {
  lastPatchAnnotation: 'weave.works/kured-most-recent-reboot-needed',
  pendingRebootAnnotation: 'weave.works/kured-reboot-in-progress',
  ignoreAnnotations: [],
  excludeNodeNames: [],
  minimumReadySeconds: 3600,
  minimumCandidates: 1,
};
