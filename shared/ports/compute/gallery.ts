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
   * Creates the definition when absent and waits (seconds). Never changes an existing one. `knownAbsent`:
   * the caller has just seen it missing, so it is created without reading it again.
   */
  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    knownAbsent?: boolean,
  ): Promise<ImageDefinition>;
}
