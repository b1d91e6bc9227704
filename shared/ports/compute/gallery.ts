/** The port to a Compute Gallery and its image definitions (contract: index.ts). */
import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
} from '../../domain/compute.js';

export interface GalleryPort {
  /**
   * Creates the gallery when absent (location and tags only used then) and waits: it takes seconds.
   * `knownAbsent`: the caller has just seen it missing, so it is created without reading it again (the
   * same race with another creator as a read just before the create).
   */
  ensure(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    knownAbsent?: boolean,
  ): Promise<void>;
  getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition>;
  /**
   * Creates the definition when absent, without waiting for ARM to finish (seconds): the one that is
   * returned then is the spec asked for, `Creating`; the version's request, the run's next use of it,
   * fails if the creation did. Never changes an existing one. `knownAbsent`: the caller has just seen it
   * missing, so it is created without reading it again.
   */
  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    knownAbsent?: boolean,
  ): Promise<ImageDefinition>;
}
