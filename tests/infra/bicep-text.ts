/**
 * Reads Bicep source without the Bicep compiler (it cannot be installed here): separates code, strings and
 * comments, and lists the declarations the static infra tests check.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from dist/tests/infra/ (compiled) or tests/infra/ (source). */
export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

function findRepoRoot(start: string): string {
  let directory = start;
  for (let depth = 0; depth < 6; depth += 1) {
    try {
      readFileSync(join(directory, 'package.json'));
      return directory;
    } catch {
      directory = dirname(directory);
    }
  }
  throw new Error(`finding the repository root from ${start}: no package.json above it`);
}

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

export interface BicepFile {
  /** Path relative to the repository root, with "/" separators. */
  readonly path: string;
  readonly source: string;
  /** The source with comments blanked out (same length, newlines kept). */
  readonly code: string;
}

/** infra/main.bicep and every infra/modules/*.bicep. */
export function infraBicepFiles(): BicepFile[] {
  const modules = readdirSync(join(REPO_ROOT, 'infra', 'modules'))
    .filter((name) => name.endsWith('.bicep'))
    .sort()
    .map((name) => `infra/modules/${name}`);
  return ['infra/main.bicep', ...modules].map((path) => {
    const source = readRepoFile(path);
    return { path, source, code: stripComments(source) };
  });
}

export function relativeToRoot(path: string): string {
  return relative(REPO_ROOT, path).split('\\').join('/');
}

type CharClass = 'code' | 'string' | 'comment';

interface Frame {
  readonly mode: 'code' | 'string' | 'interpolation';
  braces: number;
}

interface Scan {
  readonly classes: readonly CharClass[];
  /** [start, end) of every top-level string literal, quotes and interpolations included. */
  readonly strings: readonly (readonly [number, number])[];
}

/**
 * Classifies every character of Bicep source as code, string (quotes and interpolation delimiters included)
 * or comment, and finds the top-level string literals. Handles `'…'` with `\` escapes and `${…}`
 * interpolation (nested strings included), `'''…'''` verbatim strings, `//` and `/* … *\/` comments.
 */
function scan(source: string): Scan {
  const classes: CharClass[] = new Array<CharClass>(source.length).fill('code');
  const strings: [number, number][] = [];
  const stack: Frame[] = [{ mode: 'code', braces: 0 }];
  let stringStart = 0;
  let index = 0;
  const mark = (from: number, to: number, kind: CharClass): void => {
    for (let at = from; at < to && at < source.length; at += 1) classes[at] = kind;
  };
  while (index < source.length) {
    const frame = stack[stack.length - 1] ?? { mode: 'code', braces: 0 };
    const char = source[index];
    if (frame.mode === 'string') {
      if (char === '\\') {
        mark(index, index + 2, 'string');
        index += 2;
      } else if (char === "'") {
        mark(index, index + 1, 'string');
        stack.pop();
        index += 1;
        if (stack.length === 1) strings.push([stringStart, index]);
      } else if (source.startsWith('${', index)) {
        mark(index, index + 2, 'string');
        stack.push({ mode: 'interpolation', braces: 0 });
        index += 2;
      } else {
        mark(index, index + 1, 'string');
        index += 1;
      }
      continue;
    }
    if (source.startsWith('//', index)) {
      const end = source.indexOf('\n', index);
      const stop = end === -1 ? source.length : end;
      mark(index, stop, 'comment');
      index = stop;
    } else if (source.startsWith('/*', index)) {
      const end = source.indexOf('*/', index + 2);
      const stop = end === -1 ? source.length : end + 2;
      mark(index, stop, 'comment');
      index = stop;
    } else if (source.startsWith("'''", index)) {
      const end = source.indexOf("'''", index + 3);
      const stop = end === -1 ? source.length : end + 3;
      mark(index, stop, 'string');
      if (stack.length === 1) strings.push([index, stop]);
      index = stop;
    } else if (char === "'") {
      mark(index, index + 1, 'string');
      if (stack.length === 1) stringStart = index;
      stack.push({ mode: 'string', braces: 0 });
      index += 1;
    } else if (frame.mode === 'interpolation' && char === '{') {
      frame.braces += 1;
      index += 1;
    } else if (frame.mode === 'interpolation' && char === '}') {
      if (frame.braces === 0) {
        mark(index, index + 1, 'string');
        stack.pop();
      } else frame.braces -= 1;
      index += 1;
    } else index += 1;
  }
  return { classes, strings };
}

export function classify(source: string): readonly CharClass[] {
  return scan(source).classes;
}

/** The source with comments replaced by spaces; newlines stay so line numbers still match. */
export function stripComments(source: string): string {
  const classes = classify(source);
  let out = '';
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index] ?? '';
    out += classes[index] === 'comment' && char !== '\n' ? ' ' : char;
  }
  return out;
}

/** The contents of every top-level string literal (verbatim strings included), interpolations left in place. */
export function stringLiterals(source: string): string[] {
  return scan(source).strings.map(([start, end]) => unquote(source.slice(start, end)));
}

function unquote(text: string): string {
  if (text.startsWith("'''")) return text.slice(3, -3);
  return text.slice(1, -1);
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

export interface ResourceDeclaration {
  readonly symbol: string;
  readonly type: string;
  /** Undefined when the type string has no `@<api-version>`. */
  readonly apiVersion: string | undefined;
  readonly existing: boolean;
  readonly line: number;
}

export function resourceDeclarations(code: string): ResourceDeclaration[] {
  const pattern = /^[ \t]*resource[ \t]+([A-Za-z_]\w*)[ \t]+'([^'@]+)(?:@([^']*))?'[ \t]*(existing\b)?/gm;
  return [...code.matchAll(pattern)].map((match) => ({
    symbol: match[1] ?? '',
    type: match[2] ?? '',
    apiVersion: match[3],
    existing: match[4] !== undefined,
    line: lineOf(code, match.index),
  }));
}

export interface ParamDeclaration {
  readonly name: string;
  readonly type: string;
  readonly hasDefault: boolean;
  /** The decorator lines directly above the declaration. */
  readonly decorators: readonly string[];
}

export function paramDeclarations(code: string): ParamDeclaration[] {
  const lines = code.split('\n');
  const found: ParamDeclaration[] = [];
  for (const [index, line] of lines.entries()) {
    const match = /^\s*param\s+([A-Za-z_]\w*)\s+([A-Za-z_][\w.]*(?:\[\])?)\s*(=)?/.exec(line);
    if (match === null) continue;
    const decorators: string[] = [];
    for (let above = index - 1; above >= 0; above -= 1) {
      const text = (lines[above] ?? '').trim();
      if (!text.startsWith('@')) break;
      decorators.unshift(text);
    }
    found.push({
      name: match[1] ?? '',
      type: match[2] ?? '',
      hasDefault: match[3] !== undefined,
      decorators,
    });
  }
  return found;
}

export interface OutputDeclaration {
  readonly name: string;
  readonly type: string;
  readonly expression: string;
}

export function outputDeclarations(code: string): OutputDeclaration[] {
  const pattern = /^[ \t]*output[ \t]+([A-Za-z_]\w*)[ \t]+([A-Za-z_]\w*)[ \t]*=[ \t]*(.*)$/gm;
  return [...code.matchAll(pattern)].map((match) => ({
    name: match[1] ?? '',
    type: match[2] ?? '',
    expression: (match[3] ?? '').trim(),
  }));
}

export interface ModuleDeclaration {
  readonly symbol: string;
  readonly path: string;
}

export function moduleDeclarations(code: string): ModuleDeclaration[] {
  const pattern = /^[ \t]*module[ \t]+([A-Za-z_]\w*)[ \t]+'([^']+)'/gm;
  return [...code.matchAll(pattern)].map((match) => ({ symbol: match[1] ?? '', path: match[2] ?? '' }));
}

/**
 * The keys at the top level of the first object literal that starts after `anchor` (e.g. the first argument of
 * `var appSettings = union(`). Quoted keys are returned without quotes.
 */
export function objectLiteralKeys(source: string, anchor: string): string[] {
  const start = source.indexOf(anchor);
  if (start === -1) throw new Error(`reading an object literal: "${anchor}" is not in the source`);
  const classes = classify(source);
  const open = indexOfCode(source, classes, '{', start + anchor.length);
  if (open === -1) throw new Error(`reading an object literal: no "{" after "${anchor}"`);
  const keys: string[] = [];
  let depth = 0;
  let lineStart = true;
  for (let index = open; index < source.length; index += 1) {
    const char = source[index] ?? '';
    if (classes[index] === 'code') {
      if (char === '{' || char === '[' || char === '(') depth += 1;
      if (char === '}' || char === ']' || char === ')') {
        depth -= 1;
        if (depth === 0) return keys;
      }
    }
    if (char === '\n') {
      lineStart = true;
      continue;
    }
    if (lineStart && depth === 1 && classes[index] !== 'comment' && !/\s/.test(char)) {
      const rest = source.slice(
        index,
        source.indexOf('\n', index) === -1 ? undefined : source.indexOf('\n', index),
      );
      const key = /^(?:([A-Za-z_]\w*)|'([^']*)')\s*:/.exec(rest);
      if (key !== null) keys.push(key[1] ?? key[2] ?? '');
    }
    if (!/\s/.test(char)) lineStart = false;
  }
  throw new Error(`reading an object literal after "${anchor}": it is not closed`);
}

function indexOfCode(source: string, classes: readonly CharClass[], char: string, from: number): number {
  for (let index = from; index < source.length; index += 1) {
    if (source[index] === char && classes[index] === 'code') return index;
  }
  return -1;
}
