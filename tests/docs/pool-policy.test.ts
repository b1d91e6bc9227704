// docs/pool-policy.md documents every field of the PoolImagePolicy spec (the CRD's), and no other; its
// example is a spec the product accepts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseAllDocuments } from 'yaml';

import { parsePoolPolicySpec } from '../../shared/config/pool-policy-spec.js';
import { codeRows, readRepoFile, section } from './docs-files.js';

interface OpenApi {
  readonly type?: string;
  readonly properties?: Record<string, OpenApi>;
  readonly items?: OpenApi;
}

function paths(schema: OpenApi, prefix = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([key, child]) => [
    `${prefix}${key}`,
    ...(child.type === 'object' ? paths(child, `${prefix}${key}.`) : []),
    ...(child.type === 'array' && child.items !== undefined ? paths(child.items, `${prefix}${key}[].`) : []),
  ]);
}

const doc = readRepoFile('docs/pool-policy.md');

void describe('docs/pool-policy.md', () => {
  void it('lists exactly the fields of the CRD spec', () => {
    const crd = parseAllDocuments(readRepoFile('infra/kubernetes/pool-image-policy.crd.yaml'))[0]?.toJS() as {
      spec: { versions: { schema: { openAPIV3Schema: OpenApi } }[] };
    };
    const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.['spec'] ?? {};
    assert.deepEqual(codeRows(section(doc, 'spec-fields')).sort(), paths(spec).sort());
  });

  void it('gives a full example the product accepts', () => {
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const object = parseAllDocuments(example)[0]?.toJS() as { kind: string; spec: unknown };
    assert.equal(object.kind, 'PoolImagePolicy');
    const parsed = parsePoolPolicySpec(object.spec);
    assert.equal(parsed.ok, true, JSON.stringify(parsed));
    assert.ok(
      parsed.ok && parsed.spec.retirement?.windows?.length === 1 && parsed.spec.rollbackTo !== undefined,
    );
  });
});
