/**
 * What the simulated API server keeps of a CustomResourceDefinition for each version it serves: the
 * structural schema, whether the `status` subresource is on, the printer columns and the OpenAPI
 * definition name (crd-registry.ts builds them, the verbs read them).
 */
import type { Schema } from './openapi-schemas.js';

/** `spec.versions[].additionalPrinterColumns[]` (apiextensions.k8s.io/v1 CustomResourceColumnDefinition). */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CustomResourceVersion {
  /** The CustomResourceDefinition's name, `<plural>.<group>`. */
  crd: string;
  /** `spec.versions[].schema.openAPIV3Schema`. */
  schema: Schema;
  statusSubresource: boolean;
  /** The printer columns, or the default `Age` column when the version declares none. */
  columns: readonly PrinterColumn[];
  /** The OpenAPI definition name, e.g. `io.vmss-prototype.v1alpha1.PoolImagePolicy`. */
  definition: string;
  /** The list kind's definition name, e.g. `io.vmss-prototype.v1alpha1.PoolImagePolicyList`. */
  listDefinition: string;
}
