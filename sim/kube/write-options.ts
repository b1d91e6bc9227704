/**
 * The query options every create, update and patch takes (CreateOptions, UpdateOptions, PatchOptions):
 * `dryRun`, `fieldValidation`, `fieldManager` and, for apply, `force`.
 */
import { type FieldValidation, parseFieldValidation } from './field-pruning.js';
import { managerOf } from './managed-fields.js';
import { KubeApiError } from './status.js';

/**
 * `dryRun` as the API server validates it (`dryRun=All` is the only value; anything else is refused
 * the way `ValidateDryRun` does: 422 on the request's options).
 */
export function parseDryRun(values: readonly string[], optionsKind: string): boolean {
  for (const value of values) {
    if (value !== 'All') {
      throw new KubeApiError(
        'Invalid',
        `${optionsKind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["${value}"]: supported values: "All"`,
        {
          group: 'meta.k8s.io',
          kind: optionsKind,
          causes: [
            {
              reason: 'FieldValueNotSupported',
              message: `Unsupported value: ["${value}"]: supported values: "All"`,
              field: 'dryRun',
            },
          ],
        },
      );
    }
  }
  return values.length > 0;
}

/** What a create, update or patch request asks for in its query. */
export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** The manager the write is recorded for: `fieldManager`, else the user agent's first token. */
  fieldManager: string;
  /** Whether `fieldManager` was given (server-side apply requires it). */
  fieldManagerGiven: boolean;
  /** `force=true`: an apply takes the fields other managers own instead of conflicting. */
  force: boolean;
}

export function writeOptionsOf(url: URL, optionsKind: string, userAgent: string | undefined): WriteOptions {
  const fieldManager = url.searchParams.get('fieldManager');
  return {
    dryRun: parseDryRun(url.searchParams.getAll('dryRun'), optionsKind),
    fieldValidation: parseFieldValidation(url, optionsKind),
    fieldManager: managerOf(fieldManager, userAgent),
    fieldManagerGiven: fieldManager !== null && fieldManager !== '',
    force: url.searchParams.get('force') === 'true',
  };
}
