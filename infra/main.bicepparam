// Sample parameters of main.bicep: describe your clusters, then deploy (infra/README.md):
//   az deployment sub create --location <region> --template-file infra/main.bicep --parameters infra/main.bicepparam
// The compiler checks every value here against main.bicep's parameter declarations (npm test builds it).
using 'main.bicep'

param environmentName = 'prod'

param clusters = [
  {
    name: 'prod-weu'
    resourceGroup: 'k8s-prod-weu'
    apiServer: {
      url: 'https://k8s-prod-weu.westeurope.cloudapp.azure.com:6443'
    }
    pools: [
      { name: 'agents', scaleSet: 'k8s-agents-31415926-vmss' }
      {
        name: 'gpu'
        scaleSet: 'k8s-gpu-31415926-vmss'
        selection: { minimumReadyTime: '2h', minimumCandidates: 2 }
      }
    ]
    selection: { maximumImageAge: '14d' }
    capture: {
      mode: 'drain-and-stop'
      prepImage: 'contoso.azurecr.io/mirror/busybox:1.37@sha256:0000000000000000000000000000000000000000000000000000000000000000'
    }
    gallery: { storageAccountType: 'Standard_ZRS', replicaCount: 2 }
    history: 3
  }
  {
    name: 'staging'
    resourceGroup: 'k8s-staging'
    apiServer: {
      url: 'https://k8s-staging.westeurope.cloudapp.azure.com:6443'
      auth: { entraId: { serverAppId: '66666666-7777-8888-9999-000000000000' } }
    }
    pools: 'all'
    capture: {
      mode: 'drain-and-stop'
      prepImage: 'contoso.azurecr.io/mirror/busybox:1.37@sha256:0000000000000000000000000000000000000000000000000000000000000000'
    }
  }
]

param schedule = '0 0 3 * * *'
param reaperSchedule = '0 */5 * * * *'
param maxParallelPools = 4
param quietPeriod = '10m'
param healthResourcesEvents = true
param resourceGroupEvents = false
// Your object id, to write the tokens into the vault: az ad signed-in-user show --query id -o tsv
param operatorPrincipalId = ''
