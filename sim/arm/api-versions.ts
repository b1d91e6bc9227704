/**
 * The api-versions the simulated Microsoft.Compute accepts, per resource-provider surface: the
 * compute RP (scale sets, VMs, extensions), the disk RP (disks, snapshots), the gallery RP and the
 * resources RP (resource groups) and the authorization RP (the caller's permissions) version
 * independently, like in Azure. Each list includes what the installed @azure/arm-compute sends.
 */
export type ApiSurface = 'compute' | 'disk' | 'gallery' | 'resources' | 'authorization';

/** The surfaces with long-running operations of their own (the resources RP's group read has none). */
export type OperationSurface = Exclude<ApiSurface, 'resources' | 'authorization'>;

const SUPPORTED: Record<ApiSurface, readonly string[]> = {
  compute: [
    '2017-12-01',
    '2018-04-01',
    '2018-06-01',
    '2018-10-01',
    '2019-03-01',
    '2019-07-01',
    '2019-12-01',
    '2020-06-01',
    '2020-12-01',
    '2021-03-01',
    '2021-04-01',
    '2021-07-01',
    '2021-11-01',
    '2022-03-01',
    '2022-08-01',
    '2022-11-01',
    '2023-03-01',
    '2023-07-01',
    '2023-09-01',
    '2024-03-01',
    '2024-07-01',
    '2024-11-01',
    '2025-04-01',
    '2025-11-01',
    '2026-04-01',
  ],
  disk: [
    '2019-07-01',
    '2020-05-01',
    '2020-06-30',
    '2020-09-30',
    '2020-12-01',
    '2021-04-01',
    '2021-08-01',
    '2021-12-01',
    '2022-03-02',
    '2022-07-02',
    '2023-01-02',
    '2023-04-02',
    '2023-10-02',
    '2024-03-02',
    '2025-01-02',
    '2026-03-02',
  ],
  gallery: [
    '2019-12-01',
    '2020-09-30',
    '2021-07-01',
    '2021-10-01',
    '2022-01-03',
    '2022-03-03',
    '2022-08-03',
    '2023-07-03',
    '2024-03-03',
    '2025-03-03',
    '2025-12-03',
  ],
  // Microsoft.Resources (resource groups), which the product and tools such as az read.
  resources: [
    '2019-10-01',
    '2020-06-01',
    '2021-04-01',
    '2022-09-01',
    '2023-07-01',
    '2024-03-01',
    '2024-07-01',
    '2024-11-01',
    '2025-04-01',
  ],
  // Microsoft.Authorization: the caller's own permissions (`vmss-prototype doctor`).
  authorization: ['2015-07-01', '2018-01-01-preview', '2022-04-01'],
};

export type ApiVersionCheck =
  | { ok: true }
  | {
      ok: false;
      code: 'MissingApiVersionParameter' | 'InvalidApiVersionParameter' | 'NoRegisteredProviderFound';
      message: string;
    };

/** Checks the api-version query parameter the way ARM reports a missing, malformed or unknown one. */
export function checkApiVersion(
  surface: ApiSurface,
  apiVersion: string | null,
  resourceType: string,
  location: string,
): ApiVersionCheck {
  const supported = SUPPORTED[surface];
  if (!apiVersion) {
    return {
      ok: false,
      code: 'MissingApiVersionParameter',
      message: 'The api-version query parameter (?api-version=) is required for all requests.',
    };
  }
  if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(apiVersion)) {
    return {
      ok: false,
      code: 'InvalidApiVersionParameter',
      message: `The api-version '${apiVersion}' is invalid. The supported versions are '${supported.join(',')}'.`,
    };
  }
  if (!supported.includes(apiVersion)) {
    return {
      ok: false,
      code: 'NoRegisteredProviderFound',
      message: `No registered resource provider found for location '${location}' and API version '${apiVersion}' for type '${resourceType}'. The supported api-versions are '${supported.join(', ')}'.`,
    };
  }
  return { ok: true };
}

export function supportedApiVersions(surface: ApiSurface): readonly string[] {
  return SUPPORTED[surface];
}
