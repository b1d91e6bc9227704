// Data-plane roles of the function app's identity, each on the one resource it is needed for (never the
// resource group): storage for the Functions host and durable task hub, Key Vault for cluster
// credentials, Application Insights for Entra-authenticated telemetry.

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

@description('Name of the function app\'s storage account.')
param storageAccountName string

@description('Name of the Key Vault holding cluster credentials.')
param keyVaultName string

@description('Name of the Application Insights component.')
param applicationInsightsName string

@description('Object id of an operator (user or group) allowed to write secrets into the vault; empty for none.')
param operatorPrincipalId string = ''

@description('Kind of principal operatorPrincipalId is.')
@allowed(['User', 'Group'])
param operatorPrincipalType string = 'User'

// Built-in role definition ids (identical in every tenant).
var roles = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
}

resource account 'Microsoft.Storage/storageAccounts@2025-06-01' existing = {
  name: storageAccountName
}

resource vault 'Microsoft.KeyVault/vaults@2025-05-01' existing = {
  name: keyVaultName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

// Blobs: the host's lease blobs (timer and singleton locks), the durable task hub's partition leases and
// large-message blobs, and reading the Flex deployment package. Owner is what the Functions documentation
// requires for an identity-based AzureWebJobsStorage; beyond Contributor it only adds ACL management on
// hierarchical-namespace accounts, which this one is not.
resource blobOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, roles.storageBlobDataOwner)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataOwner)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// Queues: the durable task hub's control and work-item queues (create, send, peek, delete) and the
// reboot-notice queue trigger with its poison queue.
resource queueContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, roles.storageQueueDataContributor)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageQueueDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// Tables: the durable task hub's Instances and History tables (orchestration state and replay history)
// and its partition table.
resource tableContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, roles.storageTableDataContributor)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageTableDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// Read secret values: Key Vault references in app settings (service-account tokens) and CA certificates
// the app reads by URI. No list/write/delete of secrets, no keys or certificates.
resource secretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, principalId, roles.keyVaultSecretsUser)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// Publish telemetry with an Entra token: the component has local (instrumentation-key) auth disabled.
resource metricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(applicationInsights.id, principalId, roles.monitoringMetricsPublisher)
  scope: applicationInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// The operator who copies service-account tokens into the vault (infra/README.md). Optional: a pipeline
// or a vault administrator may hold this role already.
resource operatorSecretsOfficer 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(vault.id, operatorPrincipalId, roles.keyVaultSecretsOfficer)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}
