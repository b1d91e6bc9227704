// Log Analytics workspace and workspace-based Application Insights. Local (instrumentation-key) ingestion
// is disabled: the function app sends telemetry with its managed identity
// (APPLICATIONINSIGHTS_AUTHENTICATION_STRING), which needs Monitoring Metrics Publisher (rbac.bicep).

@description('Log Analytics workspace name.')
param logAnalyticsName string

@description('Application Insights component name.')
param applicationInsightsName string

@description('Azure region of both resources.')
param location string

@description('Tags applied to both resources.')
param tags { *: string } = {}

@description('Days Log Analytics keeps data (30 is included in the ingestion price).')
@minValue(30)
@maxValue(730)
param retentionInDays int = 30

resource workspace 'Microsoft.OperationalInsights/workspaces@2025-07-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
  }
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    DisableLocalAuth: true
  }
}

output applicationInsightsName string = applicationInsights.name
// Not a secret: with local auth disabled the instrumentation key in it cannot ingest anything.
output connectionString string = applicationInsights.properties.ConnectionString
