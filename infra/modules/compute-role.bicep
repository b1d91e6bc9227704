// The custom role of the function app's identity on the cluster resource groups: exactly the
// Microsoft.Compute actions the refresh pipeline calls, listed with their reasons in
// infra/azure/compute-actions.json (main.bicep loads that file; nothing else lists actions).
targetScope = 'subscription'

@description('Display name of the role, unique in the tenant.')
param roleName string

@description('Microsoft.Compute actions the role grants (from infra/azure/compute-actions.json).')
@minLength(1)
param actions string[]

@description('Resource group ids the role may be assigned on: the cluster resource groups, nothing wider.')
@minLength(1)
param assignableScopes string[]

resource role 'Microsoft.Authorization/roleDefinitions@2022-04-01' = {
  name: guid(subscription().id, roleName)
  properties: {
    roleName: roleName
    description: 'vmss-prototype: capture a patched node into a compute gallery image version and point its scale set at it. Actions and reasons: infra/azure/compute-actions.json.'
    type: 'CustomRole'
    permissions: [
      {
        actions: actions
        notActions: []
        dataActions: []
        notDataActions: []
      }
    ]
    assignableScopes: assignableScopes
  }
}

output id string = role.id
output name string = role.name
