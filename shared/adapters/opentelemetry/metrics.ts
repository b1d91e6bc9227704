/**
 * The OpenTelemetry SDKs and exporters: the only files that load them. Application code
 * records through @opentelemetry/api (shared/application/run-metrics.ts); what exports is chosen here:
 * - the function app: the Azure Monitor OpenTelemetry distro, when the host has an Application Insights
 *   connection string (`APPLICATIONINSIGHTS_CONNECTION_STRING`), with Entra ID auth when the host says
 *   so (`APPLICATIONINSIGHTS_AUTHENTICATION_STRING` `Authorization=AAD`, as the Bicep sets it);
 * - the CLI: a console exporter, or OTLP over HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT` (the standard
 *   variables configure it).
 * Every SDK is imported dynamically, so nothing loads unless asked.
 */
import type { TokenCredential } from '@azure/core-auth';
import type { MeterProvider } from '@opentelemetry/api';
import { metrics } from '@opentelemetry/api';

import { definedOnly } from '../../domain/optional.js';

/**
 * Starts the Azure Monitor distro and registers its providers globally (compose() then takes the global
 * meter provider). Returns false when there is no connection string: nothing is loaded.
 */
export async function startAzureMonitor(options: {
  readonly connectionString: string | undefined;
  /** The identity that may publish (Monitoring Metrics Publisher) when local auth is disabled. */
  readonly credential?: TokenCredential;
}): Promise<boolean> {
  if (options.connectionString === undefined || options.connectionString === '') return false;
  const { useAzureMonitor } = await import('@azure/monitor-opentelemetry');
  useAzureMonitor({
    azureMonitorExporterOptions: {
      connectionString: options.connectionString,
      ...definedOnly({ credential: options.credential }),
    },
  });
  return true;
}

export type CliMetricsExport = 'console' | 'otlp';

export interface CliMeters {
  readonly meterProvider: MeterProvider;
  /** Exports what is left and stops (call before the CLI exits). */
  shutdown(): Promise<void>;
}

/** A meter provider for one CLI command, exporting to the console or over OTLP/HTTP. */
export async function startCliMeters(kind: CliMetricsExport): Promise<CliMeters> {
  const { MeterProvider, PeriodicExportingMetricReader, ConsoleMetricExporter } =
    await import('@opentelemetry/sdk-metrics');
  const exporter =
    kind === 'console'
      ? new ConsoleMetricExporter()
      : new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter();
  const provider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })],
  });
  return { meterProvider: provider, shutdown: () => provider.shutdown() };
}

/** The global meter provider (the distro's once started; otherwise the API's no-op one). */
export function globalMeterProvider(): MeterProvider {
  return metrics.getMeterProvider();
}
