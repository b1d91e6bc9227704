// Sample parameters of main.bicep for a private cluster (docs/private-clusters.md): the app integrates with
// a subnet of a virtual network peered with the cluster's, and reaches its storage and Key Vault through
// private endpoints registered in existing private DNS zones. Deploy it like main.bicepparam:
//   az deployment sub create --location <region> --template-file infra/main.bicep --parameters infra/main.private.bicepparam
// The compiler checks every value here against main.bicep's parameter declarations (npm test builds it).
using 'main.bicep'

param environmentName = 'private'

param clusters = [
  {
    name: 'prod-private'
    resourceGroup: 'k8s-prod-private'
    apiServer: {
      // A private API server: its name resolves only in the virtual networks linked to its private DNS
      // zone (internal.contoso.com here), and its NSG admits the app's integration subnet on 6443.
      url: 'https://k8s-prod-private.internal.contoso.com:6443'
    }
    pools: 'all'
    capture: {
      mode: 'drain-and-stop'
      prepImage: 'contoso.azurecr.io/mirror/busybox:1.37@sha256:0000000000000000000000000000000000000000000000000000000000000000'
    }
  }
]

var networkGroup = '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-network-weu/providers'
var dnsZones = '${networkGroup}/Microsoft.Network/privateDnsZones'

param network = {
  // Delegated to Microsoft.App/environments (Flex Consumption); its NSG and route table apply to the app.
  appSubnetId: '${networkGroup}/Microsoft.Network/virtualNetworks/vnet-vmssp/subnets/snet-app'
  privateEndpoints: {
    subnetId: '${networkGroup}/Microsoft.Network/virtualNetworks/vnet-vmssp/subnets/snet-private-endpoints'
    dnsZoneIds: {
      blob: '${dnsZones}/privatelink.blob.core.windows.net'
      queue: '${dnsZones}/privatelink.queue.core.windows.net'
      table: '${dnsZones}/privatelink.table.core.windows.net'
      vault: '${dnsZones}/privatelink.vaultcore.azure.net'
    }
  }
}

// The Health Resources topic delivers reboot notices through the storage firewall's trusted-services
// exception (the account stays closed to every other public caller).
param healthResourcesEvents = true
// Your object id, to write the tokens into the vault (from inside the network: its public access is off).
param operatorPrincipalId = ''
