/**
 * Streaming lists (KEP-3157, "WatchList"): a watch with `sendInitialEvents=true` and
 * `resourceVersionMatch=NotOlderThan` starts with synthetic ADDED events for the current state, then a
 * BOOKMARK annotated `k8s.io/initial-events-end: "true"` carrying the resourceVersion of that state
 * (when the client allows bookmarks), then the live events
 * (https://kubernetes.io/docs/reference/using-api/api-concepts/#streaming-lists).
 *
 * The options are checked the way kubernetes/kubernetes
 * `staging/src/k8s.io/apimachinery/pkg/apis/meta/internalversion/validation/validation.go`
 * (`ValidateListOptions`, `validateWatchOptions`) checks them: 422 `ListOptions.meta.k8s.io "" is
 * invalid` naming each field. Whether the server streams at all is the `WatchList` feature gate of
 * the simulated version (sim/README.md says which versions have it on).
 */
import { KubeApiError } from './status.js';

/** The annotation of the bookmark that ends the initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export interface WatchStart {
  /** Send the current state as ADDED events first. */
  initialEvents: boolean;
  /** Close the initial events with the annotated BOOKMARK. */
  initialEventsEndBookmark: boolean;
}

/**
 * The WatchList gate's default by server version: alpha and off from 1.27, beta and on in 1.32, off
 * again in 1.33, on from 1.34.
 */
export function watchListEnabled(gitVersion: string): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(gitVersion);
  const minor = Number(match?.[2] ?? '32');
  return Number(match?.[1] ?? '1') > 1 || minor === 32 || minor >= 34;
}

interface FieldError {
  field: string;
  reason: 'FieldValueForbidden' | 'FieldValueNotSupported';
  detail: string;
}

function invalid(errors: FieldError[]): KubeApiError {
  const texts = errors.map((error) => `${error.field}: ${error.detail}`);
  const joined = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
  return new KubeApiError('Invalid', `ListOptions.meta.k8s.io "" is invalid: ${joined}`, {
    group: 'meta.k8s.io',
    kind: 'ListOptions',
    causes: errors.map((error) => ({
      reason: error.reason,
      message: error.detail,
      field: error.field,
    })),
  });
}

function forbidden(field: string, message: string): FieldError {
  return { field, reason: 'FieldValueForbidden', detail: `Forbidden: ${message}` };
}

/** `sendInitialEvents` as the query decoder reads a boolean; null when absent. */
function sendInitialEventsOf(url: URL): boolean | null {
  const value = url.searchParams.get('sendInitialEvents');
  if (value === null) return null;
  return ['true', '1'].includes(value.toLowerCase());
}

/** Refuses `sendInitialEvents` on a list (it is for watches only). */
export function checkListOptions(url: URL): void {
  if (url.searchParams.has('sendInitialEvents'))
    throw invalid([forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list')]);
}

/**
 * How a watch starts, after checking its options (422 Invalid when they do not go together). Without
 * `sendInitialEvents` the old rule holds: the current state is sent when no resourceVersion (or "0")
 * was given.
 */
export function watchStartOf(url: URL, gitVersion: string): WatchStart {
  const send = sendInitialEventsOf(url);
  const match = url.searchParams.get('resourceVersionMatch') ?? '';
  const errors: FieldError[] = [];
  if (send !== null) {
    if (match !== 'NotOlderThan') {
      errors.push(
        forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (!watchListEnabled(gitVersion)) {
      errors.push(
        forbidden(
          'sendInitialEvents',
          'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
        ),
      );
    }
  }
  if (match !== '') {
    if (send === null) {
      errors.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan') {
      errors.push({
        field: 'resourceVersionMatch',
        reason: 'FieldValueNotSupported',
        detail: `Unsupported value: "${match}": supported values: "NotOlderThan"`,
      });
    }
    if ((url.searchParams.get('continue') ?? '') !== '') {
      errors.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
  }
  if (errors.length > 0) throw invalid(errors);
  const since = url.searchParams.get('resourceVersion') ?? '';
  const initialEvents = send ?? (since === '' || since === '0');
  const bookmarks = ['true', '1'].includes((url.searchParams.get('allowWatchBookmarks') ?? '').toLowerCase());
  return { initialEvents, initialEventsEndBookmark: send === true && bookmarks };
}

/** The bookmark that ends the initial events: only the kind and the resourceVersion of the state sent. */
export function initialEventsEndBookmark(
  apiVersion: string,
  kind: string,
  resourceVersion: string,
): Record<string, unknown> {
  return { kind, apiVersion, metadata: { resourceVersion, annotations: { [INITIAL_EVENTS_END]: 'true' } } };
}
