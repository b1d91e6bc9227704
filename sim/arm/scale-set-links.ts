/**
 * ARM's linked access checks of a scale set's creation: the caller needs, besides
 * `Microsoft.Compute/virtualMachineScaleSets/write`, join on every subnet and load balancer backend pool
 * its network profile names and assign on every user-assigned identity it carries
 * (learn.microsoft.com/azure/role-based-access-control/permissions/networking and …/identity:
 * `subnets/join/action`, `backendAddressPools/join/action`, `userAssignedIdentities/assign/action`).
 */
import { isObject, type JsonObject } from './compute-state.js';

export interface LinkedCheck {
  readonly action: string;
  readonly scope: string;
}

/** The linked checks of creating a scale set from `body` (the PUT's JSON, as ARM's wire format nests it). */
export function linkedChecksOfCreation(body: JsonObject): LinkedCheck[] {
  const checks: LinkedCheck[] = [];
  const profile = objectAt(objectAt(body['properties'])?.['virtualMachineProfile']);
  for (const nic of arrayAt(objectAt(profile?.['networkProfile'])?.['networkInterfaceConfigurations'])) {
    for (const ip of arrayAt(propertiesOf(nic)['ipConfigurations'])) {
      const ipProperties = propertiesOf(ip);
      const subnet = idOf(ipProperties['subnet']);
      if (subnet !== undefined)
        checks.push({ action: 'Microsoft.Network/virtualNetworks/subnets/join/action', scope: subnet });
      for (const pool of arrayAt(ipProperties['loadBalancerBackendAddressPools'])) {
        const id = idOf(pool);
        if (id !== undefined)
          checks.push({
            action: 'Microsoft.Network/loadBalancers/backendAddressPools/join/action',
            scope: id,
          });
      }
    }
  }
  for (const identity of Object.keys(
    objectAt(objectAt(body['identity'])?.['userAssignedIdentities']) ?? {},
  )) {
    checks.push({
      action: 'Microsoft.ManagedIdentity/userAssignedIdentities/assign/action',
      scope: identity,
    });
  }
  return checks;
}

function objectAt(value: unknown): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

function arrayAt(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** A sub-resource's properties: nested under `properties` on the wire, flattened by some callers. */
function propertiesOf(value: JsonObject): JsonObject {
  return objectAt(value['properties']) ?? value;
}

function idOf(value: unknown): string | undefined {
  const id = objectAt(value)?.['id'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}
