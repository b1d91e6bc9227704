/**
 * Name and identifier rules for settings values (Azure, Kubernetes, container images), each paired with the
 * sentence a settings error uses to say what is accepted.
 */

export interface NameRule {
  /** What is accepted, phrased to follow "expected". */
  readonly accepts: string;
  readonly test: (value: string) => boolean;
}

function rule(accepts: string, test: (value: string) => boolean): NameRule {
  return { accepts, test };
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const GUID_RULE = rule('a GUID such as 00000000-0000-0000-0000-000000000000', (v) => GUID.test(v));

/** learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules#microsoftresources */
export const RESOURCE_GROUP_RULE = rule(
  'a resource group name: 1–90 characters, letters, digits, "_", "-", ".", "(" and ")", not ending in "."',
  (v) => v.length >= 1 && v.length <= 90 && /^[-\w.()\p{L}\p{N}]+$/u.test(v) && !v.endsWith('.'),
);

/** resource-name-rules#microsoftcompute (virtualMachineScaleSets): 1–64 for Linux scale sets. */
export const SCALE_SET_RULE = rule(
  'a scale set name: 1–64 characters, letters, digits, "_", "-" and ".", starting with a letter or digit and ending with a letter, digit or "_"',
  (v) => v.length >= 1 && v.length <= 64 && /^[A-Za-z0-9](?:[-\w.]*[A-Za-z0-9_])?$/.test(v),
);

/** Our identifiers for clusters and pools: they appear in orchestration instance ids, URLs and resource names. */
export const IDENTIFIER_RULE = rule(
  'a lowercase name of 1–40 characters: a–z, 0–9 and "-", starting and ending with a letter or digit',
  (v) => v.length >= 1 && v.length <= 40 && /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/.test(v),
);

/**
 * Storage queue names (learn.microsoft.com/rest/api/storageservices/naming-queues-and-metadata): 3–63
 * lowercase letters, digits and single hyphens, starting and ending with a letter or digit.
 */
export const QUEUE_NAME_RULE = rule(
  'a storage queue name: 3–63 characters, lowercase letters, digits and single "-", starting and ending with a letter or digit',
  (v) => v.length >= 3 && v.length <= 63 && /^[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]$/.test(v),
);

/**
 * Durable Functions task hub (host.json `hubName`, letters and digits, starting with a letter:
 * https://learn.microsoft.com/azure/azure-functions/durable/durable-functions-task-hubs), with this
 * project's length cap.
 */
export const TASK_HUB_RULE = rule('a task hub name: 3–45 letters and digits, starting with a letter', (v) =>
  /^[A-Za-z][A-Za-z0-9]{2,44}$/.test(v),
);

/** Kubernetes DNS label (RFC 1123), e.g. a namespace. */
export const DNS_LABEL_RULE = rule(
  'a Kubernetes DNS label: 1–63 lowercase letters, digits and "-", starting and ending with a letter or digit',
  (v) => v.length >= 1 && v.length <= 63 && /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/.test(v),
);

/** Kubernetes DNS subdomain (RFC 1123), e.g. a node name. */
export const DNS_SUBDOMAIN_RULE = rule(
  'a Kubernetes node name: at most 253 lowercase letters, digits, "-" and ".", each part starting and ending with a letter or digit',
  (v) => isDnsSubdomain(v),
);

/** Kubernetes annotation key: `[prefix/]name` (apimachinery `IsQualifiedName`). */
export const ANNOTATION_KEY_RULE = rule(
  'an annotation key: [DNS-subdomain prefix/]name, the name 1–63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit',
  (v) => isQualifiedName(v),
);

/** Azure region names as ARM returns them (`westeurope`, `eastus2`). */
export const REGION_RULE = rule(
  'an Azure region name such as westeurope or eastus2 (lowercase, no spaces)',
  (v) => /^[a-z][a-z0-9]{1,49}$/.test(v),
);

/** VM extension identity `publisher/type`, e.g. `Microsoft.AKS/Compute.AKS.Linux.Billing`. */
export const EXTENSION_TYPE_RULE = rule(
  'an extension type as publisher/type, e.g. Microsoft.ManagedServices/ApplicationHealthLinux',
  (v) => /^[A-Za-z0-9][\w.-]{0,127}\/[A-Za-z0-9][\w.-]{0,127}$/.test(v),
);

/**
 * An image reference pinned by digest: `[registry/]repository[:tag]@sha256:<64 hex>` (distribution
 * reference grammar, lowercase repository). A tag alone can be moved under us; the digest cannot.
 */
export const PINNED_IMAGE_RULE = rule(
  'an image pinned by digest: [registry/]repository[:tag]@sha256:<64 hex digits>, e.g. myregistry.azurecr.io/tools/busybox:1.37@sha256:…',
  (v) => isPinnedImage(v),
);

const DNS_SUBDOMAIN_PART = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;

function isDnsSubdomain(value: string): boolean {
  return (
    value.length >= 1 &&
    value.length <= 253 &&
    value.split('.').every((part) => DNS_SUBDOMAIN_PART.test(part))
  );
}

function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts.at(-1) ?? '';
  if (parts.length === 2 && !isDnsSubdomain(parts[0] ?? '')) return false;
  return name.length >= 1 && name.length <= 63 && /^[A-Za-z0-9](?:[-\w.]*[A-Za-z0-9])?$/.test(name);
}

const REGISTRY_HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d{1,5})?$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;

function isPinnedImage(value: string): boolean {
  if (value.length > 512) return false;
  const at = value.lastIndexOf('@');
  if (at < 0 || !/^sha256:[0-9a-f]{64}$/.test(value.slice(at + 1))) return false;
  let name = value.slice(0, at);
  const lastSlash = name.lastIndexOf('/');
  const lastColon = name.lastIndexOf(':');
  if (lastColon > lastSlash) {
    if (!TAG.test(name.slice(lastColon + 1))) return false;
    name = name.slice(0, lastColon);
  }
  const components = name.split('/');
  const first = components[0] ?? '';
  // As in the distribution grammar, the first component is a registry when it has a dot or port or is localhost.
  if (components.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    if (!REGISTRY_HOST.test(first)) return false;
    components.shift();
  }
  return components.length > 0 && components.every((component) => PATH_COMPONENT.test(component));
}
