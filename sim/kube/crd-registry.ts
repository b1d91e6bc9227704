/**
 * The custom resources one simulated API server serves, kept in step with its
 * CustomResourceDefinitions: the naming and establishing controllers (status `acceptedNames`,
 * conditions `NamesAccepted` and `Established`, set on the next turn of the scheduler after a CRD is
 * written, as the real controllers do it asynchronously), the served versions of every established
 * CRD (for routing, discovery and the OpenAPI documents), and the cleanup of a deleted CRD's objects.
 *
 * Upstream (kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver/pkg/`):
 * `controller/status/naming_controller.go` (`calculateNamesAndConditions`: conflicts with the other
 * CRDs of the group, reasons and messages), `controller/establish/establishing_controller.go`
 * (`InitialNamesAccepted`), `apiserver/customresource_discovery_controller.go` (versions sorted by
 * `version.CompareKubeAwareVersionStrings`, the verbs, the `status` subresource),
 * `controller/finalizer/crd_finalizer.go` (deleting a CRD deletes its custom resources).
 */
import type { KubeObject, KubeResource, KubeStore, Scheduler, SimClock } from '../contracts.js';
import { customDefinitionName, customDefinitions, toOpenApiV2 } from './crd-openapi.js';
import { DEFAULT_COLUMNS } from './crd-tables.js';
import type { PrinterColumn } from './crd-types.js';
import type { Schema } from './openapi-schemas.js';
import type { OpenApiExtension, ResourceInfo, ServedCustomResources } from './resources.js';

const CRDS: KubeResource = 'customresourcedefinitions';
const VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

export interface CrdRegistry extends ServedCustomResources {
  close(): void;
}

export interface CrdRegistryOptions {
  store: KubeStore;
  clock: SimClock;
  scheduler: Scheduler;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

/** `version.CompareKubeAwareVersionStrings`: GA before beta before alpha, higher first, others last by name. */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!match) return undefined;
    const stage = match[2] === undefined ? 2 : match[2] === 'beta' ? 1 : 0;
    return [stage, Number(match[1]), Number(match[3] ?? 0)];
  };
  const [x, y] = [parse(a), parse(b)];
  if (!x || !y) return x ? -1 : y ? 1 : a < b ? -1 : a > b ? 1 : 0;
  return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
}

function condition(crd: KubeObject, type: string): Record<string, unknown> | undefined {
  const conditions = record(crd.status).conditions;
  return Array.isArray(conditions) ? conditions.map(record).find((entry) => entry.type === type) : undefined;
}

function isEstablished(crd: KubeObject): boolean {
  return condition(crd, 'Established')?.status === 'True';
}

/** The ResourceInfo of every served version of an established CRD, named by its accepted names. */
function servedVersions(crd: KubeObject): ResourceInfo[] {
  const spec = record(crd.spec);
  const names = { ...record(spec.names), ...record(record(crd.status).acceptedNames) };
  const group = text(spec.group);
  const plural = text(names.plural);
  const kind = text(names.kind);
  const namespaced = spec.scope === 'Namespaced';
  const versions = Array.isArray(spec.versions) ? spec.versions.map(record) : [];
  return versions
    .filter((version) => version.served === true)
    .map((version) => {
      const name = text(version.name);
      const statusSubresource = record(version.subresources).status !== undefined;
      const columns = Array.isArray(version.additionalPrinterColumns)
        ? (version.additionalPrinterColumns as PrinterColumn[])
        : [];
      const selectable = Array.isArray(version.selectableFields)
        ? version.selectableFields.map((field) => text(record(field).jsonPath).replace(/^\./, ''))
        : [];
      return {
        resource: `${plural}.${group}` as KubeResource,
        plural,
        group,
        version: name,
        kind,
        singular: text(names.singular) || kind.toLowerCase(),
        namespaced,
        verbs: VERBS,
        ...(strings(names.shortNames).length > 0 ? { shortNames: strings(names.shortNames) } : {}),
        ...(strings(names.categories).length > 0 ? { categories: strings(names.categories) } : {}),
        ...(statusSubresource
          ? { subresources: { status: { kind, verbs: ['get', 'patch', 'update'] } } }
          : {}),
        fieldSelectors: ['metadata.name', 'metadata.namespace', ...selectable],
        custom: {
          crd: crd.metadata.name,
          schema: record(record(version.schema).openAPIV3Schema),
          statusSubresource,
          columns: columns.length > 0 ? columns : DEFAULT_COLUMNS,
          definition: customDefinitionName(group, name, kind),
          listDefinition: customDefinitionName(group, name, text(names.listKind) || `${kind}List`),
        },
      };
    });
}

/**
 * The naming controller's verdict: the names are accepted unless another CRD of the group already
 * uses one of them (`"x" is already in use`).
 */
function namesVerdict(
  crd: KubeObject,
  others: readonly KubeObject[],
): { reason: string; message: string } | undefined {
  const spec = record(crd.spec);
  const names = record(spec.names);
  const taken = {
    plural: new Set<string>(),
    singular: new Set<string>(),
    short: new Set<string>(),
    kind: new Set<string>(),
  };
  for (const other of others) {
    if (other.metadata.name === crd.metadata.name || text(record(other.spec).group) !== text(spec.group))
      continue;
    const accepted = record(record(other.status).acceptedNames);
    taken.plural.add(text(accepted.plural));
    taken.singular.add(text(accepted.singular));
    for (const short of strings(accepted.shortNames)) taken.short.add(short);
    taken.kind.add(text(accepted.kind));
    taken.kind.add(text(accepted.listKind));
  }
  const clash = (reason: string, value: string, set: Set<string>) =>
    value !== '' && set.has(value) ? { reason, message: `"${value}" is already in use` } : undefined;
  return (
    clash('PluralConflict', text(names.plural), taken.plural) ??
    clash('SingularConflict', text(names.singular), taken.singular) ??
    strings(names.shortNames)
      .map((short) => clash('ShortNamesConflict', short, taken.short))
      .find((found) => found !== undefined) ??
    clash('KindConflict', text(names.kind), taken.kind) ??
    clash('ListKindConflict', text(names.listKind), taken.kind)
  );
}

export function createCrdRegistry(options: CrdRegistryOptions): CrdRegistry {
  const { store, clock, scheduler } = options;
  /** Served versions by CRD name. */
  const served = new Map<string, { crd: KubeObject; infos: ResourceInfo[] }>();
  let revision = 0;
  let openApi: OpenApiExtension | undefined;

  function register(crd: KubeObject): void {
    const before = served.get(crd.metadata.name);
    if (isEstablished(crd)) served.set(crd.metadata.name, { crd, infos: servedVersions(crd) });
    else served.delete(crd.metadata.name);
    if (before?.crd.metadata.resourceVersion !== crd.metadata.resourceVersion || !isEstablished(crd)) {
      revision += 1;
      openApi = undefined;
    }
  }

  /** The naming and establishing controllers for one CRD: writes its status when it changed. */
  function reconcile(name: string): void {
    const crd = store.get(CRDS, undefined, name);
    if (!crd) return;
    const verdict = namesVerdict(crd, store.list(CRDS));
    const now = new Date(Math.floor(clock.nowMs() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const wanted: Record<string, unknown>[] = [
      verdict
        ? { type: 'NamesAccepted', status: 'False', reason: verdict.reason, message: verdict.message }
        : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
      verdict && !isEstablished(crd)
        ? {
            type: 'Established',
            status: 'False',
            reason: 'NotAccepted',
            message: 'not all names are accepted',
          }
        : {
            type: 'Established',
            status: 'True',
            reason: 'InitialNamesAccepted',
            message: 'the initial names have been accepted',
          },
    ];
    const conditions = wanted.map((entry) => {
      const existing = condition(crd, text(entry.type));
      const same =
        existing !== undefined && existing.status === entry.status && existing.reason === entry.reason;
      return { ...entry, lastTransitionTime: same ? existing.lastTransitionTime : now };
    });
    const status = record(crd.status);
    const acceptedNames = verdict ? record(status.acceptedNames) : record(record(crd.spec).names);
    const next = { ...status, conditions, acceptedNames };
    if (JSON.stringify(next) === JSON.stringify(status)) return;
    store.mutate(CRDS, undefined, name, (object) => {
      object.status = next;
    });
  }

  function removeObjects(crd: KubeObject): void {
    const spec = record(crd.spec);
    const key = `${text(record(spec.names).plural)}.${text(spec.group)}` as KubeResource;
    for (const object of store.list(key)) store.remove(key, object.metadata.namespace, object.metadata.name);
  }

  for (const crd of store.list(CRDS)) {
    register(crd);
    scheduler.after(0, 'kube:crd-naming', () => reconcile(crd.metadata.name));
  }
  const unsubscribe = store.subscribe((event) => {
    if (event.resource !== CRDS) return;
    const crd = event.object;
    if (event.type === 'DELETED') {
      served.delete(crd.metadata.name);
      revision += 1;
      openApi = undefined;
      removeObjects(crd);
      return;
    }
    register(crd);
    scheduler.after(0, 'kube:crd-naming', () => reconcile(crd.metadata.name));
  });

  function all(): ResourceInfo[] {
    return [...served.values()].flatMap((entry) => entry.infos);
  }

  function buildOpenApi(): OpenApiExtension {
    const infos = all();
    const definitions: Record<string, Schema> = {};
    for (const info of infos) {
      const names = record(record(served.get(info.custom?.crd ?? '')?.crd.spec).names);
      const listKind = text(names.listKind) || `${info.kind}List`;
      Object.assign(
        definitions,
        customDefinitions(info.group, info.version, info.kind, listKind, info.custom?.schema ?? {}),
      );
    }
    return {
      revision: String(revision),
      groupVersions: infos
        .map(({ group, version }) => ({ group, version }))
        .filter(
          (entry, index, list) =>
            list.findIndex((other) => other.group === entry.group && other.version === entry.version) ===
            index,
        ),
      resources: infos,
      definitions,
      definitionsV2: Object.fromEntries(
        Object.entries(definitions).map(([name, schema]) => [name, toOpenApiV2(schema)]),
      ),
    };
  }

  return {
    find(group, version, plural) {
      return all().find((info) => info.group === group && info.version === version && info.plural === plural);
    },
    groups() {
      const byGroup = new Map<string, Set<string>>();
      for (const info of all())
        byGroup.set(info.group, (byGroup.get(info.group) ?? new Set()).add(info.version));
      return [...byGroup.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([group, versions]) => ({ group, versions: [...versions].sort(compareKubeVersions) }));
    },
    resources(group, version) {
      return all().filter((info) => info.group === group && info.version === version);
    },
    openApi() {
      openApi ??= buildOpenApi();
      return openApi;
    },
    namespacedKeys() {
      return [
        ...new Set(
          all()
            .filter((info) => info.namespaced)
            .map((info) => info.resource),
        ),
      ];
    },
    close: unsubscribe,
  };
}
