/**
 * HTTP plumbing shared by the HTTP triggers: bounded JSON body reading (413/415/400), route-name
 * validation, and one error body shape `{ error: { code, message, field? } }`.
 */
// @azure/functions is a bundled CommonJS module: Node cannot see its named exports from ESM.
import azureFunctions, { type HttpRequest, type HttpResponse, type HttpResponseInit } from '@azure/functions';
import type { z } from 'zod';

import { IDENTIFIER_RULE, SCALE_SET_RULE } from '../../shared/config/names.js';
import { definedOnly } from '../../shared/domain/optional.js';

/** Largest request body accepted, in bytes: every body we accept is a few hundred bytes. */
export const MAX_BODY_BYTES = 16 * 1024;

export type BodyResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly response: HttpResponse };

export function json(status: number, body: unknown, headers?: Record<string, string>): HttpResponse {
  const init: HttpResponseInit = { status, jsonBody: body, ...definedOnly({ headers }) };
  return new azureFunctions.HttpResponse(init);
}

/** An HTML document with its own headers (the status page: content type and CSP). */
export function htmlDocument(status: number, body: string, headers: Record<string, string>): HttpResponse {
  return new azureFunctions.HttpResponse({ status, body, headers });
}

export function problem(
  status: number,
  code: string,
  message: string,
  extra?: Record<string, unknown>,
): HttpResponse {
  return json(status, { error: { code, message, ...extra } });
}

/** Cluster names follow our identifier rule; they reach instance ids, so nothing else gets through. */
export function isClusterName(value: string | undefined): value is string {
  return value !== undefined && IDENTIFIER_RULE.test(value);
}

/** Pool names: configured identifiers, or (pools `all`) lowercase scale set names. */
export function isPoolName(value: string | undefined): value is string {
  return value !== undefined && value === value.toLowerCase() && SCALE_SET_RULE.test(value);
}

/** Repeats untrusted input in a message: printable, bounded, quoted by JSON. */
export function shown(value: string): string {
  const printable = [...value]
    .map((char) => (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f ? '?' : char))
    .join('');
  return printable.length > 64 ? `${printable.slice(0, 64)}…` : printable;
}

function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Reads and validates a JSON body. An absent body (no content, no content type) is `emptyValue`.
 * 415 for a non-JSON content type, 413 above MAX_BODY_BYTES by content-length OR by the bytes actually
 * read (a chunked or lying client), 400 with the field path for invalid JSON or schema violations.
 */
export async function readJsonBody<T>(
  request: HttpRequest,
  schema: z.ZodType<T>,
  emptyValue?: unknown,
): Promise<BodyResult<T>> {
  const contentType = request.headers.get('content-type');
  const declared = request.headers.get('content-length');
  if (declared !== null && (!/^\d{1,15}$/.test(declared.trim()) || Number(declared) > MAX_BODY_BYTES)) {
    return tooLarge();
  }
  const bytes = await readBounded(request);
  if (bytes === undefined) return tooLarge();
  if (bytes.length === 0 && contentType === null && emptyValue !== undefined) {
    return validate(schema, emptyValue);
  }
  if (!isJsonContentType(contentType)) {
    return {
      ok: false,
      response: problem(
        415,
        'UnsupportedMediaType',
        `expected content-type application/json, got ${shown(contentType ?? 'none')}`,
      ),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    const detail = error instanceof SyntaxError ? error.message : 'the body is not UTF-8';
    return {
      ok: false,
      response: problem(400, 'InvalidJson', `reading the body: ${shown(detail)}`, { field: '(body)' }),
    };
  }
  return validate(schema, value);
}

function validate<T>(schema: z.ZodType<T>, value: unknown): BodyResult<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? '(body)' : issue.path.join('.');
  const field = issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : path;
  const message =
    issue?.code === 'unrecognized_keys'
      ? `unknown field ${issue.keys.map((key) => shown(key)).join(', ')}`
      : `${field}: ${issue?.message ?? 'invalid'}`;
  return { ok: false, response: problem(400, 'InvalidRequest', message, { field }) };
}

function tooLarge(): BodyResult<never> {
  return {
    ok: false,
    response: problem(413, 'PayloadTooLarge', `the body must be at most ${MAX_BODY_BYTES} bytes`),
  };
}

/** The body's bytes, or undefined as soon as more than MAX_BODY_BYTES arrived (the rest is not read). */
async function readBounded(request: HttpRequest): Promise<Uint8Array | undefined> {
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
  const reader = (stream as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = typeof value === 'string' ? new TextEncoder().encode(value) : value;
    total += chunk.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
