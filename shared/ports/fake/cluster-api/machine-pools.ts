/**
 * An in-memory management cluster's MachinePools for fast tests, with the adapter's semantics
 * (shared/adapters/cluster-api): NotFoundError for a missing pool, a template write conditional on the
 * AzureMachinePool's resourceVersion (`conflict` when stale), canary creation that skips what exists,
 * deletion that ignores what is missing and refuses (TerminalError) objects without the canary-of label.
 * Calls are recorded as `machinePools.<method>`; `nextError`, `failAllUntil` and `reset` as every fake.
 */
import type {
  MachinePoolMachine,
  MachinePoolView,
  RollingUpdateStrategy,
} from '../../../domain/cluster-api.js';
import { interpretCapzImage } from '../../../domain/cluster-api.js';
import { CANARY_OF_LABEL, CLUSTER_NAME_LABEL } from '../../../domain/cluster-api-labels.js';
import { NotFoundError, TerminalError } from '../../../domain/errors.js';
import { definedOnly } from '../../../domain/optional.js';
import type { CanaryPoolSpec, ClusterApiPorts, MachinePoolsPort } from '../../cluster-api/machine-pools.js';
import { CallLog, RecordingFake } from '../recording-fake.js';

/** A method of the Cluster API ports, as `<port>.<method>` (what the fake records). */
export type ClusterApiMethod = {
  [Port in keyof ClusterApiPorts]: `${Port}.${keyof ClusterApiPorts[Port] & string}`;
}[keyof ClusterApiPorts];

/** A pool to seed: its MachinePool and AzureMachinePool (named alike unless `azureMachinePool` says). */
export interface FakePoolSeed {
  readonly namespace: string;
  readonly name: string;
  readonly azureMachinePool?: string;
  readonly clusterName?: string;
  readonly replicas?: number;
  readonly autoscaled?: boolean;
  /** `spec.template.image` as written (absent: CAPZ's default image). */
  readonly image?: Readonly<Record<string, unknown>>;
  /** Default: CAPZ's (maxSurge 1, maxUnavailable 0, Oldest). */
  readonly strategy?: RollingUpdateStrategy;
  readonly labels?: Readonly<Record<string, string>>;
}

interface StoredMachinePool {
  namespace: string;
  name: string;
  azureMachinePool: string;
  clusterName: string;
  replicas: number;
  autoscaled: boolean;
  labels: Record<string, string>;
}

interface StoredAzureMachinePool {
  namespace: string;
  name: string;
  image?: Record<string, unknown>;
  strategy: RollingUpdateStrategy;
  resourceVersion: string;
  labels: Record<string, string>;
}

const DEFAULT_STRATEGY: RollingUpdateStrategy = { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' };

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class FakeMachinePools implements MachinePoolsPort {
  #machinePools = new Map<string, StoredMachinePool>();
  #azureMachinePools = new Map<string, StoredAzureMachinePool>();
  /** KubeadmConfigs by key: their labels. */
  #kubeadmConfigs = new Map<string, Record<string, string>>();
  #machines = new Map<string, MachinePoolMachine[]>();
  #version = 0;

  constructor(private readonly log: CallLog<ClusterApiMethod>) {}

  // ---- test controls -----------------------------------------------------------------------------

  /** Adds (or replaces) a pool: its MachinePool, AzureMachinePool and KubeadmConfig. */
  seedPool(seed: FakePoolSeed): MachinePoolView {
    const azureMachinePool = seed.azureMachinePool ?? seed.name;
    const labels = { [CLUSTER_NAME_LABEL]: seed.clusterName ?? 'capz', ...seed.labels };
    this.#machinePools.set(key(seed.namespace, seed.name), {
      namespace: seed.namespace,
      name: seed.name,
      azureMachinePool,
      clusterName: seed.clusterName ?? 'capz',
      replicas: seed.replicas ?? 1,
      autoscaled: seed.autoscaled ?? false,
      labels: { ...labels },
    });
    this.#azureMachinePools.set(key(seed.namespace, azureMachinePool), {
      namespace: seed.namespace,
      name: azureMachinePool,
      ...(seed.image === undefined ? {} : { image: structuredClone(seed.image) }),
      strategy: seed.strategy ?? DEFAULT_STRATEGY,
      resourceVersion: this.#nextVersion(),
      labels: { ...labels },
    });
    this.#kubeadmConfigs.set(key(seed.namespace, seed.name), { ...labels });
    return this.#view(seed.namespace, azureMachinePool);
  }

  /** The AzureMachinePoolMachines of one AzureMachinePool (replaces them). */
  setMachines(namespace: string, azureMachinePool: string, machines: readonly MachinePoolMachine[]): void {
    this.#machines.set(key(namespace, azureMachinePool), structuredClone([...machines]));
  }

  /** Someone else writes the AzureMachinePool (its resourceVersion moves on): the next stale write conflicts. */
  touch(namespace: string, azureMachinePool: string, image?: Readonly<Record<string, unknown>>): void {
    const stored = this.#azureMachinePools.get(key(namespace, azureMachinePool));
    if (stored === undefined) throw new Error(`no AzureMachinePool ${namespace}/${azureMachinePool}`);
    if (image !== undefined) stored.image = structuredClone(image);
    stored.resourceVersion = this.#nextVersion();
  }

  /** The pool as the port would read it now; undefined when absent (test assertions). */
  pool(namespace: string, azureMachinePool: string): MachinePoolView | undefined {
    return this.#azureMachinePools.has(key(namespace, azureMachinePool))
      ? this.#view(namespace, azureMachinePool)
      : undefined;
  }

  /** Which objects named `name` exist (a canary's three, or a pool's). */
  objects(
    namespace: string,
    name: string,
  ): { machinePool: boolean; azureMachinePool: boolean; kubeadmConfig: boolean } {
    const id = key(namespace, name);
    return {
      machinePool: this.#machinePools.has(id),
      azureMachinePool: this.#azureMachinePools.has(id),
      kubeadmConfig: this.#kubeadmConfigs.has(id),
    };
  }

  reset(): void {
    this.#machinePools = new Map();
    this.#azureMachinePools = new Map();
    this.#kubeadmConfigs = new Map();
    this.#machines = new Map();
  }

  // ---- the port ----------------------------------------------------------------------------------

  findByScaleSet(namespace: string, scaleSetName: string): Promise<MachinePoolView> {
    return this.log.call('machinePools.findByScaleSet', [namespace, scaleSetName], () =>
      this.#view(namespace, scaleSetName),
    );
  }

  setTemplateImage(
    namespace: string,
    azureMachinePool: string,
    image: Readonly<Record<string, unknown>>,
    resourceVersion: string,
  ): Promise<'set' | 'conflict'> {
    return this.log.call(
      'machinePools.setTemplateImage',
      [namespace, azureMachinePool, image, resourceVersion],
      () => {
        const stored = this.#azureMachinePool(namespace, azureMachinePool, 'setting the template image of');
        if (stored.resourceVersion !== resourceVersion) return 'conflict' as const;
        // The whole image is replaced, as the adapter's JSON patch does.
        stored.image = structuredClone(image);
        stored.resourceVersion = this.#nextVersion();
        return 'set' as const;
      },
    );
  }

  listMachines(namespace: string, azureMachinePool: string): Promise<MachinePoolMachine[]> {
    return this.log.call('machinePools.listMachines', [namespace, azureMachinePool], () => [
      ...(this.#machines.get(key(namespace, azureMachinePool)) ?? []),
    ]);
  }

  createCanaryPool(spec: CanaryPoolSpec): Promise<void> {
    return this.log.call('machinePools.createCanaryPool', [spec], () => {
      const { namespace } = spec;
      const source = this.#machinePools.get(key(namespace, spec.source.machinePool));
      if (source === undefined) {
        throw new NotFoundError(
          'MachinePoolNotFound',
          `reading MachinePool ${namespace}/${spec.source.machinePool}: not found`,
        );
      }
      const sourceAmp = this.#azureMachinePool(namespace, spec.source.azureMachinePool, 'reading');
      const labels = {
        ...spec.labels,
        [CLUSTER_NAME_LABEL]: source.clusterName,
        [CANARY_OF_LABEL]: source.name,
      };
      const id = key(namespace, spec.name);
      // Each object that exists already is skipped, as the adapter skips an AlreadyExists.
      if (!this.#kubeadmConfigs.has(id)) this.#kubeadmConfigs.set(id, { ...labels });
      if (!this.#azureMachinePools.has(id)) {
        this.#azureMachinePools.set(id, {
          namespace,
          name: spec.name,
          image: structuredClone(spec.image),
          strategy: sourceAmp.strategy,
          resourceVersion: this.#nextVersion(),
          labels: { ...labels },
        });
      }
      if (!this.#machinePools.has(id)) {
        this.#machinePools.set(id, {
          namespace,
          name: spec.name,
          azureMachinePool: spec.name,
          clusterName: source.clusterName,
          replicas: spec.replicas,
          autoscaled: false,
          labels: { ...labels },
        });
      }
    });
  }

  deleteCanaryPool(namespace: string, name: string): Promise<void> {
    return this.log.call('machinePools.deleteCanaryPool', [namespace, name], () => {
      const id = key(namespace, name);
      const present: [string, Record<string, string> | undefined][] = [
        ['MachinePool', this.#machinePools.get(id)?.labels],
        ['AzureMachinePool', this.#azureMachinePools.get(id)?.labels],
        ['KubeadmConfig', this.#kubeadmConfigs.get(id)],
      ];
      for (const [kind, labels] of present) {
        if (labels !== undefined && labels[CANARY_OF_LABEL] === undefined) {
          throw new TerminalError(
            'NotACanaryPool',
            `deleting canary pool ${namespace}/${name}: ${kind} ${name} has no ${CANARY_OF_LABEL} label, so it is ` +
              'not a canary the product created; nothing was deleted — check the name',
          );
        }
      }
      this.#machinePools.delete(id);
      this.#azureMachinePools.delete(id);
      this.#kubeadmConfigs.delete(id);
      this.#machines.delete(id);
    });
  }

  listCanaryPools(namespace: string, labels: Readonly<Record<string, string>>): Promise<string[]> {
    return this.log.call('machinePools.listCanaryPools', [namespace, labels], () =>
      [...this.#machinePools.values()]
        .filter(
          (pool) =>
            pool.namespace === namespace &&
            pool.labels[CANARY_OF_LABEL] !== undefined &&
            Object.entries(labels).every(([label, value]) => pool.labels[label] === value),
        )
        .map((pool) => pool.name)
        .sort(),
    );
  }

  // ---- the world ---------------------------------------------------------------------------------

  #nextVersion(): string {
    this.#version += 1;
    return String(this.#version);
  }

  #azureMachinePool(namespace: string, name: string, verb: string): StoredAzureMachinePool {
    const stored = this.#azureMachinePools.get(key(namespace, name));
    if (stored === undefined) {
      throw new NotFoundError(
        'AzureMachinePoolNotFound',
        `${verb} AzureMachinePool ${namespace}/${name}: not found`,
      );
    }
    return stored;
  }

  #view(namespace: string, azureMachinePool: string): MachinePoolView {
    const amp = this.#azureMachinePool(namespace, azureMachinePool, 'reading');
    const pool = [...this.#machinePools.values()].find(
      (candidate) => candidate.namespace === namespace && candidate.azureMachinePool === azureMachinePool,
    );
    if (pool === undefined) {
      throw new NotFoundError(
        'MachinePoolNotFound',
        `finding the MachinePool of AzureMachinePool ${namespace}/${azureMachinePool}: none points at it`,
      );
    }
    return {
      namespace,
      name: pool.name,
      azureMachinePool,
      clusterName: pool.clusterName,
      replicas: pool.replicas,
      autoscaled: pool.autoscaled,
      ...(amp.image === undefined
        ? {}
        : { image: toImage(amp.image), imageFields: structuredClone(amp.image) }),
      ...definedOnly({ strategy: amp.strategy }),
      resourceVersion: amp.resourceVersion,
    };
  }
}

/** The domain's interpretation, as the adapter's (shared/domain/cluster-api.ts). */
function toImage(image: Readonly<Record<string, unknown>>): MachinePoolView['image'] & object {
  return interpretCapzImage(image);
}

/** The Cluster API ports of one fake management cluster: one clock, one call log. */
export class FakeClusterApi extends RecordingFake<ClusterApiMethod> implements ClusterApiPorts {
  readonly machinePools: FakeMachinePools;

  constructor(options: { readonly now?: () => number } = {}) {
    super(new CallLog<ClusterApiMethod>(options.now ?? (() => Date.now())));
    this.machinePools = new FakeMachinePools(this.log);
  }

  override reset(): void {
    super.reset();
    this.machinePools.reset();
  }
}
