/**
 * One way to ask ARM for a resource named by the caller (a snapshot, a copy disk, an image version), so
 * that asking twice is harmless: an existing resource of that name is judged (`judge` throws when it
 * cannot stand for the request: being deleted, made from another source) and otherwise kept.
 *
 * Without `newName` the resource is read first. With it the caller made the name up for this run (after
 * reading what exists): the PUT goes at once, saving the read that would find nothing. A retry of the same
 * request then meets the earlier attempt's resource: ARM answers a repeated PUT of an unchanged resource as
 * an update, and one it cannot take (a resource still being made, failed, being deleted, or made from
 * another source) with 409, which the read then explains exactly as if it had been made first.
 */
import { ignoreNotFound } from '../../domain/errors.js';
import { toRefreshError, withArmErrors } from './errors.js';

export interface CreateByName<T> {
  /** A lowercase gerund and object, the start of every error message (`requesting snapshot rg/s`). */
  readonly action: string;
  readonly newName: boolean;
  /** The SDK's GET of the resource. */
  readonly read: () => Promise<T>;
  /** Throws when the existing resource cannot stand for the request. */
  readonly judge: (existing: T) => void;
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
      request.judge(existing);
      return;
    }
  }
  const existing = await readIfPresent();
  if (existing !== undefined) {
    request.judge(existing);
    return;
  }
  await withArmErrors(action, request.create);
}

function isHttpConflict(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { statusCode?: unknown }).statusCode === 409
  );
}
