/**
 * ARM routes of marketplace VM images (`locations/{l}/publishers/{p}/artifacttypes/vmimage/offers/{o}/
 * skus/{s}/versions[/{v}]`): the read the product attempts for an image's Hyper-V generation and
 * architecture. The catalogue is what the seeded scale sets use: each marketplace reference is
 * published in two versions (or the version it names), with the scale set's generation and OS.
 */
import { HttpError, type Reply, type RequestContext } from './arm-http.js';
import { type AddRoute, ArmRoutes } from './arm-routes.js';
import { isObject, textOr } from './compute-state.js';

const ACTION = 'Microsoft.Compute/locations/publishers/artifacttypes/offers/skus/versions/read';
const IMAGE_PATH = 'locations/:location/publishers/:publisher/artifacttypes/vmimage/offers/:offer/skus/:sku';

/** Versions a `latest` reference resolves among, oldest first (the second is the newest). */
export const MARKETPLACE_VERSIONS = ['1.0.202610150', '1.0.202611010'] as const;

interface MarketplaceImage {
  publisher: string;
  offer: string;
  sku: string;
  versions: string[];
  hyperVGeneration: string;
  architecture: string;
  osType: string;
}

export class MarketplaceRoutes extends ArmRoutes {
  register(add: AddRoute): void {
    add(
      'GET',
      `${IMAGE_PATH}/versions`,
      'compute',
      ACTION,
      'locations/publishers/artifacttypes/offers/skus/versions',
      (c) => this.listVersions(c),
    );
    add(
      'GET',
      `${IMAGE_PATH}/versions/:version`,
      'compute',
      ACTION,
      'locations/publishers/artifacttypes/offers/skus/versions',
      (c) => this.getVersion(c),
    );
  }

  private catalogue(): MarketplaceImage[] {
    const images = new Map<string, MarketplaceImage>();
    for (const scaleSet of this.state.listScaleSets()) {
      const reference = scaleSet.imageReference;
      const publisher = textOr(reference.publisher, '');
      const offer = textOr(reference.offer, '');
      const sku = textOr(reference.sku, '');
      if (publisher === '' || offer === '' || sku === '') continue;
      const key = `${publisher}/${offer}/${sku}`.toLowerCase();
      const model = this.state.getScaleSetModel(scaleSet.id) ?? {};
      const profile = isObject(model.virtualMachineProfile) ? model.virtualMachineProfile : {};
      const storage = isObject(profile.storageProfile) ? profile.storageProfile : {};
      const osDisk = isObject(storage.osDisk) ? storage.osDisk : {};
      const image = images.get(key) ?? {
        publisher,
        offer,
        sku,
        versions: [...MARKETPLACE_VERSIONS],
        hyperVGeneration: scaleSet.hyperVGeneration,
        architecture: scaleSet.architecture,
        osType: textOr(osDisk.osType, 'Linux'),
      };
      const version = textOr(reference.version, 'latest');
      if (version.toLowerCase() !== 'latest' && !image.versions.includes(version))
        image.versions.push(version);
      images.set(key, image);
    }
    return [...images.values()];
  }

  private find(context: RequestContext): MarketplaceImage | undefined {
    const wanted = [context.params.publisher, context.params.offer, context.params.sku]
      .join('/')
      .toLowerCase();
    return this.catalogue().find(
      (image) => `${image.publisher}/${image.offer}/${image.sku}`.toLowerCase() === wanted,
    );
  }

  private versionId(context: RequestContext, image: MarketplaceImage, version: string): string {
    return `/Subscriptions/${context.subscriptionId}/Providers/Microsoft.Compute/Locations/${context.params.location ?? ''}/Publishers/${image.publisher}/ArtifactTypes/VMImage/Offers/${image.offer}/Skus/${image.sku}/Versions/${version}`;
  }

  /** `VirtualMachineImageResource[]` (a bare array, not a `value` page), `$orderby=name desc` and `$top`. */
  private listVersions(context: RequestContext): Reply {
    const image = this.find(context);
    if (!image) return { status: 200, body: [] };
    let versions = [...image.versions].sort(compareVersions);
    const orderBy = (context.url.searchParams.get('$orderby') ?? '').trim().toLowerCase();
    if (orderBy === 'name desc') versions.reverse();
    const top = Number(context.url.searchParams.get('$top') ?? '');
    if (Number.isInteger(top) && top > 0) versions = versions.slice(0, top);
    const location = context.params.location ?? '';
    return {
      status: 200,
      body: versions.map((name) => ({ location, name, id: this.versionId(context, image, name) })),
    };
  }

  private getVersion(context: RequestContext): Reply {
    const image = this.find(context);
    const version = context.params.version ?? '';
    if (!image || !image.versions.includes(version)) {
      throw new HttpError(404, { code: 'NotFound', message: 'Artifact: VMImage was not found.' });
    }
    return {
      status: 200,
      body: {
        location: context.params.location ?? '',
        name: version,
        id: this.versionId(context, image, version),
        properties: {
          hyperVGeneration: image.hyperVGeneration,
          architecture: image.architecture,
          osDiskImage: { operatingSystem: image.osType, sizeInBytes: 32213303808 },
          dataDiskImages: [],
          automaticOSUpgradeProperties: { automaticOSUpgradeSupported: false },
          imageDeprecationStatus: { imageState: 'Active' },
          disallowed: { vmDiskType: 'Unmanaged' },
        },
      },
    };
  }
}

function compareVersions(a: string, b: string): number {
  const parts = (value: string): number[] => value.split('.').map((part) => Number(part) || 0);
  const left = parts(a);
  const right = parts(b);
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
