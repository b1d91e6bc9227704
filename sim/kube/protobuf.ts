/**
 * Reads the Kubernetes protobuf request bodies kubectl sends with its typed clients
 * (`application/vnd.kubernetes.protobuf`): `kubectl auth can-i` (SelfSubjectAccessReview and
 * SelfSubjectRulesReview), `kubectl auth whoami` and `kubectl create namespace`. The envelope is the
 * `k8s\0` magic and a runtime.Unknown (typeMeta, raw); the raw object is decoded with the field
 * numbers of the API's generated.proto for these kinds only. Anything else stays 415 (see handler.ts).
 * Replies are JSON, which these clients accept.
 */

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Field = { number: number; wire: number; value: bigint | Buffer };

function readVarint(buffer: Buffer, offset: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  let position = offset;
  for (;;) {
    const byte = buffer[position];
    if (byte === undefined) throw new Error('truncated varint');
    position += 1;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, position];
    shift += 7n;
  }
}

function fields(buffer: Buffer): Field[] {
  const found: Field[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const [key, afterKey] = readVarint(buffer, offset);
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [value, next] = readVarint(buffer, afterKey);
      found.push({ number, wire, value });
      offset = next;
    } else if (wire === 2) {
      const [length, start] = readVarint(buffer, afterKey);
      const end = start + Number(length);
      if (end > buffer.length) throw new Error('truncated field');
      found.push({ number, wire, value: buffer.subarray(start, end) });
      offset = end;
    } else if (wire === 1 || wire === 5) {
      offset = afterKey + (wire === 1 ? 8 : 4);
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
  return found;
}

/** A message schema: field number → [json name, kind]. */
type MessageSchema = Readonly<
  Record<number, readonly [string, 'string' | 'int' | 'bool' | 'map' | 'strings' | MessageSchema]>
>;

function decode(buffer: Buffer, schema: MessageSchema): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const field of fields(buffer)) {
    const entry = schema[field.number];
    if (!entry) continue;
    const [name, kind] = entry;
    const bytes = Buffer.isBuffer(field.value) ? field.value : undefined;
    if (kind === 'string' && bytes) result[name] = bytes.toString('utf8');
    else if (kind === 'strings' && bytes)
      result[name] = [...((result[name] as string[] | undefined) ?? []), bytes.toString('utf8')];
    else if (kind === 'int' && typeof field.value === 'bigint') result[name] = Number(field.value);
    else if (kind === 'bool' && typeof field.value === 'bigint') result[name] = field.value !== 0n;
    else if (kind === 'map' && bytes) {
      const pair = decode(bytes, { 1: ['key', 'string'], 2: ['value', 'string'] });
      const key = typeof pair.key === 'string' ? pair.key : '';
      const value = typeof pair.value === 'string' ? pair.value : '';
      result[name] = { ...(result[name] ?? {}), [key]: value };
    } else if (typeof kind === 'object' && bytes) result[name] = decode(bytes, kind);
  }
  return result;
}

// Field numbers from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto and
// k8s.io/api/{authorization,authentication,core}/v1/generated.proto.
const OBJECT_META: MessageSchema = {
  1: ['name', 'string'],
  2: ['generateName', 'string'],
  3: ['namespace', 'string'],
  11: ['labels', 'map'],
  12: ['annotations', 'map'],
  14: ['finalizers', 'strings'],
};

const KINDS: Readonly<Record<string, MessageSchema>> = {
  'authorization.k8s.io/v1/SelfSubjectAccessReview': {
    1: ['metadata', OBJECT_META],
    2: [
      'spec',
      {
        1: [
          'resourceAttributes',
          {
            1: ['namespace', 'string'],
            2: ['verb', 'string'],
            3: ['group', 'string'],
            4: ['version', 'string'],
            5: ['resource', 'string'],
            6: ['subresource', 'string'],
            7: ['name', 'string'],
          },
        ],
        2: ['nonResourceAttributes', { 1: ['path', 'string'], 2: ['verb', 'string'] }],
      },
    ],
  },
  'authorization.k8s.io/v1/SelfSubjectRulesReview': {
    1: ['metadata', OBJECT_META],
    2: ['spec', { 1: ['namespace', 'string'] }],
  },
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: ['metadata', OBJECT_META] },
  'v1/Namespace': { 1: ['metadata', OBJECT_META], 2: ['spec', { 1: ['finalizers', 'strings'] }] },
};

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/**
 * The JSON form of a protobuf request body, or undefined when it is not one of the kinds above (the
 * caller answers 415 then).
 */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> | undefined {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const unknown = decode(body.subarray(MAGIC.length), {
    1: ['typeMeta', { 1: ['apiVersion', 'string'], 2: ['kind', 'string'] }],
    2: ['raw', 'string'],
  });
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const key = `${typeMeta.apiVersion ?? ''}/${typeMeta.kind ?? ''}`;
  const schema = KINDS[key];
  if (!schema) return undefined;
  // `raw` is bytes; re-read it from the envelope to keep it binary.
  const raw = fields(body.subarray(MAGIC.length)).find((field) => field.number === 2)?.value;
  if (!Buffer.isBuffer(raw)) return undefined;
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...decode(raw, schema) };
}
