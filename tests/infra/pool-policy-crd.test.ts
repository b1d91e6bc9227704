/**
 * The PoolImagePolicy CustomResourceDefinition (infra/kubernetes/pool-image-policy.crd.yaml) and the
 * product's schema of its spec (shared/config/pool-policy-spec.ts) say the same thing: the same fields,
 * the same enums, the same integer bounds, patterns that accept what the product accepts; and the status
 * the product writes (shared/application/pool-policy-status.ts) has no field the CRD would prune.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { parseAllDocuments } from 'yaml';
import type { z } from 'zod';

import { policyStatusOf } from '../../shared/application/pool-policy-status.js';
import type { PoolStatus } from '../../shared/application/pool-status.js';
import { parsePoolPolicySpec, POOL_POLICY_SPEC_FIELDS } from '../../shared/config/pool-policy-spec.js';
import { POOL_POLICY_RESOURCE } from '../../shared/domain/pool-policy.js';
import { readRepoFile } from './repo-files.js';

interface OpenApi {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  default?: unknown;
  properties?: Record<string, OpenApi>;
  items?: OpenApi;
  required?: string[];
  'x-kubernetes-int-or-string'?: boolean;
}

interface Crd {
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
      schema: { openAPIV3Schema: OpenApi };
    }[];
  };
}

const [document] = parseAllDocuments(readRepoFile('infra/kubernetes/pool-image-policy.crd.yaml'));
const crd = document?.toJS() as Crd;
const version = crd.spec.versions[0];
const root = version?.schema.openAPIV3Schema;
const specSchema = root?.properties?.['spec'];
const statusSchema = root?.properties?.['status'];

/** Every field path of an OpenAPI schema (`canary.soak`, `retirement.windows[].schedule`). */
function openApiPaths(schema: OpenApi, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${key}`;
    paths.push(path);
    if (child.type === 'object') paths.push(...openApiPaths(child, `${path}.`));
    if (child.type === 'array' && child.items?.type === 'object')
      paths.push(...openApiPaths(child.items, `${path}[].`));
  }
  return paths.sort();
}

interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  entries?: Record<string, string>;
}

function defOf(schema: z.ZodType): ZodDef {
  return (schema as unknown as { def: ZodDef }).def;
}

/** The schema under optional/default/pipe wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  const def = defOf(schema);
  if (['optional', 'default', 'prefault', 'nullable'].includes(def.type) && def.innerType !== undefined) {
    return unwrap(def.innerType);
  }
  if (def.type === 'pipe' && def.in !== undefined) return unwrap(def.in);
  return schema;
}

/** Every field path of the zod schema, and the enum values at each. */
function zodPaths(
  shape: Record<string, z.ZodType>,
  prefix = '',
  enums = new Map<string, string[]>(),
): string[] {
  const paths: string[] = [];
  for (const [key, child] of Object.entries(shape)) {
    const path = `${prefix}${key}`;
    paths.push(path);
    const inner = unwrap(child);
    const def = defOf(inner);
    if (def.type === 'object' && def.shape !== undefined)
      paths.push(...zodPaths(def.shape, `${path}.`, enums));
    if (def.type === 'array' && def.element !== undefined) {
      const element = defOf(unwrap(def.element));
      if (element.type === 'object' && element.shape !== undefined) {
        paths.push(...zodPaths(element.shape, `${path}[].`, enums));
      }
    }
    if (def.type === 'enum' && def.entries !== undefined) enums.set(path, Object.values(def.entries));
  }
  return paths.sort();
}

function openApiAt(path: string): OpenApi {
  let schema: OpenApi | undefined = specSchema;
  for (const part of path.split('.')) {
    const array = part.endsWith('[]');
    schema = schema?.properties?.[array ? part.slice(0, -2) : part];
    if (array) schema = schema?.items;
  }
  assert.ok(schema !== undefined, `the CRD has spec.${path}`);
  return schema;
}

/** A spec with `value` at `path` (`canary.instances`). */
function specWith(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split('.');
  const spec: Record<string, unknown> = {};
  let at = spec;
  for (const part of parts.slice(0, -1)) {
    const next: Record<string, unknown> = {};
    at[part] = next;
    at = next;
  }
  at[parts.at(-1) ?? ''] = value;
  return spec;
}

void describe('the PoolImagePolicy CRD', () => {
  void it('is the product’s resource: group, version, plural, kind, cluster-scoped, a status subresource', () => {
    assert.equal(crd.kind, 'CustomResourceDefinition');
    assert.equal(crd.metadata.name, `${POOL_POLICY_RESOURCE.plural}.${POOL_POLICY_RESOURCE.group}`);
    assert.equal(crd.spec.group, POOL_POLICY_RESOURCE.group);
    assert.equal(crd.spec.scope, 'Cluster');
    assert.equal(crd.spec.names.kind, POOL_POLICY_RESOURCE.kind);
    assert.equal(crd.spec.names.plural, POOL_POLICY_RESOURCE.plural);
    assert.equal(version?.name, POOL_POLICY_RESOURCE.version);
    assert.ok(version.served && version.storage);
    assert.deepEqual(version.subresources?.status, {});
  });

  void it('has exactly the spec fields the product validates', () => {
    const enums = new Map<string, string[]>();
    const fromZod = zodPaths(POOL_POLICY_SPEC_FIELDS, '', enums);
    assert.deepEqual(openApiPaths(specSchema ?? {}), fromZod);
    assert.ok(fromZod.length >= 20, `${fromZod.length} fields`);
    for (const [path, values] of enums) {
      assert.deepEqual(openApiAt(path).enum, values, `spec.${path}: the same enum`);
    }
    assert.equal(enums.size, 4);
  });

  void it('bounds every integer as the product does', () => {
    let checked = 0;
    for (const path of openApiPaths(specSchema ?? {})) {
      const schema = openApiAt(path);
      if (schema.type !== 'integer') continue;
      const { minimum, maximum } = schema;
      assert.ok(minimum !== undefined && maximum !== undefined, `spec.${path} has bounds`);
      assert.equal(parsePoolPolicySpec(specWith(path, minimum)).ok, true, `spec.${path}=${minimum}`);
      assert.equal(parsePoolPolicySpec(specWith(path, maximum)).ok, true, `spec.${path}=${maximum}`);
      assert.equal(parsePoolPolicySpec(specWith(path, minimum - 1)).ok, false, `spec.${path}=${minimum - 1}`);
      assert.equal(parsePoolPolicySpec(specWith(path, maximum + 1)).ok, false, `spec.${path}=${maximum + 1}`);
      checked += 1;
    }
    assert.equal(checked, 3);
  });

  void it('defaults only what has no setting behind it (paused), so a policy never overrides by default', () => {
    const defaulted = openApiPaths(specSchema ?? {}).filter((path) => openApiAt(path).default !== undefined);
    assert.deepEqual(defaulted, ['paused']);
    assert.equal(openApiAt('paused').default, false);
  });

  void it('has patterns that accept what the product accepts', () => {
    const samples: Record<string, { accepted: unknown[]; refused: unknown[] }> = {
      'canary.soak': { accepted: ['5m', '90s', '1h30m', '0', '6h'], refused: ['five minutes', '-1m'] },
      'retirement.olderThan': { accepted: ['14d', '1h', '1.5h'], refused: ['14 days'] },
      rollbackTo: { accepted: ['2026.1127.101500', '1.0.0'], refused: ['latest', '2026.1127'] },
      'retire.generation': { accepted: ['2026.1127.101500', 'unknown'], refused: ['all', 'v1'] },
    };
    for (const [path, { accepted, refused }] of Object.entries(samples)) {
      const schema = openApiAt(path);
      const pattern = new RegExp(schema.pattern ?? '');
      const value = (sample: unknown) => (path === 'retire.generation' ? { generation: sample } : sample);
      const at = path === 'retire.generation' ? 'retire' : path;
      for (const sample of accepted) {
        assert.match(String(sample), pattern, `the CRD accepts spec.${path}=${String(sample)}`);
        assert.equal(
          parsePoolPolicySpec(specWith(at, value(sample))).ok,
          true,
          `the product accepts ${String(sample)}`,
        );
      }
      for (const sample of refused) {
        assert.doesNotMatch(String(sample), pattern, `the CRD refuses spec.${path}=${String(sample)}`);
        assert.equal(
          parsePoolPolicySpec(specWith(at, value(sample))).ok,
          false,
          `the product refuses ${String(sample)}`,
        );
      }
    }
  });

  void it('names every field of the status the product writes (nothing is pruned)', () => {
    const status = policyStatusOf({
      status: SAMPLE_STATUS,
      observedGeneration: 3,
      actions: {
        rollback: {
          target: '2026.1120.1',
          observedGeneration: 3,
          state: 'Done',
          startedAt: '2026-11-28T02:00:00.000Z',
          finishedAt: '2026-11-28T02:01:00.000Z',
          message: 'rolled back',
        },
      },
      previousConditions: [],
      lastRun: {
        runId: 'r1',
        kind: 'refresh',
        outcome: 'refreshed',
        step: 'done',
        at: '2026-11-28T02:00:00.000Z',
        reason: 'ok',
      },
      now: new Date('2026-11-28T03:00:00Z'),
    });
    const missing: string[] = [];
    const walk = (value: unknown, schema: OpenApi | undefined, path: string): void => {
      if (schema === undefined) {
        missing.push(path);
        return;
      }
      if (Array.isArray(value)) {
        for (const item of value) walk(item, schema.items, `${path}[]`);
      } else if (typeof value === 'object' && value !== null) {
        for (const [key, child] of Object.entries(value))
          walk(child, schema.properties?.[key], `${path}.${key}`);
      }
    };
    walk(status, statusSchema, 'status');
    assert.deepEqual(missing, []);
  });

  void it('prints columns that read fields of the status', () => {
    const columns = version?.additionalPrinterColumns ?? [];
    assert.deepEqual(
      columns.map((column) => column.name),
      ['Pool', 'Version', 'Patched', 'Freshness', 'Nodes', 'Last run', 'State', 'Age'],
    );
    for (const column of columns) {
      if (column.jsonPath.startsWith('.metadata.')) continue;
      let schema: OpenApi | undefined = root;
      for (const part of column.jsonPath.slice(1).split('.')) schema = schema?.properties?.[part];
      assert.ok(schema !== undefined, `${column.name}: ${column.jsonPath} is in the schema`);
    }
  });
});

const SAMPLE_STATUS: PoolStatus = {
  cluster: 'prod',
  pool: 'agents',
  scaleSet: 'k8s-agents-vmss',
  modelImage: '/subscriptions/s/…/images/prod-agents',
  pointsAtOurImage: true,
  pinned: false,
  currentVersion: {
    name: '2026.1127.1',
    id: '/subscriptions/s/…/versions/2026.1127.1',
    sourceNode: 'agents-vmss000001',
    patchedAt: '2026-11-26T03:00:00.000Z',
  },
  versionCount: 2,
  eligible: true,
  run: { kind: 'idle' },
  freshness: {
    basis: 'donor-patch',
    since: '2026-11-26T03:00:00.000Z',
    ageSeconds: 172800,
    detail: 'patched then',
  },
  ownership: {
    lease: { state: 'free' },
    heldNodes: [
      {
        node: 'agents-vmss000002',
        runId: 'r0',
        byLiveRun: false,
        since: '2026-11-27T00:00:00.000Z',
        cordoned: true,
        vm: 'stopped',
      },
    ],
    leftovers: [],
    kept: [],
  },
  history: {
    versions: [
      { name: '2026.1127.1', state: 'current' },
      { name: '2026.1120.1', state: 'usable' },
    ],
    runs: [],
    freshness: [],
  },
  nodes: [
    {
      name: 'agents-vmss000001',
      generation: '2026.1127.1',
      ready: true,
      cordoned: false,
      olderGeneration: false,
    },
    {
      name: 'agents-vmss000002',
      generation: '2026.1120.1',
      ready: true,
      cordoned: true,
      olderGeneration: false,
    },
  ],
  convergence: {
    newest: '2026.1127.1',
    samples: [],
    now: { at: '2026-11-28T03:00:00.000Z', counts: {} },
    retirement: {
      enabled: true,
      budget: { nodes: 1 },
      budgetAllowed: 1,
      usedInWindow: 0,
      windowed: true,
      windowOpen: { openedAt: '2026-11-28T02:00:00.000Z', closesAt: '2026-11-28T04:00:00.000Z' },
      nextWindowAt: '2026-12-05T02:00:00.000Z',
    },
  },
  canary: { state: 'damaged', problem: 'a damaged record' },
  imagePolicy: {
    name: 'agents',
    generation: 3,
    valid: true,
    problems: [],
    paused: false,
    overridden: ['spec.canary.soak'],
    actions: {},
  },
};
