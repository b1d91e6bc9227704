/**
 * ARM PATCH semantics for the simulator: objects merge key by key, arrays and scalars replace,
 * and an explicit `null` removes the property (JSON Merge Patch, RFC 7386).
 */
import { deepCopy, isObject, type JsonObject } from './compute-state.js';

/** Returns a new object: `target` with `patch` merged in. Neither input is modified. */
export function mergePatch(target: JsonObject, patch: JsonObject): JsonObject {
  const result = deepCopy(target);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else if (isObject(value)) {
      const current = result[key];
      result[key] = mergePatch(isObject(current) ? current : {}, value);
    } else {
      result[key] = deepCopy(value);
    }
  }
  return result;
}
