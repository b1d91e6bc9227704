/** The port to a gallery image definition's versions (contract: index.ts). */
import type {
  ImageDefinitionRef,
  ImageVersion,
  ImageVersionRef,
  ProvisioningState,
  StorageAccountType,
} from '../../domain/compute.js';
import type { NamedByCaller } from './named-by-caller.js';

export interface ImageVersionRequest extends NamedByCaller {
  readonly ref: ImageVersionRef;
  readonly location: string;
  /** The OS disk image's source: a snapshot or a managed disk (`storageProfile.osDiskImage.source.id`). */
  readonly sourceId: string;
  readonly storageAccountType: StorageAccountType;
  /** Regions to replicate to besides `location`. */
  readonly extraRegions: readonly string[];
  /** Created hidden from `latest`; flipped with `requestExclusion` once it Succeeded. */
  readonly excludeFromLatest: boolean;
  readonly tags: Readonly<Record<string, string>>;
}

/** A version's provisioning state and whether it is hidden from `latest`, as one ARM answer said. */
export interface ImageVersionVisibility {
  readonly provisioningState: ProvisioningState;
  readonly excludeFromLatest: boolean;
}

export interface ImageVersionsPort {
  list(ref: ImageDefinitionRef): Promise<ImageVersion[]>;
  get(ref: ImageVersionRef): Promise<ImageVersion>;
  /**
   * PUT of the version. ARM refuses some requests synchronously (e.g. ZRS in a region without zones):
   * those throw `TerminalError` with the ARM code, or code `ZrsUnsupported` for that case.
   */
  request(request: ImageVersionRequest): Promise<void>;
  /**
   * PATCH `excludeFromLatest`, adding `addTags` to the version's tags in the same request; nothing is
   * written when the version already says so. Returns what ARM answered about the version: the PATCH's
   * response, or the read that found nothing to change (undefined when the answer carried neither field).
   * A caller waiting for the change need not read again when it says Succeeded with the wanted flag.
   * `knownTags`: the version's tags as the caller read them, with no target region carrying a flag of its
   * own: the PATCH is sent without reading the version first (see the ARM adapter).
   */
  requestExclusion(
    ref: ImageVersionRef,
    excludeFromLatest: boolean,
    addTags?: Readonly<Record<string, string>>,
    knownTags?: Readonly<Record<string, string>>,
  ): Promise<ImageVersionVisibility | undefined>;
  /** Replaces a version's tags as a whole (PATCH). */
  requestTags(ref: ImageVersionRef, tags: Readonly<Record<string, string>>): Promise<void>;
  requestDeletion(ref: ImageVersionRef): Promise<void>;
}
