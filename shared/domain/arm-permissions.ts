/**
 * Whether an Azure identity holds the Microsoft.Compute actions the product needs, from what ARM's
 * "permissions of the caller" API answers (`GET {scope}/providers/Microsoft.Authorization/permissions`):
 * one block of `actions`/`notActions` per role assignment that applies at the scope. Azure RBAC grants an
 * action when some block lists it (wildcards allowed) and that same block's `notActions` do not take it
 * away; `notActions` of one role never remove what another role grants (they are not deny assignments).
 * Also which resource group each action is needed on. Pure: the adapter and the role file supply the data.
 */

/** One role assignment's permissions at a scope, as ARM lists them. */
export interface PermissionBlock {
  readonly actions: readonly string[];
  readonly notActions: readonly string[];
}

/** An entry of infra/azure/compute-actions.json: the action, why the product needs it, and when. */
export interface RequiredAction {
  readonly action: string;
  readonly why: string;
  /** Needed only with this capture mode (e.g. Run Command); absent: always. */
  readonly captureMode?: string;
}

/**
 * `*` stands for any run of characters (including `/`), as in `Microsoft.Compute/*` or `*\/read`;
 * everything else compares case-insensitively, as ARM compares operation names.
 */
export function actionMatches(pattern: string, action: string): boolean {
  const parts = pattern.toLowerCase().split('*');
  const target = action.toLowerCase();
  const [first = '', ...rest] = parts;
  if (!target.startsWith(first)) return false;
  if (rest.length === 0) return target === first;
  let position = first.length;
  for (const [index, part] of rest.entries()) {
    const last = index === rest.length - 1;
    if (last) return target.length - part.length >= position && target.endsWith(part);
    const found = target.indexOf(part, position);
    if (found === -1) return false;
    position = found + part.length;
  }
  return true;
}

/** The block and pattern that grant `action`, or undefined when none does. */
export function grantOf(
  action: string,
  blocks: readonly PermissionBlock[],
): { readonly pattern: string } | undefined {
  for (const block of blocks) {
    const pattern = block.actions.find((candidate) => actionMatches(candidate, action));
    if (pattern === undefined) continue;
    if (block.notActions.some((excluded) => actionMatches(excluded, action))) continue;
    return { pattern };
  }
  return undefined;
}

/** The required actions no block grants, in the order given. */
export function missingActions(required: readonly string[], blocks: readonly PermissionBlock[]): string[] {
  return required.filter((action) => grantOf(action, blocks) === undefined);
}

/** Which of a pool's resource groups an action is exercised on. */
export type ActionScope = 'scale-set' | 'gallery';

/**
 * Gallery resources (and the gallery resource provider's operation status) live in the gallery's
 * resource group; the scale set, its instances, their disks and the snapshot live in the scale set's.
 */
export function scopeOfAction(action: string): ActionScope {
  const lower = action.toLowerCase();
  return lower.startsWith('microsoft.compute/galleries/') ||
    lower === 'microsoft.compute/locations/capsoperations/read'
    ? 'gallery'
    : 'scale-set';
}

/** The actions a pool needs, per scope, for its capture mode. */
export function requiredActionsFor(
  entries: readonly RequiredAction[],
  captureMode: string,
): Readonly<Record<ActionScope, readonly RequiredAction[]>> {
  const needed = entries.filter(
    (entry) => entry.captureMode === undefined || entry.captureMode === captureMode,
  );
  return {
    'scale-set': needed.filter((entry) => scopeOfAction(entry.action) === 'scale-set'),
    gallery: needed.filter((entry) => scopeOfAction(entry.action) === 'gallery'),
  };
}
