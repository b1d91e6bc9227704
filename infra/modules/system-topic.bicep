// An Event Grid system topic with a system-assigned identity, which its event subscriptions deliver with
// (the storage account accepts no keys). Azure allows one system topic per source.

@description('System topic name.')
param name string

@description('Resource id of the event source: a subscription (/subscriptions/<id>) or a resource group.')
param source string

@description('Topic type, e.g. Microsoft.ResourceNotifications.HealthResources or Microsoft.Resources.ResourceGroups.')
param topicType string

@description('Tags applied to the topic.')
param tags { *: string } = {}

resource topic 'Microsoft.EventGrid/systemTopics@2025-02-15' = {
  name: name
  // Subscription and resource-group sources are global.
  location: 'global'
  tags: tags
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    source: source
    topicType: topicType
  }
}

output name string = topic.name
output principalId string = topic.identity.principalId
