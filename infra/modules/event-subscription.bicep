// An event subscription on an existing system topic that delivers to the reboot-notice queue with the
// topic's system-assigned identity. Deployed after queue-sender-role.bicep so the first delivery is allowed.

@description('Name of the system topic (in this resource group).')
param topicName string

@description('Event subscription name.')
param name string

@description('Event types delivered; everything else is dropped by Event Grid.')
@minLength(1)
param includedEventTypes string[]

@description('Advanced filters, all of which must match (Event Grid allows 25 filter values in total).')
param advancedFilters resourceInput<'Microsoft.EventGrid/systemTopics/eventSubscriptions@2025-02-15'>.properties.filter.advancedFilters = []

@description('Resource id of the storage account holding the queue.')
param storageAccountId string

@description('Name of the reboot-notice queue.')
param queueName string

resource topic 'Microsoft.EventGrid/systemTopics@2025-02-15' existing = {
  name: topicName
}

resource eventSubscription 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2025-02-15' = {
  parent: topic
  name: name
  properties: {
    eventDeliverySchema: 'EventGridSchema'
    filter: {
      includedEventTypes: includedEventTypes
      advancedFilters: advancedFilters
    }
    deliveryWithResourceIdentity: {
      identity: {
        type: 'SystemAssigned'
      }
      destination: {
        endpointType: 'StorageQueue'
        properties: {
          resourceId: storageAccountId
          queueName: queueName
          // A notice older than a week no longer says anything about the current prototype.
          queueMessageTimeToLiveInSeconds: 604800
        }
      }
    }
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
  }
}

output name string = eventSubscription.name
