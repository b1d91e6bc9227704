// One private endpoint of a storage service (blob, queue, table) or of the Key Vault in the endpoints'
// subnet, registered in the private DNS zone of that service through a DNS zone group, so that the
// resource's public name resolves to the endpoint's private address inside the virtual network.
// https://learn.microsoft.com/azure/private-link/private-endpoint-dns

@description('Private endpoint name.')
param name string

@description('Azure region of the endpoint: the region of its virtual network.')
param location string

@description('Tags applied to the endpoint.')
param tags { *: string } = {}

@description('Resource id of the subnet the endpoint gets its private address in.')
param subnetId string

@description('Resource id of the storage account or Key Vault the endpoint connects to.')
param targetResourceId string

@description('Sub-resource of the target: blob, queue, table (storage) or vault (Key Vault).')
@allowed(['blob', 'queue', 'table', 'vault'])
param groupId string

@description('Resource id of the private DNS zone of that sub-resource, linked to the virtual network(s) that resolve it.')
param privateDnsZoneId string

resource endpoint 'Microsoft.Network/privateEndpoints@2025-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    subnet: {
      id: subnetId
    }
    privateLinkServiceConnections: [
      {
        name: name
        properties: {
          privateLinkServiceId: targetResourceId
          groupIds: [groupId]
        }
      }
    ]
  }
}

resource dnsZoneGroup 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2025-07-01' = {
  parent: endpoint
  name: 'default'
  properties: {
    privateDnsZoneConfigs: [
      {
        name: groupId
        properties: {
          privateDnsZoneId: privateDnsZoneId
        }
      }
    ]
  }
}
