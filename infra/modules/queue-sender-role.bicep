// Lets an Event Grid system topic's identity add messages to the reboot-notice queue and nothing else:
// the role is scoped to that one queue, so a topic cannot write into the durable task hub's control queues
// in the same account.

@description('Principal (object) id of the system topic\'s identity.')
param principalId string

@description('Name of the storage account holding the queue.')
param storageAccountName string

@description('Name of the reboot-notice queue.')
param queueName string

// Storage Queue Data Message Sender: add messages only (no read, peek or delete).
var storageQueueDataMessageSender = 'c6a89b2d-59bc-44d0-9896-0f6e12d7b80a'

resource account 'Microsoft.Storage/storageAccounts@2025-06-01' existing = {
  name: storageAccountName
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2025-06-01' existing = {
  parent: account
  name: 'default'
}

resource queue 'Microsoft.Storage/storageAccounts/queueServices/queues@2025-06-01' existing = {
  parent: queueService
  name: queueName
}

resource sender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(queue.id, principalId, storageQueueDataMessageSender)
  scope: queue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageQueueDataMessageSender)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}
