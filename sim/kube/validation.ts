/**
 * Write validation the API server applies before storing: names, label/annotation maps, node fields,
 * and the immutability rules of nodes and pods. Failures are 422 Invalid with the server's wording.
 */
import type { KubeObject } from '../contracts.js';
import { specOf } from './objects.js';
import type { ResourceInfo } from './resources.js';
import { invalid } from './status.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function validateMetadata(kind: string, group: string, object: KubeObject): void {
  const name = object.metadata.name;
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
    throw invalid(
      kind,
      group,
      name,
      'metadata.name',
      `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    );
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map: unknown = object.metadata[field];
    if (map === undefined) continue;
    if (!isRecord(map) || Object.values(map).some((value) => typeof value !== 'string')) {
      throw invalid(
        kind,
        group,
        name,
        `metadata.${field}`,
        `Invalid value: ${JSON.stringify(map)}: must be a map of strings`,
      );
    }
  }
  if (kind === 'Node') {
    const spec = specOf(object);
    if (spec.unschedulable !== undefined && typeof spec.unschedulable !== 'boolean') {
      throw invalid(
        kind,
        group,
        name,
        'spec.unschedulable',
        `Invalid value: ${JSON.stringify(spec.unschedulable)}: must be a boolean`,
      );
    }
    if (spec.taints !== undefined) {
      const taints = Array.isArray(spec.taints) ? (spec.taints as unknown[]) : [undefined];
      taints.forEach((taint, index) => {
        const ok =
          isRecord(taint) &&
          typeof taint.key === 'string' &&
          taint.key !== '' &&
          ['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(String(taint.effect));
        if (!ok) {
          throw invalid(
            kind,
            group,
            name,
            `spec.taints[${index}]`,
            'Unsupported value: a taint needs a key and an effect of "NoSchedule", "PreferNoSchedule" or "NoExecute"',
          );
        }
      });
    }
  }
}

/** The API server's immutability rules for the objects the simulator serves writes on. */
export function checkImmutable(info: ResourceInfo, existing: KubeObject, next: KubeObject): void {
  const name = existing.metadata.name;
  if (info.resource === 'nodes') {
    const before = specOf(existing).providerID;
    if (before !== undefined && before !== specOf(next).providerID) {
      throw invalid(
        info.kind,
        info.group,
        name,
        'spec.providerID',
        'Forbidden: node updates may not change providerID except from "" to valid',
      );
    }
  }
  if (info.resource === 'pods') {
    const comparable = (spec: Record<string, unknown>): string => {
      const copy = structuredClone(spec);
      for (const field of ['containers', 'initContainers'] as const) {
        if (Array.isArray(copy[field])) {
          copy[field] = (copy[field] as Record<string, unknown>[]).map((container) => ({
            ...container,
            image: '',
          }));
        }
      }
      delete copy.activeDeadlineSeconds;
      delete copy.tolerations;
      return JSON.stringify(copy);
    };
    const oldTolerations = JSON.stringify(specOf(existing).tolerations ?? []);
    const newTolerations = Array.isArray(specOf(next).tolerations)
      ? (specOf(next).tolerations as unknown[])
      : [];
    const tolerationsKept = (JSON.parse(oldTolerations) as unknown[]).every((toleration) =>
      newTolerations.some((candidate) => JSON.stringify(candidate) === JSON.stringify(toleration)),
    );
    if (!tolerationsKept || comparable(specOf(existing)) !== comparable(specOf(next))) {
      throw invalid(
        info.kind,
        info.group,
        name,
        'spec',
        'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      );
    }
  }
}
