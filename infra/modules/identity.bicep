// The one user-assigned managed identity the function app runs as: storage, Key Vault, Application
// Insights and the Microsoft.Compute custom role are all granted to it, so a redeploy keeps every grant.

@description('Name of the user-assigned managed identity.')
param name string

@description('Azure region of the identity.')
param location string

@description('Tags applied to the identity.')
param tags { *: string } = {}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2024-11-30' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output principalId string = identity.properties.principalId
output clientId string = identity.properties.clientId
