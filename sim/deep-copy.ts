/**
 * A deep copy of the JSON-shaped values the simulator's stores hold (Kubernetes objects, ARM resources):
 * plain objects, arrays and primitives are copied by hand, anything else (a Date, a Map, a class
 * instance) by `structuredClone`. The same result as `structuredClone` for those values at a fraction of
 * its cost (it serialises and deserialises through the V8 serializer): the store copies on every read,
 * write and watch event, and that copying was about a tenth of a simulated run's CPU.
 */
export function deepCopy<T>(value: T): T {
  return copyValue(value) as T;
}

function copyValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) return structuredClone(value); // sparse: as structuredClone keeps it
      out[index] = copyValue(value[index]);
    }
    return out;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const copied = copyValue((value as Record<string, unknown>)[key]);
    // An own `__proto__` key (JSON.parse makes them) must stay a key, not become the prototype.
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: copied,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[key] = copied;
  }
  return out;
}
