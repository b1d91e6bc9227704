/**
 * A small protobuf reader for tests: the fields of a message by number, independent of the encoder
 * under test (sim/kube/openapi-protobuf.ts), so a decode checks the encoding rather than repeating it.
 */

/** Top-level fields of a message: number → values (length-delimited as Buffers, varints as numbers). */
export function protobufFields(buffer: Buffer): Map<number, (Buffer | number)[]> {
  const found = new Map<number, (Buffer | number)[]>();
  let offset = 0;
  const varint = (): number => {
    let result = 0;
    let factor = 1;
    for (;;) {
      const byte = buffer[offset];
      if (byte === undefined) throw new Error('truncated varint');
      offset += 1;
      result += (byte & 0x7f) * factor;
      if ((byte & 0x80) === 0) return result;
      factor *= 128;
    }
  };
  while (offset < buffer.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: Buffer | number;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const length = varint();
      value = buffer.subarray(offset, offset + length);
      offset += length;
    } else if (wire === 1) {
      value = buffer.readDoubleLE(offset);
      offset += 8;
    } else throw new Error(`unexpected wire type ${wire}`);
    found.set(field, [...(found.get(field) ?? []), value]);
  }
  return found;
}

export function bytes(message: Buffer, field: number): Buffer[] {
  return (protobufFields(message).get(field) ?? []).filter((value): value is Buffer =>
    Buffer.isBuffer(value),
  );
}

export function text(message: Buffer, field: number): string | undefined {
  return bytes(message, field)[0]?.toString('utf8');
}

/** A `repeated Named*` list (name 1, value 2) as a map. */
export function named(message: Buffer, field: number): Map<string, Buffer> {
  return new Map(
    bytes(message, field).map((entry) => [text(entry, 1) ?? '', bytes(entry, 2)[0] ?? Buffer.alloc(0)]),
  );
}
