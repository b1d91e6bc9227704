/**
 * Label and field selectors as the API server parses them: the query-string forms (`a=b,c notin (x,y),!d`)
 * and the structured `LabelSelector` of PDBs, DaemonSets and ReplicaSets.
 */
import type { KubeObject } from '../contracts.js';
import { badRequest } from './status.js';

export type Requirement =
  { key: string; op: 'in' | 'notin'; values: string[] } | { key: string; op: 'exists' | 'doesnotexist' };

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Label keys (optional DNS prefix and name) and values, as the API server validates them. */
const KEY = '(?:[a-z0-9.-]+/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?';
const VALUE = '(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?';

/** Parses `labelSelector` query syntax. Throws a 400 KubeApiError on bad syntax. */
export function parseLabelSelector(text: string): Requirement[] {
  const requirements: Requirement[] = [];
  for (const term of splitTerms(text)) {
    const trimmed = term.trim();
    if (trimmed === '') continue;
    const setMatch = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`).exec(trimmed);
    if (setMatch) {
      const [, key = '', op = 'in', list = ''] = setMatch;
      const values = list.split(',').map((value) => value.trim());
      if (!values.every((value) => new RegExp(`^${VALUE}$`).test(value))) {
        throw badRequest(`unable to parse requirement: invalid label selector "${text}"`);
      }
      requirements.push({ key, op: op === 'in' ? 'in' : 'notin', values });
      continue;
    }
    const opMatch = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`).exec(trimmed);
    if (opMatch) {
      const [, key = '', op = '=', value = ''] = opMatch;
      requirements.push({ key, op: op === '!=' ? 'notin' : 'in', values: [value] });
      continue;
    }
    const notExists = new RegExp(`^!\\s*(${KEY})$`).exec(trimmed);
    if (notExists) {
      requirements.push({ key: notExists[1] ?? '', op: 'doesnotexist' });
      continue;
    }
    if (new RegExp(`^${KEY}$`).test(trimmed)) {
      requirements.push({ key: trimmed, op: 'exists' });
      continue;
    }
    throw badRequest(`unable to parse requirement: invalid label selector "${text}"`);
  }
  return requirements;
}

/** Splits on commas that are not inside `( … )`. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  terms.push(current);
  return terms;
}

export function matchesRequirements(
  labels: Record<string, string> | undefined,
  requirements: Requirement[],
): boolean {
  const actual = labels ?? {};
  return requirements.every((requirement) => {
    const has = Object.hasOwn(actual, requirement.key);
    const value = actual[requirement.key];
    switch (requirement.op) {
      case 'exists':
        return has;
      case 'doesnotexist':
        return !has;
      case 'in':
        return has && value !== undefined && requirement.values.includes(value);
      case 'notin':
        return !has || value === undefined || !requirement.values.includes(value);
    }
  });
}

/**
 * Converts a structured selector. `null`/absent matches nothing (like a PDB without selector in
 * policy/v1beta1); an empty object matches everything.
 */
export function selectorRequirements(
  selector: LabelSelectorObject | null | undefined,
): Requirement[] | undefined {
  if (!selector) return undefined;
  const requirements: Requirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
    key,
    op: 'in' as const,
    values: [value],
  }));
  for (const expression of selector.matchExpressions ?? []) {
    const operator = expression.operator.toLowerCase();
    if (operator === 'in' || operator === 'notin') {
      requirements.push({ key: expression.key, op: operator, values: expression.values ?? [] });
    } else if (operator === 'exists' || operator === 'doesnotexist') {
      requirements.push({ key: expression.key, op: operator });
    } else {
      throw badRequest(`"${expression.operator}" is not a valid label selector operator`);
    }
  }
  return requirements;
}

export function matchesSelector(
  labels: Record<string, string> | undefined,
  selector: LabelSelectorObject | null | undefined,
): boolean {
  const requirements = selectorRequirements(selector);
  return requirements !== undefined && matchesRequirements(labels, requirements);
}

export interface FieldRequirement {
  field: string;
  negate: boolean;
  value: string;
}

/** Parses `fieldSelector` and rejects fields the resource does not index, like the API server (400). */
export function parseFieldSelector(text: string, supported: readonly string[]): FieldRequirement[] {
  const requirements: FieldRequirement[] = [];
  for (const term of text.split(',')) {
    const trimmed = term.trim();
    if (trimmed === '') continue;
    const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(trimmed);
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${trimmed}'`);
    const [, field = '', op = '=', value = ''] = match;
    if (!supported.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    requirements.push({ field, negate: op === '!=', value });
  }
  return requirements;
}

/** Reads a dotted field path; booleans and numbers compare by their string form. */
export function fieldValue(object: Readonly<KubeObject>, path: string): string {
  let current: unknown = object;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return '';
    current = (current as Record<string, unknown>)[part];
  }
  if (current === undefined || current === null) return path === 'spec.unschedulable' ? 'false' : '';
  if (typeof current === 'string') return current;
  if (typeof current === 'number' || typeof current === 'boolean') return String(current);
  return JSON.stringify(current);
}

export function matchesFields(object: Readonly<KubeObject>, requirements: FieldRequirement[]): boolean {
  return requirements.every(({ field, negate, value }) => (fieldValue(object, field) === value) !== negate);
}
