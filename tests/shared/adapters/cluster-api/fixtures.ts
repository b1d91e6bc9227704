/** The recorded-style Cluster API objects of tests/fixtures/cluster-api/, as the API server sends them. */
import { readFileSync } from 'node:fs';

const FIXTURES = new URL('../../../../../tests/fixtures/cluster-api/', import.meta.url);

/** A fixture as plain JSON (a fresh copy each call). */
export function clusterApiFixture(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as Record<string, unknown>;
}
