/**
 * One way to ask ARM for a copy named by the caller (a snapshot, a copy disk, an image version), so that
 * asking twice is harmless: an existing resource of that name made from the same source stands for the
 * request; one being deleted must be waited out (transient); one made from another source means the name
 * is taken (terminal).
 *
 * Without `newName` the resource is read first. With it the caller made the name up for this run (after
 * reading what exists): the PUT goes at once, saving the read that would find nothing. A retry of the same
 * request then meets the earlier attempt's resource: ARM answers a repeated PUT of an unchanged resource as
 * an update, and one it cannot take (a resource still being made, failed, being deleted, or made from
 * another source) with 409, which the read then explains exactly as if it had been made first.
 */
import { ignoreNotFound, TerminalError } from '../../domain/errors.js';
import { throwIfDeleting, toRefreshError, withArmErrors } from './errors.js';

/** What decides whether an existing resource stands for the request. */
export interface ExistingCopy {
  readonly provisioningState?: string | undefined;
  /** What it was made from; undefined when ARM does not say. */
  readonly sourceId?: string | undefined;
}

export interface CreateByName<T> {
  /** A lowercase gerund and object, the start of every error message (`requesting snapshot rg/s`). */
  readonly action: string;
  /** In messages: `snapshot`, `disk`, `image version`. */
  readonly what: string;
  /** The code of the terminal error when the name is taken by a copy of something else. */
  readonly nameTakenCode: string;
  readonly newName: boolean;
  /** The source the request copies. */
  readonly sourceId: string;
  /** The SDK's GET of the resource. */
  readonly read: () => Promise<T>;
  readonly existingOf: (resource: T) => ExistingCopy;
  /** The SDK's PUT (its long-running operation is not waited for). */
  readonly create: () => Promise<unknown>;
}

export async function createByName<T>(request: CreateByName<T>): Promise<void> {
  const { action } = request;
  const readIfPresent = (): Promise<T | undefined> =>
    withArmErrors(action, request.read).catch(ignoreNotFound);
  if (request.newName) {
    try {
      await request.create();
      return;
    } catch (error: unknown) {
      if (!isHttpConflict(error)) throw toRefreshError(error, action);
      const existing = await readIfPresent();
      // Nothing of that name: the conflict is ARM's own (a quota, a lock) and is the answer.
      if (existing === undefined) throw toRefreshError(error, action);
      judge(request, request.existingOf(existing));
      return;
    }
  }
  const existing = await readIfPresent();
  if (existing !== undefined) {
    judge(request, request.existingOf(existing));
    return;
  }
  await withArmErrors(action, request.create);
}

/**
 * Throws unless the existing copy stands for the request. One that ended Failed stands too: the caller
 * reads it, sees the failure and deletes it before asking again.
 */
function judge(
  request: Pick<CreateByName<unknown>, 'action' | 'what' | 'nameTakenCode' | 'sourceId'>,
  existing: ExistingCopy,
): void {
  throwIfDeleting(existing.provisioningState, request.action, request.what);
  const source = existing.sourceId;
  if (source !== undefined && source.toLowerCase() !== request.sourceId.toLowerCase()) {
    throw new TerminalError(
      request.nameTakenCode,
      `${request.action}: a ${request.what} of this name already exists, made from ${source}, not ${request.sourceId}`,
    );
  }
}

function isHttpConflict(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { statusCode?: unknown }).statusCode === 409
  );
}
