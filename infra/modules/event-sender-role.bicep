// Lets the app's identity publish run events (docs/events.md) to one Event Grid topic and nothing else: the
// role is scoped to that topic, deployed into the topic's own resource group (it may live elsewhere).

@description('Principal (object) id of the app\'s identity.')
param principalId string

@description('Name of the Event Grid topic the app publishes to.')
param topicName string

// EventGrid Data Sender: send events to the topic (Microsoft.EventGrid/topics/events/send/action), nothing else.
var eventGridDataSender = 'd5a91429-5739-47e2-a06b-3470a27159e7'

resource topic 'Microsoft.EventGrid/topics@2025-02-15' existing = {
  name: topicName
}

resource sender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(topic.id, principalId, eventGridDataSender)
  scope: topic
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', eventGridDataSender)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}
