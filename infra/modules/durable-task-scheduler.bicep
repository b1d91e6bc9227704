// The Durable Task Scheduler: the managed backend of Durable Functions, chosen with
// durableBackend = 'DurableTaskScheduler' in main.bicep instead of the Azure Storage task hub. One scheduler,
// one task hub named like VMSSP_TASK_HUB, and the app's identity as Durable Task Data Contributor on that
// task hub only (the identity authenticates with its token: the scheduler has no keys).
// https://learn.microsoft.com/azure/durable-task/scheduler/durable-task-scheduler
// https://learn.microsoft.com/azure/durable-task/scheduler/durable-task-scheduler-identity

@description('Scheduler name: 3–64 letters, digits and hyphens, unique in the resource group.')
@minLength(3)
@maxLength(64)
param name string

@description('Azure region of the scheduler; the function app\'s region keeps latency low.')
param location string

@description('Tags applied to the scheduler and its task hub.')
param tags { *: string } = {}

@description('Billing SKU: Consumption (pay per action) or Dedicated (reserved capacity units).')
@allowed(['Consumption', 'Dedicated'])
param skuName string

@description('Capacity units of a Dedicated scheduler; ignored for Consumption.')
@minValue(1)
@maxValue(3)
param capacity int = 1

@description('Task hub name: the host\'s durableTask hubName (VMSSP_TASK_HUB).')
param taskHubName string

@description('Principal (object) id of the function app\'s user-assigned identity.')
param principalId string

@description('CIDR ranges allowed to reach the scheduler endpoint. An empty list denies every caller.')
@minLength(1)
param ipAllowlist string[]

// Built-in role "Durable Task Data Contributor": Microsoft.DurableTask/* data actions only, no control plane
// (https://learn.microsoft.com/azure/role-based-access-control/built-in-roles/integration#durable-task-data-contributor).
var durableTaskDataContributor = '0ad04412-c4d5-4796-b79c-f76d14c8d402'

resource scheduler 'Microsoft.DurableTask/schedulers@2025-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    sku: skuName == 'Dedicated' ? { name: skuName, capacity: capacity } : { name: skuName }
    ipAllowlist: ipAllowlist
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2025-11-01' = {
  parent: scheduler
  name: taskHubName
}

resource dataContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(taskHub.id, principalId, durableTaskDataContributor)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output name string = scheduler.name
output taskHubName string = taskHub.name
// The scheduler's https endpoint, for the host's connection string (no secret: access needs the role).
output endpoint string = scheduler.properties.endpoint
