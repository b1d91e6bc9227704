/** The fake gallery port: galleries and image definitions, created at once when absent. */
import type {
  GalleryRef,
  ImageDefinition,
  ImageDefinitionRef,
  ImageDefinitionSpec,
} from '../../../domain/compute.js';
import { NotFoundError } from '../../../domain/errors.js';
import { galleryImageResourceId } from '../../../domain/resource-id.js';
import type { GalleryPort } from '../../compute/gallery.js';
import type { ComputeMethod } from '../../compute/index.js';
import type { CallLog } from '../recording-fake.js';
import type { ComputeEstate } from './estate.js';
import { definitionKey, galleryKey } from './keys.js';

export class FakeGallery implements GalleryPort {
  constructor(
    private readonly log: CallLog<ComputeMethod>,
    private readonly estate: ComputeEstate,
  ) {}

  ensure(
    ref: GalleryRef,
    location: string,
    tags: Readonly<Record<string, string>>,
    _knownAbsent?: boolean,
  ): Promise<void> {
    return this.log.call('gallery.ensure', [ref, location, tags], () => {
      this.estate.galleries.add(galleryKey(ref));
    });
  }

  getImageDefinition(ref: ImageDefinitionRef): Promise<ImageDefinition> {
    return this.log.call('gallery.getImageDefinition', [ref], () =>
      this.estate.definition(ref, 'reading image definition'),
    );
  }

  ensureImageDefinition(
    ref: ImageDefinitionRef,
    location: string,
    spec: ImageDefinitionSpec,
    _knownAbsent?: boolean,
  ): Promise<ImageDefinition> {
    return this.log.call('gallery.ensureImageDefinition', [ref, location, spec], () => {
      const existing = this.estate.definitions.get(definitionKey(ref));
      if (existing !== undefined) return existing;
      if (!this.estate.galleries.has(galleryKey(ref))) {
        throw new NotFoundError(
          'ParentResourceNotFound',
          `ensuring image definition ${ref.imageName}: no gallery ${ref.galleryName}`,
        );
      }
      const definition: ImageDefinition = {
        id: galleryImageResourceId(ref),
        ref: { ...ref },
        location,
        provisioningState: 'Succeeded',
        spec,
      };
      this.estate.definitions.set(definitionKey(ref), definition);
      return definition;
    });
  }
}
