/**
 * The simulator's scenario file: a YAML description of a subscription, a region, clusters with their
 * scale sets, nodes and workloads, and faults. Parsed with zod; errors name the offending path.
 * The format is documented in sim/README.md.
 */
import { readFile } from 'node:fs/promises';

import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';

import { KAMINO_OBSERVED, type LatencyProfile } from '../contracts.js';
import { messageOf } from '../errors.js';
import { ClusterApi, clusterApiIssues, MachinePoolSpec, ManagedBy } from './capz/scenario.js';
import { BOOTSTRAP_TOKEN_RE } from './kubeadm.js';

/** A relative duration: `30s`, `-3h`, `+10m`, `2d`, `1.5h`. */
const DURATION_RE = /^([+-]?)(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDurationMs(text: string): number {
  const match = DURATION_RE.exec(text.trim());
  if (!match)
    throw new Error(`parsing duration "${text}": expected a number and a unit (ms, s, m, h, d), e.g. -3h`);
  const [, sign, amount, unit] = match;
  const ms = Number(amount) * (UNIT_MS[unit ?? 's'] ?? 1000);
  return sign === '-' ? -ms : ms;
}

export const Duration = z.string().regex(DURATION_RE, 'expected a duration such as 30s, 10m, 3h or 2d');

/** A point in time: RFC3339, or a duration relative to the scenario's start ("now"), e.g. `-3h`. */
export const TimeRef = z.union([z.iso.datetime({ offset: true }), Duration], {
  error: 'expected an RFC3339 time (2026-11-20T08:00:00Z) or a time relative to now such as -3h',
});
export type TimeRef = z.infer<typeof TimeRef>;

/** Resolves a TimeRef against the scenario's start. */
export function resolveTime(ref: TimeRef, nowMs: number): number {
  return DURATION_RE.test(ref) ? nowMs + parseDurationMs(ref) : Date.parse(ref);
}

const Name = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'expected a DNS label (lowercase letters, digits, -)');
const AzureName = z.string().regex(/^[A-Za-z0-9][-A-Za-z0-9_.]{0,79}$/, 'expected an Azure resource name');
const Labels = z.record(z.string(), z.string());

export const Taint = z.strictObject({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
});
export type Taint = z.infer<typeof Taint>;

export const NodeCondition = z.strictObject({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  /** lastTransitionTime. */
  since: TimeRef.optional(),
});
export type NodeCondition = z.infer<typeof NodeCondition>;

/** kured (≥ 1.7, `--annotate-nodes`) annotations to put on a node. */
export const KuredAnnotations = z.strictObject({
  /** `weave.works/kured-most-recent-reboot-needed`: when kured last saw a reboot was needed. */
  mostRecentRebootNeeded: TimeRef.optional(),
  /** `weave.works/kured-reboot-in-progress`: set while a reboot is pending or running. */
  rebootInProgress: TimeRef.optional(),
});
export type KuredAnnotations = z.infer<typeof KuredAnnotations>;

/** Per-node overrides inside a scale set, keyed by instance index (the Uniform instance id). */
export const NodeOverride = z.strictObject({
  index: z.int().nonnegative(),
  kured: KuredAnnotations.optional(),
  /** Cordoned by an administrator (`spec.unschedulable`). */
  cordoned: z.boolean().optional(),
  taints: z.array(Taint).optional(),
  labels: Labels.optional(),
  annotations: Labels.optional(),
  /** Ready since this long ago. */
  readyFor: Duration.optional(),
  /** Extra or replacing conditions (a `Ready` entry replaces the computed one). */
  conditions: z.array(NodeCondition).optional(),
  powerState: z.enum(['running', 'stopped', 'deallocated']).optional(),
});
export type NodeOverride = z.infer<typeof NodeOverride>;

export const MarketplaceImage = z.strictObject({
  publisher: z.string().min(1),
  offer: z.string().min(1),
  sku: z.string().min(1),
  version: z.string().min(1),
});
export const GalleryImage = z.strictObject({ id: z.string().startsWith('/subscriptions/') });
export const ImageReference = z.union([MarketplaceImage, GalleryImage], {
  error: 'expected {publisher, offer, sku, version} or {id: /subscriptions/…}',
});
export type ImageReference = z.infer<typeof ImageReference>;

export const Extension = z.strictObject({
  name: z.string().min(1),
  publisher: z.string().min(1),
  type: z.string().min(1),
  typeHandlerVersion: z.string().default('1.0'),
  settings: z.record(z.string(), z.unknown()).optional(),
});
export type Extension = z.infer<typeof Extension>;

export const ImageFlavourSpec = z.strictObject({
  cloudInit: z.boolean().default(true),
  sshDeleteKeys: z.boolean().default(true),
  preserveHostname: z.boolean().default(false),
  hostKeyGeneration: z.enum(['when-missing', 'never']).default('never'),
});

export const ScaleSet = z.strictObject({
  name: AzureName,
  orchestrationMode: z.enum(['Uniform', 'Flexible']).default('Uniform'),
  upgradePolicy: z.enum(['Manual', 'Automatic', 'Rolling']).default('Manual'),
  automaticOSUpgrade: z.boolean().default(false),
  ephemeralOsDisk: z.boolean().default(false),
  osType: z.enum(['Linux', 'Windows']).default('Linux'),
  vmSize: z.string().default('Standard_D4s_v5'),
  /** Availability zones instances are spread over (round-robin); absent = regional. */
  zones: z.array(z.string().regex(/^[1-3]$/, 'expected zone 1, 2 or 3')).optional(),
  hyperVGeneration: z.enum(['V1', 'V2']).default('V2'),
  securityType: z.enum(['Standard', 'TrustedLaunch', 'ConfidentialVM']).optional(),
  tags: Labels.default({}),
  imageReference: ImageReference.default({
    publisher: 'Canonical',
    offer: '0001-com-ubuntu-server-jammy',
    sku: '22_04-lts-gen2',
    version: 'latest',
  }),
  extensions: z.array(Extension).default([]),
  /** Plain text; the model carries it base64-encoded, as ARM does. */
  customData: z.string().optional(),
  /**
   * How the pool's nodes get kubelet credentials, which decides what a clone inherits (sim/README.md
   * "Identity"): aks-engine (shared client certificate), kubeadm (CAPZ TLS bootstrap, per-node
   * certificate), k3s or rke2 (join token and node password).
   */
  bootstrapFlavour: z.enum(['aks-engine', 'kubeadm', 'k3s', 'rke2']).default('aks-engine'),
  /**
   * What the OS image does at boot about SSH host keys and the hostname (sim/README.md "Identity");
   * the default is an Ubuntu cloud image: cloud-init, ssh_deletekeys, no preserve_hostname, no generator.
   */
  image: ImageFlavourSpec.prefault({}),
  /** Defaults to the scale set name (aks-engine/capz convention: node names are name + 6 base-36 chars). */
  computerNamePrefix: z.string().optional(),
  capacity: z.int().nonnegative().max(1000),
  role: z.enum(['agent', 'control-plane']).default('agent'),
  /** Node labels for every node of the pool, on top of the well-known ones the world sets. */
  labels: Labels.default({}),
  taints: z.array(Taint).default([]),
  /** How long nodes have been Ready at the start. */
  readyFor: Duration.default('72h'),
  /** kured annotations for every node of the pool (per-node `nodes[].kured` wins). */
  kured: KuredAnnotations.optional(),
  nodes: z.array(NodeOverride).default([]),
  /**
   * A broken image: instances created from a gallery image version boot, but their kubelet never
   * registers (a half-applied patch, a broken driver). Instances from a marketplace image are unaffected.
   */
  galleryImagesNeverJoin: z.boolean().default(false),
  /** A CAPZ MachinePool's strategy and autoscaler bounds (owner-tagged scale sets of a `managedBy` cluster). */
  machinePool: MachinePoolSpec.optional(),
});
export type ScaleSet = z.infer<typeof ScaleSet>;

const IntOrPercent = z.union([
  z.int().nonnegative(),
  z.string().regex(/^\d+%$/, 'expected an integer or a percentage'),
]);
export const PdbSpec = z
  .strictObject({ minAvailable: IntOrPercent.optional(), maxUnavailable: IntOrPercent.optional() })
  .refine((pdb) => (pdb.minAvailable === undefined) !== (pdb.maxUnavailable === undefined), {
    message: 'set exactly one of minAvailable and maxUnavailable',
  });
export type PdbSpec = z.infer<typeof PdbSpec>;

const Toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).default('Equal'),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
});

const WorkloadBase = {
  name: Name,
  namespace: Name.default('default'),
  labels: Labels.optional(),
  nodeSelector: Labels.optional(),
  tolerations: z.array(Toleration).optional(),
  /** Pods mount an emptyDir volume (drain needs `--delete-emptydir-data`). */
  emptyDir: z.boolean().default(false),
  image: z.string().default('registry.k8s.io/pause:3.10'),
};

export const Workload = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('Deployment'),
    ...WorkloadBase,
    replicas: z.int().nonnegative(),
    pdb: PdbSpec.optional(),
  }),
  z.strictObject({
    kind: z.literal('ReplicaSet'),
    ...WorkloadBase,
    replicas: z.int().nonnegative(),
    pdb: PdbSpec.optional(),
  }),
  z.strictObject({
    kind: z.literal('DaemonSet'),
    ...WorkloadBase,
    /** Annotations on the DaemonSet object (e.g. kured's lock). */
    annotations: Labels.optional(),
  }),
  z.strictObject({
    kind: z.literal('Pod'),
    ...WorkloadBase,
    /** Pin to a node; otherwise the world places it. */
    nodeName: z.string().optional(),
  }),
]);
export type Workload = z.infer<typeof Workload>;

export const Cluster = z.strictObject({
  name: Name,
  /** The cluster's Azure subscription; absent: the scenario's. A fleet spans several. */
  subscriptionId: z.guid('expected a subscription GUID').optional(),
  resourceGroup: AzureName,
  kubernetesVersion: z
    .string()
    .regex(/^v\d+\.\d+\.\d+$/, 'expected a version such as v1.30.6')
    .default('v1.30.6'),
  tokens: z
    .strictObject({
      admin: z
        .string()
        .min(16, 'tokens must be at least 16 characters')
        .default('sim-admin-token-0123456789abcdef'),
      serviceAccount: z
        .string()
        .min(16, 'tokens must be at least 16 characters')
        .default('sim-vmss-prototype-token-0123456789abcdef'),
    })
    .prefault({}),
  serviceAccount: z
    .strictObject({ namespace: Name.default('vmss-prototype'), name: Name.default('vmss-prototype') })
    .prefault({}),
  /**
   * Container images every seeded node already holds, besides the images of the cluster's workloads
   * (e.g. an image the prep pod uses when the nodes pre-pulled it).
   */
  nodeImages: z.array(z.string().min(1)).default([]),
  autoscaler: z
    .strictObject({
      enabled: z.boolean().default(false),
      intervalSeconds: z.number().positive().default(600),
    })
    .prefault({}),
  /** At least one, unless the cluster is a Cluster API management cluster (`clusterApi`). */
  scaleSets: z.array(ScaleSet).default([]),
  /** A Cluster API management cluster (sim/world/capz/scenario.ts). */
  clusterApi: ClusterApi.optional(),
  /** Managed by a management cluster: its owner-tagged scale sets are CAPZ MachinePools. */
  managedBy: ManagedBy.optional(),
  workloads: z.array(Workload).default([]),
  /**
   * kubeadm's bootstrap tokens the cluster holds (Secrets `kube-system/bootstrap-token-<id>`), each
   * expiring `ttl` after the start (`0s`: never, kubeadm's `--ttl 0`; negative: already expired). Absent:
   * every token a kubeadm pool's customData joins with, never expiring.
   */
  kubeadm: z
    .strictObject({
      tokens: z
        .array(
          z.strictObject({
            token: z
              .string()
              .regex(BOOTSTRAP_TOKEN_RE, 'expected a bootstrap token <6 of [a-z0-9]>.<16 of [a-z0-9]>'),
            ttl: Duration.default('24h'),
          }),
        )
        .default([]),
    })
    .optional(),
});
export type Cluster = z.infer<typeof Cluster>;

export const FaultPresetName = z.enum([
  'arm-429-storm',
  'arm-5xx-burst',
  'image-version-lro-failure',
  'zrs-unsupported',
  'snapshot-quota-exceeded',
  'snapshot-lro-failure',
  'kube-api-down',
  'pdb-never-allows',
  'node-deleted',
  'scrub-leaves',
  'host-command',
]);
export type FaultPresetName = z.infer<typeof FaultPresetName>;

export const FaultPreset = z
  .strictObject({
    preset: FaultPresetName,
    /** When it starts, relative to the scenario start (default at once). */
    at: Duration.default('0s'),
    /** How long it lasts (storms and outages). */
    for: Duration.optional(),
    /** How many requests it fails (bursts). */
    count: z.int().positive().optional(),
    retryAfterSeconds: z.number().nonnegative().optional(),
    /** Glob of operations it hits (storms, bursts). */
    operation: z.string().optional(),
    /** node-deleted: the node (and its instance) to delete. */
    node: z.string().optional(),
    /** scrub-leaves: the path (on the disk `rm` works on, e.g. a mounted copy) that `rm -rf` leaves. */
    path: z.string().startsWith('/').optional(),
    /** host-command: the command (its name, e.g. `sync`) every host runs as the fault says. */
    command: z
      .string()
      .regex(/^[A-Za-z0-9_.+-]+$/, 'a command name without a path, e.g. sync')
      .optional(),
    /** host-command: the exit status it ends with instead of running. */
    exitCode: z.int().min(0).max(255).optional(),
    /** host-command: what it prints on stderr first (default nothing). */
    stderr: z.string().max(4096).optional(),
    /** pdb-never-allows: the workload the PDB covers. */
    workload: z.string().optional(),
    namespace: Name.optional(),
    cluster: Name.optional(),
  })
  .superRefine((fault, ctx) => {
    const needs: Partial<Record<FaultPresetName, 'for' | 'node' | 'workload' | 'path' | 'command'>> = {
      'host-command': 'command',
      'arm-429-storm': 'for',
      'kube-api-down': 'for',
      'node-deleted': 'node',
      'pdb-never-allows': 'workload',
      'scrub-leaves': 'path',
    };
    const field = needs[fault.preset];
    if (field && fault[field] === undefined) {
      ctx.addIssue({ code: 'custom', path: [field], message: `preset ${fault.preset} needs ${field}` });
    }
    if (fault.preset === 'host-command' && fault.exitCode === undefined) {
      ctx.addIssue({ code: 'custom', path: ['exitCode'], message: 'preset host-command needs exitCode' });
    }
  });
export type FaultPreset = z.infer<typeof FaultPreset>;

export const FaultRuleEntry = z.strictObject({
  id: z.string().optional(),
  api: z.enum(['arm', 'kube']),
  operation: z.string().min(1),
  status: z.int().min(400).max(599),
  code: z.string().min(1),
  message: z.string().min(1),
  retryAfterSeconds: z.number().nonnegative().optional(),
  times: z.int().positive().optional(),
  from: TimeRef.optional(),
  until: TimeRef.optional(),
  probability: z.number().gt(0).max(1).optional(),
});
export type FaultRuleEntry = z.infer<typeof FaultRuleEntry>;

export const FaultEntry = z.union([FaultPreset, FaultRuleEntry], {
  error: 'expected a fault preset ({preset: …}) or a rule ({api, operation, status, code, message})',
});
export type FaultEntry = z.infer<typeof FaultEntry>;

const LatencyOverrides = z.strictObject({
  podStartSeconds: z.number().nonnegative(),
  imagePullSeconds: z.number().nonnegative(),
  prepScriptSeconds: z.number().nonnegative(),
  instanceStopSeconds: z.number().nonnegative(),
  instanceDeallocateSeconds: z.number().nonnegative(),
  instanceStartSeconds: z.number().nonnegative(),
  nodeBootSeconds: z.number().nonnegative(),
  newNodeJoinFromMarketplaceSeconds: z.number().nonnegative(),
  newNodeJoinFromPrototypeSeconds: z.number().nonnegative(),
  newNodeJoinFromPrototypeWithKubeadmJoinSeconds: z.number().nonnegative(),
  snapshotCreateSeconds: z.number().nonnegative(),
  snapshotDeleteSeconds: z.number().nonnegative(),
  imageVersionCreateSeconds: z.number().nonnegative(),
  imageVersionDeleteSeconds: z.number().nonnegative(),
  galleryCreateSeconds: z.number().nonnegative(),
  imageDefinitionCreateSeconds: z.number().nonnegative(),
  extensionDeleteSeconds: z
    .tuple([z.number().nonnegative(), z.number().nonnegative()])
    .refine(([low, high]) => low <= high, 'the lower bound must not exceed the upper bound'),
  scaleSetUpdateSeconds: z.number().nonnegative(),
  runCommandSeconds: z.number().nonnegative(),
  diskCreateSeconds: z.number().nonnegative(),
  diskDeleteSeconds: z.number().nonnegative(),
  dataDiskAttachSeconds: z.number().nonnegative(),
  dataDiskDetachSeconds: z.number().nonnegative(),
});

/** A profile for tests: every operation takes a few simulated seconds. */
export const FAST: LatencyProfile = {
  name: 'fast',
  podStartSeconds: 1,
  imagePullSeconds: 3,
  prepScriptSeconds: 1,
  instanceStopSeconds: 5,
  instanceDeallocateSeconds: 5,
  instanceStartSeconds: 5,
  nodeBootSeconds: 5,
  newNodeJoinFromMarketplaceSeconds: 60,
  newNodeJoinFromPrototypeSeconds: 15,
  newNodeJoinFromPrototypeWithKubeadmJoinSeconds: 20,
  snapshotCreateSeconds: 5,
  snapshotDeleteSeconds: 1,
  imageVersionCreateSeconds: 30,
  imageVersionDeleteSeconds: 5,
  galleryCreateSeconds: 1,
  imageDefinitionCreateSeconds: 1,
  extensionDeleteSeconds: [1, 5],
  scaleSetUpdateSeconds: 1,
  runCommandSeconds: 5,
  diskCreateSeconds: 2,
  diskDeleteSeconds: 1,
  dataDiskAttachSeconds: 2,
  dataDiskDetachSeconds: 2,
};

export const LATENCY_PROFILES: Readonly<Record<string, LatencyProfile>> = {
  'kamino-observed': KAMINO_OBSERVED,
  fast: FAST,
};

export const Scenario = z
  .strictObject({
    name: z.string().default('unnamed'),
    description: z.string().optional(),
    subscriptionId: z.guid('expected a subscription GUID'),
    tenantId: z.guid('expected a tenant GUID').default('72f988bf-86f1-41af-91ab-2d7cd011db47'),
    location: z.string().regex(/^[a-z][a-z0-9]+$/, 'expected an Azure region name such as westeurope'),
    region: z
      .strictObject({
        /** Whether the region accepts Standard_ZRS for gallery image versions and disks. */
        zoneRedundantStorage: z.boolean().default(true),
        zones: z.array(z.string()).default(['1', '2', '3']),
        /**
         * `report` (default): every response carries ARM's and Compute's remaining counts; `enforce`:
         * an empty bucket refuses the request with Compute's 429 (sim/arm/throttling.ts).
         */
        throttling: z.enum(['report', 'enforce']).default('report'),
        /** Serve marketplace image reads (`virtualMachineImages`); see sim/README.md for why it is off by default. */
        marketplaceImages: z.boolean().default(false),
        /** Resource groups that exist besides the clusters' (e.g. the gallery's), for `GET …/resourcegroups/{rg}`. */
        resourceGroups: z.array(z.string().min(1).max(90)).default([]),
      })
      .prefault({}),
    /** Simulated start time (RFC3339). Absent: the wall-clock time the simulator starts. */
    start: z.iso.datetime({ offset: true }).optional(),
    /** Simulated seconds per wall second when the clock is scaled. */
    timeFactor: z.number().positive().default(1),
    /** Seed for everything random in the world (probabilistic faults, the timing model's jitter). */
    seed: z.int().default(1),
    latency: z
      .strictObject({
        profile: z
          .string()
          .refine((name) => name in LATENCY_PROFILES, {
            message: `unknown latency profile; known: ${Object.keys(LATENCY_PROFILES).join(', ')}`,
          })
          .default('kamino-observed'),
        overrides: LatencyOverrides.partial().default({}),
        /**
         * Each occurrence of a long operation draws its own duration around the profile's figure, from
         * `seed` (sim/world/timing.ts). Off: every occurrence takes exactly the figure.
         */
        jitter: z.boolean().default(false),
      })
      .prefault({}),
    clusters: z.array(Cluster).min(1, 'a scenario needs at least one cluster'),
    faults: z.array(FaultEntry).default([]),
  })
  .superRefine((scenario, ctx) => {
    const clusterNames = new Set<string>();
    const scaleSetNames = new Set<string>();
    scenario.clusters.forEach((cluster, c) => {
      if (clusterNames.has(cluster.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['clusters', c, 'name'],
          message: `duplicate cluster ${cluster.name}`,
        });
      }
      clusterNames.add(cluster.name);
      cluster.scaleSets.forEach((scaleSet, s) => {
        const key = `${cluster.resourceGroup.toLowerCase()}/${scaleSet.name.toLowerCase()}`;
        if (scaleSetNames.has(key)) {
          ctx.addIssue({
            code: 'custom',
            path: ['clusters', c, 'scaleSets', s, 'name'],
            message: `duplicate scale set ${scaleSet.name} in resource group ${cluster.resourceGroup}`,
          });
        }
        scaleSetNames.add(key);
        const seen = new Set<number>();
        scaleSet.nodes.forEach((node, n) => {
          const path = ['clusters', c, 'scaleSets', s, 'nodes', n, 'index'];
          if (node.index >= scaleSet.capacity) {
            ctx.addIssue({
              code: 'custom',
              path,
              message: `index ${node.index} is outside the scale set (capacity ${scaleSet.capacity})`,
            });
          }
          if (seen.has(node.index))
            ctx.addIssue({ code: 'custom', path, message: `duplicate node index ${node.index}` });
          seen.add(node.index);
        });
        if (scaleSet.zones) {
          for (const zone of scaleSet.zones) {
            if (!scenario.region.zones.includes(zone)) {
              ctx.addIssue({
                code: 'custom',
                path: ['clusters', c, 'scaleSets', s, 'zones'],
                message: `zone ${zone} is not offered by region ${scenario.location} (region.zones)`,
              });
            }
          }
        }
      });
      const workloadKeys = new Set<string>();
      cluster.workloads.forEach((workload, w) => {
        const key = `${workload.kind}/${workload.namespace}/${workload.name}`;
        if (workloadKeys.has(key)) {
          ctx.addIssue({
            code: 'custom',
            path: ['clusters', c, 'workloads', w, 'name'],
            message: `duplicate ${key}`,
          });
        }
        workloadKeys.add(key);
      });
    });
    for (const issue of clusterApiIssues(scenario.clusters)) {
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
    scenario.faults.forEach((fault, f) => {
      if (!('preset' in fault)) return;
      if (fault.cluster !== undefined && !clusterNames.has(fault.cluster)) {
        ctx.addIssue({
          code: 'custom',
          path: ['faults', f, 'cluster'],
          message: `unknown cluster ${fault.cluster}`,
        });
      }
    });
  });
export type Scenario = z.infer<typeof Scenario>;

/** Formats a zod issue path the way a YAML author reads it: `clusters[0].scaleSets[1].capacity`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(root)';
}

export class ScenarioError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(
      `reading scenario ${source}: ${problems.length === 1 ? '' : `${problems.length} problems\n  `}${problems.join('\n  ')}`,
    );
    this.name = 'ScenarioError';
  }
}

/** Validates already-parsed data (an object from YAML, JSON or a test). */
export function parseScenario(data: unknown, source = '(inline)'): Scenario {
  const result = Scenario.safeParse(data);
  if (result.success) return result.data;
  throw new ScenarioError(
    source,
    result.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`),
  );
}

export function parseScenarioYaml(text: string, source = '(inline)'): Scenario {
  let data: unknown;
  try {
    data = parseYaml(text, { prettyErrors: true });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const where = error.linePos?.[0];
      throw new ScenarioError(source, [
        `${where ? `line ${where.line}, column ${where.col}: ` : ''}${error.message.split('\n')[0] ?? error.message}`,
      ]);
    }
    throw error;
  }
  return parseScenario(data, source);
}

export async function loadScenarioFile(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [`cannot read the file: ${messageOf(error)}`]);
  }
  return parseScenarioYaml(text, path);
}

/** The latency profile a scenario asks for, with its overrides applied. */
export function latencyOf(scenario: Scenario): LatencyProfile {
  const base = LATENCY_PROFILES[scenario.latency.profile] ?? KAMINO_OBSERVED;
  const overrides = scenario.latency.overrides;
  const hasOverrides = Object.keys(overrides).length > 0;
  return { ...base, ...overrides, name: hasOverrides ? `${base.name}+overrides` : base.name };
}
