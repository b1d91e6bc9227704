// vmss-prototype, one deployment per subscription: the function app (Flex Consumption, Node 22) and
// everything it runs on in a new resource group, reboot-notice Event Grid topics, and the least-privilege
// compute custom role assigned on each cluster resource group. Parameters: infra/README.md.
targetScope = 'subscription'

// ---------------------------------------------------------------------------------------------------------
// Parameters

@description('Short environment name, e.g. prod: part of the resource group name and of every generated resource name.')
@minLength(1)
@maxLength(16)
param environmentName string

@description('Azure region of the app and its resources (a region with Flex Consumption). Defaults to the deployment location given with --location.')
param location string = deployment().location

@description('Name of the resource group created for the app; empty for rg-vmssp-<environmentName>.')
@maxLength(90)
param resourceGroupName string = ''

@description('Clusters to manage: VMSSP_CLUSTERS entries (shared/config/settings.ts) without subscriptionId, which is set to this subscription. apiServer.caCertificate defaults to the vault secret <name>-ca, apiServer.auth to the service-account token in the vault secret <name>-token (app setting VMSSP_SECRET_<NAME>_TOKEN); give auth for Entra ID clusters.')
@minLength(1)
@maxLength(20)
param clusters array

@description('Resource groups besides the clusters\' own where the compute role is needed: pools (pools[].resourceGroup) or galleries (gallery.resourceGroup) kept elsewhere.')
@maxLength(3)
param extraResourceGroups string[] = []

@description('VMSSP_SCHEDULE: six-field NCRONTAB (UTC) of the timer that refreshes every cluster.')
param schedule string = '0 0 3 * * *'

@description('VMSSP_REAPER_SCHEDULE: six-field NCRONTAB (UTC) of the timer that gives back what dead runs left in every pool.')
param reaperSchedule string = '0 */5 * * * *'

@description('VMSSP_TASK_HUB: durable task hub name, 3–45 letters and digits starting with a letter. Changing it abandons running orchestrations.')
@minLength(3)
@maxLength(45)
param taskHub string = 'vmssprototype'

@description('VMSSP_MAX_PARALLEL_POOLS: pools refreshed at the same time across all clusters.')
@minValue(1)
@maxValue(20)
param maxParallelPools int = 4

@description('VMSSP_MAX_POOLS_PER_SUBSCRIPTION: pools of one Azure subscription the schedule refreshes at once.')
@minValue(1)
@maxValue(100)
param maxPoolsPerSubscription int = 8

@description('VMSSP_REBOOT_QUEUE: storage queue receiving reboot notices; `<name>-poison` is created next to it.')
@minLength(3)
@maxLength(56)
param rebootQueueName string = 'vmss-prototype-reboots'

@description('VMSSP_QUIET_PERIOD: how long a pool must see no new reboot notice before it is refreshed, e.g. 10m.')
param quietPeriod string = '10m'

@description('VMSSP_EVENTS_TOPIC_ENDPOINT: https endpoint of an Event Grid topic for the app, or empty for none.')
param eventsTopicEndpoint string = ''

@description('Resource id of the Event Grid topic behind eventsTopicEndpoint: the app\'s identity gets EventGrid Data Sender on that topic only. Empty: no grant (set it whenever eventsTopicEndpoint is set).')
param eventsTopicResourceId string = ''

@description('Create the Health Resources system topic (guest reboots, e.g. kured) for this subscription. Azure allows one per subscription: set false if one exists and subscribe it to the queue by hand.')
param healthResourcesEvents bool = true

@description('Create a resource-group system topic on each cluster resource group for ResourceActionSuccess of restart and reimage actions. Azure allows one per resource group.')
param resourceGroupEvents bool = false

@description('Object id of the operator (user or group) who copies service-account tokens into Key Vault; gets Key Vault Secrets Officer on the vault. Empty for none.')
param operatorPrincipalId string = ''

@description('Kind of principal operatorPrincipalId is.')
@allowed(['User', 'Group'])
param operatorPrincipalType string = 'User'

@description('Replication of the storage account (task hub state, deployment package, reboot queue).')
@allowed(['Standard_LRS', 'Standard_ZRS', 'Standard_GRS', 'Standard_GZRS'])
param storageSku string = 'Standard_LRS'

@description('Most instances the Flex Consumption plan scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Memory of each Flex Consumption instance in MB.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048

@description('Days Log Analytics keeps telemetry.')
@minValue(30)
@maxValue(730)
param logRetentionInDays int = 30

@description('Tags applied to every resource created.')
param tags { *: string } = {}

// ---------------------------------------------------------------------------------------------------------
// Durable backend (docs/durable-backend.md)

@description('Durable Functions backend: AzureStorage (the task hub in the app\'s storage account, the default) or DurableTaskScheduler (the managed scheduler, for large fleets and high throughput).')
@allowed(['AzureStorage', 'DurableTaskScheduler'])
param durableBackend string = 'AzureStorage'

@description('Billing SKU of the Durable Task Scheduler: Consumption (pay per action) or Dedicated (reserved capacity). Used with durableBackend DurableTaskScheduler.')
@allowed(['Consumption', 'Dedicated'])
param durableTaskSchedulerSku string = 'Consumption'

@description('CIDR ranges allowed to reach the Durable Task Scheduler endpoint (the app\'s outbound addresses, or a NAT gateway\'s); every call also needs the identity\'s role. An empty list would deny the app itself.')
@minLength(1)
param durableTaskSchedulerIpAllowlist string[] = ['0.0.0.0/0']

// ---------------------------------------------------------------------------------------------------------
// Private networking (docs/private-clusters.md)

@description('Absent: public endpoints. appSubnetId: virtual network integration of the app (outbound calls, e.g. to a private API server, leave through that subnet). privateEndpoints: private endpoints for the storage account (blob, queue, table) and the Key Vault, whose public network access is then turned off.')
param network {
  @description('Resource id of the subnet the app integrates with: in the app\'s region, delegated to Microsoft.App/environments, used by no other plan.')
  appSubnetId: string
  @description('Private endpoints of storage and Key Vault; absent: they stay public (authenticated with Entra ID only).')
  privateEndpoints: {
    @description('Resource id of the subnet the endpoints get their private addresses in (the app\'s virtual network or one peered with it).')
    subnetId: string
    @description('Resource ids of the existing private DNS zones, linked to the app\'s virtual network: privatelink.blob/queue/table.core.windows.net and privatelink.vaultcore.azure.net in the public cloud.')
    dnsZoneIds: {
      @description('Zone of blob endpoints.')
      blob: string
      @description('Zone of queue endpoints.')
      queue: string
      @description('Zone of table endpoints.')
      table: string
      @description('Zone of Key Vault endpoints.')
      vault: string
    }
  }?
}?

// ---------------------------------------------------------------------------------------------------------
// Names and derived values

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var allTags = union(tags, { 'vmss-prototype-environment': environmentName })

var names = {
  resourceGroup: empty(resourceGroupName) ? 'rg-vmssp-${environmentName}' : resourceGroupName
  identity: 'id-vmssp-${resourceToken}'
  storage: 'stvmssp${resourceToken}'
  keyVault: 'kv-vmssp-${resourceToken}'
  logAnalytics: 'log-vmssp-${resourceToken}'
  applicationInsights: 'appi-vmssp-${resourceToken}'
  plan: 'plan-vmssp-${resourceToken}'
  durableTaskScheduler: 'dts-vmssp-${resourceToken}'
  privateEndpoint: 'pe-vmssp-${resourceToken}'
  functionApp: 'func-vmssp-${resourceToken}'
  deploymentContainer: 'app-package-${resourceToken}'
  healthTopic: 'evgt-vmssp-health-${resourceToken}'
  resourceGroupTopic: 'evgt-vmssp-rg-${resourceToken}'
  customRole: 'vmss-prototype compute (${environmentName}, ${subscription().subscriptionId})'
}

// The one list of Microsoft.Compute actions the product calls, each with its reason (owned with the ARM
// simulator, which refuses any call outside it).
var computeActions = map(loadJsonContent('azure/compute-actions.json'), entry => entry.action)

// Where the compute role is assigned, and the only scopes it can ever be assigned on.
var clusterResourceGroups = union(map(clusters, cluster => cluster.resourceGroup), extraResourceGroups)

// Private endpoints: the host's storage services (blob leases and package, queues, task hub tables) and
// the vault. Absent: public endpoints.
var privateEndpoints = network.?privateEndpoints
var privateEndpointGroups = ['blob', 'queue', 'table', 'vault']

// Known before the vault exists, so app settings and VMSSP_CLUSTERS can name its secrets.
var keyVaultUri = 'https://${names.keyVault}${environment().suffixes.keyvaultDns}/'

func tokenSettingName(clusterName string) string => 'VMSSP_SECRET_${toUpper(replace(clusterName, '-', '_'))}_TOKEN'

var clusterSettings = [
  for cluster in clusters: union(cluster, {
    subscriptionId: subscription().subscriptionId
    apiServer: union(cluster.apiServer, {
      caCertificate: cluster.apiServer.?caCertificate ?? { keyVaultSecretUri: '${keyVaultUri}secrets/${cluster.name}-ca' }
      auth: cluster.apiServer.?auth ?? { serviceAccountToken: { env: tokenSettingName(cluster.name) } }
    })
  })
]

// Clusters whose CA certificate is expected in the vault as <name>-ca (the app reads it by URI).
var caClusters = filter(clusters, cluster => cluster.apiServer.?caCertificate == null)

// Clusters whose token this deployment wires: one Key Vault reference each, resolved by the platform with
// the app's identity (no version: a rotated token is picked up within a day or on restart).
var tokenClusters = filter(clusters, cluster => cluster.apiServer.?auth == null)
var tokenSettings = toObject(
  tokenClusters,
  cluster => tokenSettingName(cluster.name),
  cluster => '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${cluster.name}-token/)'
)

// Guest reboots (kured) are only visible as Health Resources annotations; keep the VM events of the
// cluster resource groups. Event Grid allows 25 filter values in all: 2 types + at most 23 groups.
var healthFilters = [
  {
    operatorType: 'StringIn'
    key: 'data.resourceInfo.properties.targetResourceType'
    values: [
      'Microsoft.Compute/virtualMachines'
      'Microsoft.Compute/virtualMachineScaleSets/virtualMachines'
    ]
  }
  {
    operatorType: 'StringBeginsWith'
    key: 'data.resourceInfo.properties.targetResourceId'
    values: map(clusterResourceGroups, group => '${subscription().id}/resourceGroups/${group}/')
  }
]

// ARM-initiated reboots and reimages. start/powerOff are left out: the app issues those itself.
var rebootOperations = [
  'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/restart/action'
  'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/reimage/action'
  'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/reimageall/action'
  'Microsoft.Compute/virtualMachineScaleSets/restart/action'
  'Microsoft.Compute/virtualMachineScaleSets/reimage/action'
  'Microsoft.Compute/virtualMachineScaleSets/reimageall/action'
  'Microsoft.Compute/virtualMachines/restart/action'
  'Microsoft.Compute/virtualMachines/reimage/action'
]

// ---------------------------------------------------------------------------------------------------------
// The app's resource group

resource rg 'Microsoft.Resources/resourceGroups@2025-04-01' = {
  name: names.resourceGroup
  location: location
  tags: allTags
}

module identity 'modules/identity.bicep' = {
  name: 'vmssp-identity'
  scope: rg
  params: {
    name: names.identity
    location: location
    tags: allTags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'vmssp-storage'
  scope: rg
  params: {
    name: names.storage
    location: location
    tags: allTags
    skuName: storageSku
    // Private: only the endpoints, plus Event Grid's trusted delivery to the reboot queue when a topic exists.
    publicNetworkAccess: privateEndpoints == null
      ? 'Enabled'
      : (healthResourcesEvents || resourceGroupEvents ? 'TrustedServicesOnly' : 'Disabled')
    deploymentContainerName: names.deploymentContainer
    rebootQueueName: rebootQueueName
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'vmssp-monitoring'
  scope: rg
  params: {
    logAnalyticsName: names.logAnalytics
    applicationInsightsName: names.applicationInsights
    location: location
    tags: allTags
    retentionInDays: logRetentionInDays
  }
}

module keyVault 'modules/key-vault.bicep' = {
  name: 'vmssp-key-vault'
  scope: rg
  params: {
    name: names.keyVault
    location: location
    tags: allTags
    publicNetworkAccess: privateEndpoints == null ? 'Enabled' : 'Disabled'
  }
}

module rbac 'modules/rbac.bicep' = {
  name: 'vmssp-rbac'
  scope: rg
  params: {
    principalId: identity.outputs.principalId
    storageAccountName: storage.outputs.name
    keyVaultName: keyVault.outputs.name
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
  }
}

module functionApp 'modules/function-app.bicep' = {
  name: 'vmssp-function-app'
  scope: rg
  // The host starts as soon as its settings exist: its storage and Key Vault grants must already be there.
  dependsOn: [rbac, privateEndpointsOfApp]
  params: {
    name: names.functionApp
    planName: names.plan
    location: location
    tags: allTags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    storageBlobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: storage.outputs.deploymentContainerName
    applicationInsightsConnectionString: monitoring.outputs.connectionString
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    clustersJson: string(clusterSettings)
    schedule: schedule
    reaperSchedule: reaperSchedule
    taskHub: taskHub
    maxParallelPools: maxParallelPools
    maxPoolsPerSubscription: maxPoolsPerSubscription
    rebootQueueName: storage.outputs.rebootQueueName
    quietPeriod: quietPeriod
    eventsTopicEndpoint: eventsTopicEndpoint
    keyVaultReferences: tokenSettings
    durableTaskSchedulerEndpoint: durableBackend == 'DurableTaskScheduler' ? durableTaskScheduler!.outputs.endpoint : ''
    virtualNetworkSubnetId: network.?appSubnetId ?? ''
  }
}

// The managed durable backend, when chosen: the scheduler, the task hub VMSSP_TASK_HUB names, and the
// identity's data role on that task hub (modules/durable-task-scheduler.bicep).
module durableTaskScheduler 'modules/durable-task-scheduler.bicep' = if (durableBackend == 'DurableTaskScheduler') {
  name: 'vmssp-durable-task-scheduler'
  scope: rg
  params: {
    name: names.durableTaskScheduler
    location: location
    tags: allTags
    skuName: durableTaskSchedulerSku
    taskHubName: taskHub
    principalId: identity.outputs.principalId
    ipAllowlist: durableTaskSchedulerIpAllowlist
  }
}

// Private endpoints of the app's storage services and vault, each registered in its private DNS zone.
module privateEndpointsOfApp 'modules/private-endpoint.bicep' = [
  for groupId in (privateEndpoints == null ? [] : privateEndpointGroups): {
    name: 'vmssp-private-endpoint-${groupId}'
    scope: rg
    params: {
      name: '${names.privateEndpoint}-${groupId}'
      location: location
      tags: allTags
      subnetId: privateEndpoints!.subnetId
      targetResourceId: groupId == 'vault' ? keyVault.outputs.id : storage.outputs.id
      groupId: groupId
      privateDnsZoneId: privateEndpoints!.dnsZoneIds[groupId]
    }
  }
]

// ---------------------------------------------------------------------------------------------------------
// Compute access: a custom role with exactly the actions in azure/compute-actions.json, assignable and
// assigned only on the cluster resource groups.

module computeRole 'modules/compute-role.bicep' = {
  name: 'vmssp-compute-role'
  params: {
    roleName: names.customRole
    actions: computeActions
    assignableScopes: map(clusterResourceGroups, group => '${subscription().id}/resourceGroups/${group}')
  }
}

module computeAccess 'modules/compute-role-assignment.bicep' = [
  for group in clusterResourceGroups: {
    name: 'vmssp-compute-${uniqueString(group)}'
    scope: resourceGroup(group)
    params: {
      roleDefinitionId: computeRole.outputs.id
      principalId: identity.outputs.principalId
    }
  }
]

// ---------------------------------------------------------------------------------------------------------
// Reboot notices: Event Grid system topics delivering to the reboot queue with their own identities.

// Run events (docs/events.md): the app may send to its topic, and only to it, and only when one is configured.
module eventsSender 'modules/event-sender-role.bicep' = if (!empty(eventsTopicResourceId)) {
  name: 'vmssp-events-sender'
  scope: resourceGroup(split(eventsTopicResourceId, '/')[2], split(eventsTopicResourceId, '/')[4])
  params: {
    principalId: identity.outputs.principalId
    topicName: last(split(eventsTopicResourceId, '/'))
  }
}

module healthTopic 'modules/system-topic.bicep' = if (healthResourcesEvents) {
  name: 'vmssp-health-topic'
  scope: rg
  params: {
    name: names.healthTopic
    source: subscription().id
    topicType: 'Microsoft.ResourceNotifications.HealthResources'
    tags: allTags
  }
}

module healthSender 'modules/queue-sender-role.bicep' = if (healthResourcesEvents) {
  name: 'vmssp-health-sender'
  scope: rg
  params: {
    principalId: healthTopic!.outputs.principalId
    storageAccountName: storage.outputs.name
    queueName: storage.outputs.rebootQueueName
  }
}

module healthSubscription 'modules/event-subscription.bicep' = if (healthResourcesEvents) {
  name: 'vmssp-health-subscription'
  scope: rg
  dependsOn: [healthSender]
  params: {
    topicName: healthTopic!.outputs.name
    name: 'vmssp-reboots'
    includedEventTypes: [
      'Microsoft.ResourceNotifications.HealthResources.AvailabilityStatusChanged'
      'Microsoft.ResourceNotifications.HealthResources.ResourceAnnotated'
    ]
    advancedFilters: healthFilters
    storageAccountId: storage.outputs.id
    queueName: storage.outputs.rebootQueueName
  }
}

module resourceGroupTopics 'modules/system-topic.bicep' = [
  for group in clusterResourceGroups: if (resourceGroupEvents) {
    name: 'vmssp-rg-topic-${uniqueString(group)}'
    scope: resourceGroup(group)
    params: {
      name: names.resourceGroupTopic
      source: '${subscription().id}/resourceGroups/${group}'
      topicType: 'Microsoft.Resources.ResourceGroups'
      tags: allTags
    }
  }
]

module resourceGroupSenders 'modules/queue-sender-role.bicep' = [
  for (group, index) in clusterResourceGroups: if (resourceGroupEvents) {
    name: 'vmssp-rg-sender-${uniqueString(group)}'
    scope: rg
    params: {
      principalId: resourceGroupTopics[index]!.outputs.principalId
      storageAccountName: storage.outputs.name
      queueName: storage.outputs.rebootQueueName
    }
  }
]

module resourceGroupSubscriptions 'modules/event-subscription.bicep' = [
  for (group, index) in clusterResourceGroups: if (resourceGroupEvents) {
    name: 'vmssp-rg-subscription-${uniqueString(group)}'
    scope: resourceGroup(group)
    dependsOn: [resourceGroupSenders[index]]
    params: {
      topicName: resourceGroupTopics[index]!.outputs.name
      name: 'vmssp-reboots'
      includedEventTypes: ['Microsoft.Resources.ResourceActionSuccess']
      advancedFilters: [
        {
          operatorType: 'StringIn'
          key: 'data.operationName'
          values: rebootOperations
        }
      ]
      storageAccountId: storage.outputs.id
      queueName: storage.outputs.rebootQueueName
    }
  }
]

// ---------------------------------------------------------------------------------------------------------
// Outputs (no secret: tokens never pass through this deployment)

output resourceGroupName string = rg.name
output functionAppName string = functionApp.outputs.name
output functionAppUrl string = 'https://${functionApp.outputs.defaultHostName}'
output identityPrincipalId string = identity.outputs.principalId
output identityClientId string = identity.outputs.clientId
output rebootQueueName string = storage.outputs.rebootQueueName
output keyVaultName string = keyVault.outputs.name
output keyVaultUri string = keyVault.outputs.uri
output customRoleId string = computeRole.outputs.id
// The scheduler whose dashboard shows the runs (empty with the Azure Storage backend).
output durableTaskSchedulerName string = durableBackend == 'DurableTaskScheduler' ? durableTaskScheduler!.outputs.name : ''
// Names of the vault entries to fill after the deployment (infra/README.md step 5), never their values.
output vaultEntriesToFill array = concat(
  map(tokenClusters, cluster => '${cluster.name}-token'),
  map(caClusters, cluster => '${cluster.name}-ca')
)
