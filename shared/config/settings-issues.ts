/**
 * Turning settings problems into issues an operator can act on: field path, what was received (secrets
 * redacted, long values truncated) and what is accepted; plus the raw-JSON checks that run before the schema.
 */

import type { z } from 'zod';

import {
  INLINE_SECRET_HINT,
  isSecretEnvName,
  isSecretFieldName,
  isUnresolvedKeyVaultReference,
  redact,
  secretKind,
  UNRESOLVED_KEY_VAULT_REFERENCE,
} from './secret-reference.js';

/** Prefix of the message a strict object gives an unknown key: the accepted field names follow, comma-separated. */
export const FIELDS_MARKER = 'fields:';

/** One problem with the settings. */
export interface SettingsIssue {
  /** Where: the environment key, then the JSON path inside it, e.g. `VMSSP_CLUSTERS[1].pools[0].name`. */
  readonly path: string;
  /** What was found, safe to log: secrets redacted, long values truncated. */
  readonly received: string;
  /** What is accepted. */
  readonly expected: string;
}

export function formatIssue(issue: SettingsIssue): string {
  return `${issue.path}: got ${issue.received}; expected ${issue.expected}`;
}

/**
 * The settings' problems, every one at once (loadSettings in settings.ts throws it). Here rather than
 * beside the schema so that a module that only recognises it (the CLI's failure report) loads no zod.
 */
export class SettingsError extends Error {
  readonly issues: readonly SettingsIssue[];

  constructor(issues: readonly SettingsIssue[]) {
    super(
      `loading settings: ${issues.length} problem${issues.length === 1 ? '' : 's'}\n` +
        issues.map((issue) => `  - ${formatIssue(issue)}`).join('\n'),
    );
    this.name = 'SettingsError';
    this.issues = issues;
  }
}

export type Path = readonly (string | number)[];

/** An issue before its path is rendered. */
export interface RawIssue {
  readonly path: Path;
  readonly received: string;
  readonly expected: string;
}

/** Converts a zod issue (recursing into the closest union branch) into raw issues. */
export function fromZodIssue(issue: z.core.$ZodIssue, prefix: Path): RawIssue[] {
  const path: Path = [
    ...prefix,
    ...issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment)),
  ];
  if (issue.code === 'unrecognized_keys') {
    // `fields:a,b,c`, then optionally one `key=why it is refused` per line for fields refused on purpose.
    const [first = '', ...refusals] = issue.message.split('\n');
    const accepted = first.startsWith(FIELDS_MARKER) ? first.slice(FIELDS_MARKER.length).split(',') : [];
    const refused = new Map(
      refusals.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    return issue.keys.map((key) => {
      const value = isRecord(issue.input) ? issue.input[key] : undefined;
      const secret = isSecretFieldName(key) || (typeof value === 'string' && secretKind(value) !== undefined);
      const why = refused.get(key);
      return {
        path: [...path, key],
        received: secret && typeof value === 'string' ? redact(value) : 'an unknown field',
        expected: secret
          ? INLINE_SECRET_HINT
          : (why ?? `one of the fields ${accepted.join(', ')}${didYouMean(key, accepted)}`),
      };
    });
  }
  if (issue.code === 'invalid_union') {
    // Report the branch that got furthest (deepest issue), e.g. a list of pools with one bad pool.
    let best: z.core.$ZodIssue[] | undefined;
    let bestDepth = 0;
    for (const branch of issue.errors) {
      const depth = Math.max(0, ...branch.map((nested) => nested.path.length));
      if (depth > bestDepth) {
        best = branch;
        bestDepth = depth;
      }
    }
    if (best !== undefined) return best.flatMap((nested) => fromZodIssue(nested, path));
  }
  return [{ path, received: describeReceived(issue.input, path), expected: issue.message }];
}

const SECRET_PATH_SEGMENTS = new Set(['auth']);

function describeReceived(input: unknown, path: Path): string {
  if (input === undefined) return path.length === 1 ? 'nothing (not set)' : 'nothing (the field is missing)';
  if (typeof input === 'string') {
    const sensitive = path.some(
      (segment) =>
        typeof segment === 'string' && (SECRET_PATH_SEGMENTS.has(segment) || isSecretFieldName(segment)),
    );
    if (secretKind(input) !== undefined) return redact(input);
    if (sensitive && !looksLikeReference(input, path.at(-1))) return redact(input);
    return quote(withoutUserInfo(input));
  }
  if (typeof input === 'number' || typeof input === 'boolean' || input === null) return String(input);
  if (Array.isArray(input)) return `a list of ${input.length} item${input.length === 1 ? '' : 's'}`;
  if (isRecord(input)) {
    const keys = Object.keys(input);
    if (keys.length === 0) return 'an empty object';
    const shown = keys.slice(0, 8).join(', ');
    return `an object with field${keys.length === 1 ? '' : 's'} ${shown}${keys.length > 8 ? ', …' : ''}`;
  }
  return typeof input;
}

/**
 * A URL's user-info (`https://user:password@host`) is a credential: shown as `<redacted>`. Up to the
 * last `@`, since a pasted password may hold `/`, `?` or `@` unencoded.
 */
function withoutUserInfo(value: string): string {
  return value.replaceAll(/(:\/\/)\S*@/g, '$1<redacted>@');
}

/** Under `auth`, a value is shown only when it is plainly a reference: an https URI or an app-setting name. */
function looksLikeReference(value: string, field: string | number | undefined): boolean {
  if (field === 'keyVaultSecretUri') return /^https:\/\/[^\s?#]{1,300}$/.test(value);
  if (field === 'env') return /^[A-Z][A-Z0-9_]{0,119}$/.test(value);
  if (field === 'serverAppId') return /^[0-9a-f-]{1,40}$/i.test(value);
  if (field === 'scope') return /\/\.default$/.test(value);
  return false;
}

const MAX_SHOWN = 80;

function quote(value: string): string {
  if (value.length <= MAX_SHOWN) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, MAX_SHOWN - 20))}… (${value.length} characters)`;
}

/**
 * Deduplicates by path (the first issue found for a field wins: the raw checks run first and are the more
 * specific), sorts by path, and renders paths with the top-level field replaced by its environment key.
 */
export function toSettingsIssues(
  issues: readonly RawIssue[],
  keyOfField: Readonly<Record<string, string>>,
): SettingsIssue[] {
  const seen = new Set<string>();
  const unique: RawIssue[] = [];
  for (const issue of issues) {
    const key = issue.path.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(issue);
  }
  unique.sort((a, b) => comparePaths(a.path, b.path));
  return unique.map((issue) => ({
    path: formatPath(issue.path, keyOfField),
    received: issue.received,
    expected: issue.expected,
  }));
}

function comparePaths(a: Path, b: Path): number {
  for (let index = 0; index < Math.min(a.length, b.length); index += 1) {
    const left = a[index];
    const right = b[index];
    if (left === right) continue;
    if (typeof left === 'number' && typeof right === 'number') return left - right;
    return String(left) < String(right) ? -1 : 1;
  }
  return a.length - b.length;
}

function formatPath(path: Path, keyOfField: Readonly<Record<string, string>>): string {
  const [head, ...rest] = path;
  let text = (typeof head === 'string' ? keyOfField[head] : undefined) ?? String(head);
  for (const segment of rest) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) text += `.${segment}`;
    else text += `[${JSON.stringify(segment.length > 40 ? `${segment.slice(0, 40)}…` : segment)}]`;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------
// Raw JSON checks that run before the schema

type JsonResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

/** JSON.parse whose failure message never quotes the text (V8's does, and it may hold a pasted secret). */
export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const position = /position (\d+)/.exec(message)?.[1];
    if (position === undefined) return { ok: false, problem: 'it ends early or is malformed' };
    const offset = Number(position);
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    return { ok: false, problem: `syntax error at line ${line} column ${column}` };
  }
}

/** Strings that are secrets, wherever they sit: a secret-named field with a string value, a JWT, a private key. */
export function findInlineSecrets(value: unknown, path: Path): RawIssue[] {
  const found: RawIssue[] = [];
  const visit = (node: unknown, at: Path): void => {
    if (typeof node === 'string') {
      const field = at.at(-1);
      const named = typeof field === 'string' && isSecretFieldName(field);
      if (named || secretKind(node) !== undefined) {
        found.push({ path: at, received: redact(node), expected: INLINE_SECRET_HINT });
      }
    } else if (Array.isArray(node)) node.forEach((item, index) => visit(item, [...at, index]));
    else if (isRecord(node)) for (const [key, item] of Object.entries(node)) visit(item, [...at, key]);
  };
  visit(value, path);
  return found;
}

/** `{ env: NAME }` references must name an app setting that is set and resolved. */
export function checkEnvReferences(
  value: unknown,
  path: Path,
  env: Readonly<Record<string, string | undefined>>,
): RawIssue[] {
  const found: RawIssue[] = [];
  const visit = (node: unknown, at: Path): void => {
    if (Array.isArray(node)) node.forEach((item, index) => visit(item, [...at, index]));
    if (!isRecord(node)) return;
    const name = node['env'];
    if (typeof name === 'string' && isSecretEnvName(name)) {
      const setting = env[name];
      if (setting === undefined || setting.trim() === '') {
        found.push({
          path: [...at, 'env'],
          received: `${quote(name)}, but app setting ${name} is not set`,
          expected: `the name of an app setting that is set (it holds the secret, or a @Microsoft.KeyVault(SecretUri=…) reference)`,
        });
      } else if (isUnresolvedKeyVaultReference(setting)) {
        found.push({
          path: [...at, 'env'],
          received: `${quote(name)}, whose value is an unresolved Key Vault reference`,
          expected: `an app setting the platform resolved: ${UNRESOLVED_KEY_VAULT_REFERENCE}`,
        });
      }
    }
    for (const [key, item] of Object.entries(node)) visit(item, [...at, key]);
  };
  visit(value, path);
  return found;
}

export function didYouMean(key: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(1, Math.floor(key.length / 4));
  return best !== undefined && bestDistance <= tolerance ? ` (did you mean ${best}?)` : '';
}

/** Optimal string alignment distance: edits plus adjacent transpositions, the commonest typo. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i += 1) {
    const row = rows[i] ?? [];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
