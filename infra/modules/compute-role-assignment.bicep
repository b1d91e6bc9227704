// Assigns the compute custom role to the function app's identity on one cluster resource group (deployed
// once per group with `scope: resourceGroup(...)`).

@description('Resource id of the compute custom role definition.')
param roleDefinitionId string

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

resource assignment 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(resourceGroup().id, principalId, roleDefinitionId)
  properties: {
    roleDefinitionId: roleDefinitionId
    principalId: principalId
    principalType: 'ServicePrincipal'
    description: 'vmss-prototype: refresh node-pool images of the clusters in this resource group.'
  }
}

output id string = assignment.id
