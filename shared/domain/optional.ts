/**
 * Optional fields without `undefined` values: `{ ...definedOnly({ zone, vmId }) }` says what
 * `...(zone === undefined ? {} : { zone }), ...(vmId === undefined ? {} : { vmId })` said. A key whose
 * value is `undefined` is left out (not set to `undefined`), so serialised inputs, deep equality and
 * `in` checks see the same object as before; `null`, `0`, `''` and `false` are kept.
 */

/**
 * The fields of `T` that may be absent, none of them `undefined` when present. `void` goes too: a value
 * typed `void | X` is `X` once it is not `undefined`, as the ternary narrowed it.
 */
export type DefinedOnly<T extends object> = { [K in keyof T]?: Exclude<T[K], undefined | void> };

/** A copy of `fields` without the keys whose value is `undefined`, in the same key order. */
export function definedOnly<T extends object>(fields: T): DefinedOnly<T> {
  const result: Record<PropertyKey, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) result[key] = value;
  }
  return result as DefinedOnly<T>;
}
