// The function app's storage account: host state and the durable task hub (blobs, queues, tables), the
// Flex Consumption deployment package, and the reboot-notice queue Event Grid delivers to. Keys are off:
// every client (host, Event Grid, operators) authenticates with Entra ID.

@description('Storage account name: 3–24 lowercase letters and digits, globally unique.')
@minLength(3)
@maxLength(24)
param name string

@description('Azure region of the account.')
param location string

@description('Tags applied to the account.')
param tags { *: string } = {}

@description('Replication of the account. ZRS survives a zone outage where the region has zones.')
@allowed(['Standard_LRS', 'Standard_ZRS', 'Standard_GRS', 'Standard_GZRS'])
param skuName string = 'Standard_LRS'

@description('Blob container holding the Flex Consumption deployment package.')
param deploymentContainerName string

@description('Queue Event Grid delivers reboot notices to (VMSSP_REBOOT_QUEUE). Its poison queue is `<name>-poison`.')
@minLength(3)
@maxLength(56)
param rebootQueueName string

@description('Public network path: Enabled (default), TrustedServicesOnly (private endpoints, plus Azure services allowed by their identity such as Event Grid delivering to the reboot queue) or Disabled (private endpoints only).')
@allowed(['Enabled', 'TrustedServicesOnly', 'Disabled'])
param publicNetworkAccess string = 'Enabled'

resource account 'Microsoft.Storage/storageAccounts@2025-06-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: skuName
  }
  properties: {
    accessTier: 'Hot'
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    allowBlobPublicAccess: false
    // No account keys and no SAS signed with them: a leaked connection string cannot exist.
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    allowCrossTenantReplication: false
    // Private: clients reach the account through its private endpoints (modules/private-endpoint.bicep).
    // Event Grid system topics deliver from outside any virtual network; the trusted-services exception
    // lets them in with their identity while every other public caller is denied
    // (https://learn.microsoft.com/azure/storage/common/storage-network-security#trusted-access-for-resources-registered-in-your-subscription).
    publicNetworkAccess: publicNetworkAccess == 'Disabled' ? 'Disabled' : 'Enabled'
    networkAcls: {
      defaultAction: publicNetworkAccess == 'Enabled' ? 'Allow' : 'Deny'
      bypass: 'AzureServices'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2025-06-01' = {
  parent: account
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2025-06-01' = {
  parent: blobService
  name: deploymentContainerName
  properties: {
    publicAccess: 'None'
  }
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2025-06-01' = {
  parent: account
  name: 'default'
}

resource rebootQueue 'Microsoft.Storage/storageAccounts/queueServices/queues@2025-06-01' = {
  parent: queueService
  name: rebootQueueName
}

// The Functions host moves a message here after maxDequeueCount failed attempts. Created up front so an
// alert or a dashboard can point at it before the first failure.
resource rebootPoisonQueue 'Microsoft.Storage/storageAccounts/queueServices/queues@2025-06-01' = {
  parent: queueService
  name: '${rebootQueueName}-poison'
}

output id string = account.id
output name string = account.name
output blobEndpoint string = account.properties.primaryEndpoints.blob
output deploymentContainerName string = deploymentContainer.name
output rebootQueueName string = rebootQueue.name
output rebootPoisonQueueName string = rebootPoisonQueue.name
