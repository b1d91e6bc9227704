/**
 * The port to ARM's "permissions of the caller" API (`GET {scope}/providers/Microsoft.Authorization/
 * permissions`): the actions/notActions of every role assignment of the calling identity that applies at
 * a resource group. Implemented by shared/adapters/azure/arm-permissions.ts; the domain evaluates the
 * answer (domain/arm-permissions.ts). A missing resource group is NotFoundError; 401/403 TerminalError.
 */
import type { PermissionBlock } from '../domain/arm-permissions.js';

export interface ArmPermissionsReader {
  listPermissions(subscriptionId: string, resourceGroup: string): Promise<PermissionBlock[]>;
}
