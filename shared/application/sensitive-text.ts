/**
 * Text the product did not write — a canary check pod's output or failure message — scrubbed before it
 * is kept anywhere: a run result, custom status, an activity's output in the orchestration history, a
 * node annotation, a version tag, an event. A check pod is unprivileged and has no service-account token,
 * but it runs on a node that can reach the instance metadata service, and it may print what its
 * environment holds; whatever it says is quoted, so it is scrubbed first.
 */
import { withoutSecretLookingParts } from '../config/secret-reference.js';

/** Values shorter than this are not redacted: a `1` or `true` would blank half of every message. */
const MIN_REDACTED_LENGTH = 8;
export const REDACTED = '[redacted]';

/**
 * The text with every occurrence of a sensitive value (e.g. a check pod's environment values) and every
 * secret-looking part (a JWT, a bearer token, a private key, an account key or signature) replaced by
 * `[redacted]`.
 */
export function redactText(text: string, sensitive: readonly string[]): string {
  const scrubbed = sensitive
    .filter((value) => value.length >= MIN_REDACTED_LENGTH)
    .reduce((result, value) => result.replaceAll(value, REDACTED), text);
  return withoutSecretLookingParts(scrubbed, REDACTED);
}
