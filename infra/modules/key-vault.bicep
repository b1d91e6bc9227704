// Key Vault for cluster credentials (service-account tokens `<cluster>-token`, CA certificates
// `<cluster>-ca`). RBAC mode only: access policies cannot be granted, every read is an audited role grant.

@description('Key Vault name: 3–24 letters, digits and single hyphens, starting with a letter, globally unique.')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region of the vault.')
param location string

@description('Tags applied to the vault.')
param tags { *: string } = {}

@description('Enabled (default) or Disabled: only through the vault\'s private endpoint, including the platform resolving Key Vault references over the app\'s virtual network integration.')
@allowed(['Enabled', 'Disabled'])
param publicNetworkAccess string = 'Enabled'

resource vault 'Microsoft.KeyVault/vaults@2025-05-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    // A deleted token cannot be purged before its retention ends, not even by an Owner.
    enablePurgeProtection: true
    publicNetworkAccess: publicNetworkAccess
    networkAcls: {
      defaultAction: publicNetworkAccess == 'Enabled' ? 'Allow' : 'Deny'
      bypass: 'AzureServices'
    }
  }
}

output id string = vault.id
output name string = vault.name
output uri string = vault.properties.vaultUri
