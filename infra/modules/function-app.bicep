// The function app on Flex Consumption (Linux, Node 22), running as the user-assigned identity. Its app
// settings are exactly the keys the app reads (shared/config/settings-keys.ts SETTINGS_KEYS), the host's
// identity-based storage and telemetry keys, and one Key Vault reference per service-account token.

@description('Function app name, globally unique (it is the host name).')
param name string

@description('Flex Consumption plan name.')
param planName string

@description('Azure region of the plan and app.')
param location string

@description('Tags applied to the plan and app.')
param tags { *: string } = {}

@description('Resource id of the user-assigned identity the app runs as.')
param identityId string

@description('Client id of that identity: picks it for storage, Key Vault references and the Azure SDK.')
param identityClientId string

@description('Name of the storage account (AzureWebJobsStorage, durable task hub, deployment package).')
param storageAccountName string

@description('Primary blob endpoint of that account, ending in "/".')
param storageBlobEndpoint string

@description('Blob container holding the deployment package.')
param deploymentContainerName string

@description('Application Insights connection string.')
param applicationInsightsConnectionString string

@description('Upper bound of instances the plan scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Memory of each instance in MB.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048

@description('VMSSP_CLUSTERS: the JSON text of the cluster list.')
param clustersJson string

@description('VMSSP_SCHEDULE: NCRONTAB of the timer that refreshes every cluster.')
param schedule string

@description('VMSSP_REAPER_SCHEDULE: NCRONTAB of the timer that gives back what dead runs left.')
param reaperSchedule string

@description('VMSSP_TASK_HUB: durable task hub name.')
param taskHub string

@description('VMSSP_MAX_PARALLEL_POOLS: pools refreshed at once.')
param maxParallelPools int

@description('VMSSP_MAX_POOLS_PER_SUBSCRIPTION: pools of one subscription refreshed at once.')
param maxPoolsPerSubscription int

@description('VMSSP_REBOOT_QUEUE: the reboot-notice queue.')
param rebootQueueName string

@description('VMSSP_QUIET_PERIOD: wait after the last reboot notice of a pool.')
param quietPeriod string

@description('VMSSP_EVENTS_TOPIC_ENDPOINT: Event Grid topic endpoint, or empty.')
param eventsTopicEndpoint string

@description('VMSSP_SECRET_<CLUSTER>_TOKEN settings: name → @Microsoft.KeyVault(SecretUri=…) reference. Only where the token is kept, never a token: the platform resolves each reference with the app\'s identity.')
param keyVaultReferences { *: string }

@description('Durable Task Scheduler endpoint (https://…durabletask.io) when it is the durable backend; empty for the Azure Storage task hub of AzureWebJobsStorage.')
param durableTaskSchedulerEndpoint string = ''

@description('Resource id of the subnet for virtual network integration (delegated to Microsoft.App/environments); empty for none.')
param virtualNetworkSubnetId string = ''

resource plan 'Microsoft.Web/serverfarms@2025-03-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    tier: 'FlexConsumption'
    name: 'FC1'
  }
  properties: {
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2025-03-01' = {
  name: name
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Without a system-assigned identity, Key Vault references must be told which identity to use.
    keyVaultReferenceIdentity: identityId
    // Outbound calls (API servers, storage and Key Vault private endpoints, Key Vault references) leave
    // through this subnet: https://learn.microsoft.com/azure/azure-functions/flex-consumption-plan#virtual-network-integration
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageBlobEndpoint}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
      }
      // Flex Consumption takes the runtime from here; FUNCTIONS_WORKER_RUNTIME must not be an app setting.
      runtime: {
        name: 'node'
        version: '22'
      }
    }
  }
}

// Publishing with a user name and password (FTP, SCM basic auth) would be a credential outside Entra ID.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

// The app's own settings and the host's; the token references are added where the settings are written.
var appSettings = {
  // Host: identity-based storage connection (no connection string, no key).
  AzureWebJobsStorage__accountName: storageAccountName
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  // Host: telemetry, ingested with an Entra token of the identity.
  APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsightsConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
  // App: read by loadSettings (shared/config/settings.ts).
  VMSSP_CLUSTERS: clustersJson
  VMSSP_SCHEDULE: schedule
  VMSSP_REAPER_SCHEDULE: reaperSchedule
  VMSSP_TASK_HUB: taskHub
  VMSSP_MAX_PARALLEL_POOLS: string(maxParallelPools)
  VMSSP_MAX_POOLS_PER_SUBSCRIPTION: string(maxPoolsPerSubscription)
  VMSSP_REBOOT_QUEUE: rebootQueueName
  VMSSP_QUIET_PERIOD: quietPeriod
  VMSSP_EVENTS_TOPIC_ENDPOINT: eventsTopicEndpoint
  AZURE_CLIENT_ID: identityClientId
}

// The Durable Task Scheduler backend: host.json keeps the Azure Storage provider (the default, and what
// runs locally on Azurite); app settings override host.json values
// (https://learn.microsoft.com/azure/azure-functions/functions-host-json#override-hostjson-values) with the
// azureManaged provider and its connection, authenticated with the identity's token
// (https://learn.microsoft.com/azure/durable-task/scheduler/durable-task-scheduler-identity). The
// connection string holds the endpoint and the identity's client id, no secret.
var durableSettings = empty(durableTaskSchedulerEndpoint)
  ? {}
  : {
      AzureFunctionsJobHost__extensions__durableTask__storageProvider__type: 'azureManaged'
      AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
      DURABLE_TASK_SCHEDULER_CONNECTION_STRING: 'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
    }

// Replaces the whole set: a setting removed here disappears from the app on the next deployment.
resource settings 'Microsoft.Web/sites/config@2025-03-01' = {
  parent: site
  name: 'appsettings'
  properties: union(appSettings, durableSettings, keyVaultReferences)
}

output name string = site.name
output defaultHostName string = site.properties.defaultHostName
