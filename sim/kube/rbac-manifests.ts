// The RBAC manifests' YAML, parsed once per process for the simulator's authorizers (rbac.ts).
import { parseAllDocuments } from 'yaml';

/**
 * The YAML documents of a manifest's text, parsed once per process: a test process starts a simulator
 * (and so an authorizer over the same manifests) for every explored point, and parsing them again each time
 * was about a tenth of a simulator's start. The documents are only read (each is validated into new
 * objects), so one parse serves every authorizer. Bounded: texts beyond the first few are parsed each time.
 */
const parsedManifests = new Map<string, readonly unknown[]>();
const PARSED_MANIFESTS_KEPT = 32;

export function manifestDocuments(file: string, text: string): readonly unknown[] {
  const known = parsedManifests.get(text);
  if (known !== undefined) return known;
  const documents: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) {
      throw new Error(`parsing RBAC manifest ${file}: ${document.errors[0]?.message ?? 'invalid YAML'}`);
    }
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) documents.push(value);
  }
  if (parsedManifests.size < PARSED_MANIFESTS_KEPT) parsedManifests.set(text, documents);
  return documents;
}
