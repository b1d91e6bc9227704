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

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const NAME_PART_MESSAGE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** apimachinery's IsQualifiedName, worded as the API server words it (label and annotation keys). */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const [prefix = '', rest = ''] = parts;
    if (prefix === '') return 'prefix part must be non-empty';
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    }
    name = rest;
  } else if (parts.length > 2) {
    return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
  }
  if (name === '') return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME_PART.test(name)) return NAME_PART_MESSAGE;
  return undefined;
}

/** apimachinery's IsValidLabelValue. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!NAME_PART.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  }
  return undefined;
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
    for (const [key, value] of Object.entries(map)) {
      const keyProblem = qualifiedNameProblem(key);
      if (keyProblem)
        throw invalid(
          kind,
          group,
          name,
          `metadata.${field}`,
          `Invalid value: ${JSON.stringify(key)}: ${keyProblem}`,
        );
      if (field === 'labels') {
        const valueProblem = labelValueProblem(String(value));
        if (valueProblem) {
          throw invalid(
            kind,
            group,
            name,
            `metadata.labels`,
            `Invalid value: ${JSON.stringify(value)}: ${valueProblem}`,
          );
        }
      }
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
