/**
 * Small helpers over ARM resource ids and the loose JSON the simulated compute state keeps (ARM
 * `properties` objects are stored as received, so they are read defensively).
 */
import { createHash } from 'node:crypto';

import type { JsonObject } from './compute-types.js';

export { deepCopy } from '../deep-copy.js';

/** ARM ids are case-insensitive; every map is keyed by the lower-cased id. */
export function idKey(id: string): string {
  return id.replace(/\/+$/, '').toLowerCase();
}

/** A stable uuid-shaped id derived from a seed, so runs are reproducible. */
export function deterministicUuid(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(root: JsonObject, ...path: string[]): JsonObject {
  let current = root;
  for (const key of path) {
    const next = current[key];
    if (isObject(next)) {
      current = next;
    } else {
      const created: JsonObject = {};
      current[key] = created;
      current = created;
    }
  }
  return current;
}

/** The value when it is a string, else the fallback. */
export function textOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

export function optionalObjectAt(root: JsonObject, ...path: string[]): JsonObject | undefined {
  let current: unknown = root;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return isObject(current) ? current : undefined;
}

export function stringAt(root: JsonObject, path: string[], key: string): string | undefined {
  const value = optionalObjectAt(root, ...path)?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** Whether an imageReference points at a gallery image definition or version. */
export function isGalleryImageReference(imageReference: JsonObject): boolean {
  const id = imageReference.id;
  return typeof id === 'string' && /\/providers\/microsoft\.compute\/galleries\//i.test(id);
}

/** Parses `/subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Compute/{type}/{name}…` loosely. */
export function parseResourceId(
  id: string,
): { subscriptionId: string; resourceGroup: string; segments: string[] } | undefined {
  const match =
    /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/(.+)$/i.exec(
      id.replace(/\/+$/, ''),
    );
  if (!match?.[1] || !match[2] || !match[3]) return undefined;
  return { subscriptionId: match[1], resourceGroup: match[2], segments: match[3].split('/') };
}
