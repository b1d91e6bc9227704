/**
 * The app's one validated settings object (docs/conventions.md#settings): the zod schema, `loadSettings` that builds
 * it from the environment and reports every problem at once, and the per-pool selection policy it produces.
 * Over 400 lines on purpose: one schema for every setting is the point (docs/conventions.md#settings).
 */

import { z } from 'zod';

import { BOOTSTRAP_FLAVOURS } from '../domain/bootstrap-flavour.js';
import { type CanaryPolicy, DEFAULT_CANARY_POLICY } from '../domain/canary.js';
import { galleryNameFor, galleryNameProblem } from '../domain/gallery-naming.js';
import { DEFAULT_GENERATION_POLICY, type GenerationPolicy } from '../domain/generations.js';
import { definedOnly } from '../domain/optional.js';
import { DEFAULT_SELECTION_POLICY, type SelectionPolicy } from '../domain/selection-policy.js';
import { formatDuration } from './duration.js';
import {
  ANNOTATION_KEY_RULE,
  DNS_LABEL_RULE,
  DNS_SUBDOMAIN_RULE,
  EXTENSION_TYPE_RULE,
  GUID_RULE,
  IDENTIFIER_RULE,
  PINNED_IMAGE_RULE,
  QUEUE_NAME_RULE,
  REGION_RULE,
  RESOURCE_GROUP_RULE,
  SCALE_SET_RULE,
  TASK_HUB_RULE,
} from './names.js';
import { NCRONTAB_FORMAT, ncrontabProblem } from './ncrontab.js';
import { PemCertificate } from './pem.js';
import {
  ClusterRetirement,
  PoolRetirement,
  resolveRetirement,
  type RetirementSettings,
} from './retirement-settings.js';
import { duration, Flag, integer, named, strictObject, uniqueList } from './schema-blocks.js';
import {
  isSecretEnvName,
  KEY_VAULT_SECRET_URI_FORMAT,
  parseKeyVaultSecretUri,
  SECRET_ENV_NAME_FORMAT,
  SECRET_REFERENCE_FORMAT,
  SECRET_SETTING_PREFIX,
  type SecretReference as SecretReferenceValue,
} from './secret-reference.js';
import {
  checkEnvReferences,
  didYouMean,
  FIELDS_MARKER,
  findInlineSecrets,
  fromZodIssue,
  isRecord,
  parseJson,
  type RawIssue,
  SettingsError,
  type SettingsIssue,
  toSettingsIssues,
} from './settings-issues.js';
import {
  SETTINGS_KEY_PREFIX,
  SETTINGS_KEYS,
  type SettingsKey,
  SIMULATOR_SETTINGS_KEYS,
  type SimulatorSettingsKey,
} from './settings-keys.js';
import { readSimulatorSettings, SimulatorSettings } from './simulator-settings.js';

export type { SettingsIssue };
/** Re-exported: the class lives beside the issues, so that a module catching it loads no zod. */
export { SettingsError };

// ---------------------------------------------------------------------------------------------------------
// Building blocks. Every schema carries the sentence "what is accepted" as its error message; the issue
// formatter adds the field path and the (redacted, truncated) value received.

const HTTPS_URL_ACCEPTS = 'an https URL without credentials, query or fragment';

function httpsUrl(accepts: string) {
  return z.string({ error: accepts }).refine(
    (value) => {
      try {
        const url = new URL(value);
        return (
          url.protocol === 'https:' &&
          url.username === '' &&
          url.password === '' &&
          url.search === '' &&
          url.hash === '' &&
          !value.includes('?')
        );
      } catch {
        return false;
      }
    },
    { error: accepts },
  );
}

const KeyVaultSecretUri = z.string({ error: KEY_VAULT_SECRET_URI_FORMAT }).transform((value, ctx) => {
  const parsed = parseKeyVaultSecretUri(value);
  if (typeof parsed === 'string') {
    ctx.issues.push({ code: 'custom', message: `${KEY_VAULT_SECRET_URI_FORMAT} (${parsed})`, input: value });
    return z.NEVER;
  }
  return parsed;
});

const SecretEnvName = z
  .string({ error: SECRET_ENV_NAME_FORMAT })
  .refine(isSecretEnvName, { error: SECRET_ENV_NAME_FORMAT })
  .transform((name): SecretReferenceValue => ({ source: 'env', name }));

/** Requires exactly one of an object's (all optional) fields. */
function exactlyOne<T extends Record<string, unknown>>(accepts: string) {
  return (value: T, ctx: z.RefinementCtx<T>): void => {
    const present = Object.values(value).filter((v) => v !== undefined).length;
    if (present !== 1) ctx.issues.push({ code: 'custom', message: accepts, input: value });
  };
}

/** `{ keyVaultSecretUri }` or `{ env }`: where a secret is, never the secret. */
const SecretReference = strictObject(
  { keyVaultSecretUri: KeyVaultSecretUri.optional(), env: SecretEnvName.optional() },
  SECRET_REFERENCE_FORMAT,
)
  .superRefine(exactlyOne(`exactly one of keyVaultSecretUri and env: ${SECRET_REFERENCE_FORMAT}`))
  .transform((value): SecretReferenceValue => {
    const reference = value.keyVaultSecretUri ?? value.env;
    if (reference === undefined)
      throw new Error('validating a secret reference: refinement let an empty one through');
    return reference;
  });
export type SecretReference = z.output<typeof SecretReference>;

const CA_ACCEPTS = `a CA certificate: { "pem": "-----BEGIN CERTIFICATE-----…" }, { "keyVaultSecretUri": … } or { "env": … }`;

export type CaCertificate = { readonly source: 'inline'; readonly pem: string } | SecretReferenceValue;

const CaCertificateSchema = strictObject(
  {
    pem: PemCertificate.optional(),
    keyVaultSecretUri: KeyVaultSecretUri.optional(),
    env: SecretEnvName.optional(),
  },
  CA_ACCEPTS,
)
  .superRefine(exactlyOne(`exactly one of pem, keyVaultSecretUri and env: ${CA_ACCEPTS}`))
  .transform((value): CaCertificate => {
    if (value.pem !== undefined) return { source: 'inline', pem: value.pem };
    const reference = value.keyVaultSecretUri ?? value.env;
    if (reference === undefined)
      throw new Error('validating a CA certificate: refinement let an empty one through');
    return reference;
  });

const ENTRA_ACCEPTS =
  'Entra ID settings: { "serverAppId": "<GUID of the API server application>" } or { "scope": "<app id URI>/.default" }';

const EntraId = strictObject(
  {
    serverAppId: named(GUID_RULE).optional(),
    scope: z
      .string({ error: 'a token scope ending in /.default' })
      .regex(/^[^\s]{1,250}\/\.default$/, {
        error: 'a token scope ending in /.default, e.g. api://k8s-prod/.default',
      })
      .optional(),
  },
  ENTRA_ACCEPTS,
)
  .superRefine(exactlyOne(`exactly one of serverAppId and scope: ${ENTRA_ACCEPTS}`))
  .transform((value) => value.scope ?? `${value.serverAppId ?? ''}/.default`);

const AUTH_ACCEPTS =
  'how to authenticate: { "serviceAccountToken": <secret reference> } or { "entraId": { "serverAppId": "<GUID>" } }';

export type ClusterAuth =
  | { readonly kind: 'service-account-token'; readonly token: SecretReferenceValue }
  | { readonly kind: 'entra-id'; readonly scope: string };

const Auth = strictObject(
  { serviceAccountToken: SecretReference.optional(), entraId: EntraId.optional() },
  AUTH_ACCEPTS,
)
  .superRefine(exactlyOne(`exactly one of serviceAccountToken and entraId: ${AUTH_ACCEPTS}`))
  .transform((value): ClusterAuth => {
    if (value.serviceAccountToken !== undefined)
      return { kind: 'service-account-token', token: value.serviceAccountToken };
    return { kind: 'entra-id', scope: value.entraId ?? '' };
  });

const ApiServer = strictObject(
  {
    url: httpsUrl(
      `the API server URL: ${HTTPS_URL_ACCEPTS}, e.g. https://k8s-prod.westeurope.cloudapp.azure.com:6443`,
    ),
    caCertificate: CaCertificateSchema,
    /** TLS server name to verify when the URL's host is not in the certificate (an IP, a private endpoint). */
    tlsServerName: z
      .string({ error: 'a DNS name the API server certificate is issued for' })
      .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/i, {
        error: 'a DNS name the API server certificate is issued for',
      })
      .optional(),
    auth: Auth,
  },
  'how to reach the API server: { "url", "caCertificate", "auth", "tlsServerName"? }',
);

/**
 * A CAPZ pool's management cluster (docs/capz.md): where its MachinePools live, and whether the operator
 * accepts what CAPZ does with a new template image (a rolling replacement of every machine of the pool).
 */
const CAPZ_ROLLOUTS = ['refuse', 'allow'] as const;
const CAPZ_ROLLOUT_ACCEPTS =
  '"refuse" (the default: a CAPZ pool is planned but not refreshed) or "allow" (the new image goes into the AzureMachinePool template and CAPZ replaces every machine of the pool per its RollingUpdate strategy)';
const CapzRollout = z.enum(CAPZ_ROLLOUTS, { error: CAPZ_ROLLOUT_ACCEPTS });

const ClusterCapz = strictObject(
  {
    managementCluster: ApiServer,
    /** The namespace of the cluster's MachinePools and AzureMachinePools in the management cluster. */
    namespace: named(DNS_LABEL_RULE).default('default'),
    rollout: CapzRollout.default('refuse'),
  },
  'CAPZ pools: { "managementCluster": { "url", "caCertificate", "auth" }, "namespace"?, "rollout"? }',
);

const PoolCapz = strictObject({ rollout: CapzRollout.optional() }, 'a pool\'s CAPZ override: { "rollout"? }');

const MAX_READY_SECONDS = 30 * 86_400;

const SELECTION_FIELDS = {
  lastPatchAnnotation: named(ANNOTATION_KEY_RULE),
  pendingRebootAnnotation: named(ANNOTATION_KEY_RULE),
  ignoreAnnotations: uniqueList(named(ANNOTATION_KEY_RULE), 'a list of annotation keys', 50),
  excludeNodeNames: uniqueList(named(DNS_SUBDOMAIN_RULE), 'a list of node names', 1000),
  minimumReadyTime: duration(0, MAX_READY_SECONDS),
  minimumCandidates: integer(1, 1000),
  maximumImageAge: duration(3_600, 3_650 * 86_400),
};

const SELECTION_ACCEPTS = `a selection policy: { ${Object.keys(SELECTION_FIELDS).join(', ')} }, all optional`;

/** Cluster-level selection: defaults from DEFAULT_SELECTION_POLICY (kured ≥ 1.7 `--annotate-nodes`). */
const ClusterSelection = strictObject(
  {
    lastPatchAnnotation: SELECTION_FIELDS.lastPatchAnnotation.default(
      DEFAULT_SELECTION_POLICY.lastPatchAnnotation,
    ),
    pendingRebootAnnotation: SELECTION_FIELDS.pendingRebootAnnotation.default(
      DEFAULT_SELECTION_POLICY.pendingRebootAnnotation,
    ),
    ignoreAnnotations: SELECTION_FIELDS.ignoreAnnotations.default([
      ...DEFAULT_SELECTION_POLICY.ignoreAnnotations,
    ]),
    excludeNodeNames: SELECTION_FIELDS.excludeNodeNames.default([
      ...DEFAULT_SELECTION_POLICY.excludeNodeNames,
    ]),
    minimumReadyTime: SELECTION_FIELDS.minimumReadyTime.default(DEFAULT_SELECTION_POLICY.minimumReadySeconds),
    minimumCandidates: SELECTION_FIELDS.minimumCandidates.default(DEFAULT_SELECTION_POLICY.minimumCandidates),
    maximumImageAge: SELECTION_FIELDS.maximumImageAge.optional(),
  },
  SELECTION_ACCEPTS,
);

/** Pool-level overrides: a field set here replaces the cluster's (lists are replaced, not merged). */
const PoolSelection = strictObject(
  {
    lastPatchAnnotation: SELECTION_FIELDS.lastPatchAnnotation.optional(),
    pendingRebootAnnotation: SELECTION_FIELDS.pendingRebootAnnotation.optional(),
    ignoreAnnotations: SELECTION_FIELDS.ignoreAnnotations.optional(),
    excludeNodeNames: SELECTION_FIELDS.excludeNodeNames.optional(),
    minimumReadyTime: SELECTION_FIELDS.minimumReadyTime.optional(),
    minimumCandidates: SELECTION_FIELDS.minimumCandidates.optional(),
    maximumImageAge: SELECTION_FIELDS.maximumImageAge.optional(),
  },
  SELECTION_ACCEPTS,
);

/**
 * How the donor is captured (shared/domain/capture-mode.ts): `auto` (the default: live capture where it is
 * known to be safe, drain-and-stop otherwise, the reason in the plan), `live` (never cordon or stop the
 * donor: freeze, snapshot, scrub a copy), `drain-and-stop` (a privileged prep pod prepares the disk, then
 * powers the host off) or `run-command` (Azure Run Command prepares the disk, for clusters that forbid
 * privileged pods, then a power-off through the API). The last two drain the node first and snapshot the
 * stopped disk. `run-command` is never chosen by `auto`: only when set.
 */
export const CAPTURE_MODES = ['auto', 'live', 'drain-and-stop', 'run-command'] as const;
export const CAPTURE_MODES_ACCEPTED =
  '"auto" (live capture where safe, else drain-and-stop), "live" (freeze, snapshot and scrub a copy; the donor keeps serving), "drain-and-stop" (privileged prep pod, then power off) or "run-command" (Azure Run Command, then power off through the API)';

/** Live capture's options (shared/domain/live-capture.ts). */
const LiveCapture = strictObject(
  {
    /** The root filesystem's partition on the OS disk: 1 on Ubuntu and Azure Linux marketplace images. */
    rootPartition: integer(1, 128).default(1),
    /** Longest the donor's root filesystem stays frozen for the snapshot; the host's guard thaws 30 s later. */
    maxFreeze: duration(1, 60).default(10),
  },
  'live capture options: { rootPartition, maxFreeze }',
);

/**
 * Extensions kept on the scale set model when the bootstrap ones are deleted (docs/design.md#model-update), as
 * `publisher/type`. Each carries something other than bootstrap, so removing it would lose it for new nodes:
 * - AKS and aks-engine billing extensions: billing and provenance of the node (kamino kept
 *   `computeAksLinuxBilling` for this reason).
 * - Application Health: the health signal automatic instance repairs and rolling upgrades rely on.
 * - Azure Monitor Agent: monitoring the operator installed on purpose.
 * - Guest Configuration: Azure Policy compliance auditing.
 * Custom Script, cloud-init and AKS node bootstrap (`Compute.AKS.Linux.AKSNode`) are not kept: the prototype
 * image already holds what they did.
 */
export const DEFAULT_KEEP_EXTENSIONS: readonly string[] = [
  'Microsoft.AKS/Compute.AKS.Linux.Billing',
  'Microsoft.AKS/Compute.AKS-Engine.Linux.Billing',
  'Microsoft.ManagedServices/ApplicationHealthLinux',
  'Microsoft.Azure.Monitor/AzureMonitorLinuxAgent',
  'Microsoft.GuestConfiguration/ConfigurationForLinux',
];

const Capture = strictObject(
  {
    mode: z.enum(CAPTURE_MODES, { error: CAPTURE_MODES_ACCEPTED }).default('auto'),
    live: LiveCapture.prefault({}),
    drainGracePeriod: duration(0, 3_600).default(300),
    drainTimeout: duration(60, 6 * 3_600).default(900),
    prepNamespace: named(DNS_LABEL_RULE).default('vmss-prototype'),
    prepImage: named(PINNED_IMAGE_RULE).optional(),
    // Azure stops a run command after 90 minutes; the product's script takes seconds once the agent runs it.
    runCommandTimeout: duration(60, 90 * 60).default(600),
    // An Azure snapshot is usable once taken; only PremiumV2/Ultra fill it by a background copy (auto).
    waitForSnapshotCompletion: z
      .enum(['auto', 'always', 'never'], {
        error:
          '"auto" (start the node once the snapshot is taken; wait for the copy only for PremiumV2_LRS and UltraSSD_LRS disks), "always" (keep the node stopped until the snapshot completed) or "never"',
      })
      .default('auto'),
    keepExtensions: uniqueList(named(EXTENSION_TYPE_RULE), 'a list of extension types', 50).default([
      ...DEFAULT_KEEP_EXTENSIONS,
    ]),
  },
  'capture options: { mode, live, drainGracePeriod, drainTimeout, prepNamespace, prepImage, runCommandTimeout, waitForSnapshotCompletion, keepExtensions }',
).superRefine((capture, ctx) => {
  if (capture.mode !== 'run-command' && capture.prepImage === undefined) {
    ctx.issues.push({
      code: 'custom',
      path: ['prepImage'],
      input: undefined,
      message: `${PINNED_IMAGE_RULE.accepts}; required: the prep pods run nsenter (e.g. busybox) and you pin the digest your nodes can pull`,
    });
  }
  if (capture.mode === 'run-command' && capture.prepImage !== undefined) {
    ctx.issues.push({
      code: 'custom',
      path: ['prepImage'],
      input: capture.prepImage,
      message:
        'no prep image with mode "run-command": Azure Run Command prepares the disk, no pod runs; remove prepImage or use mode "drain-and-stop"',
    });
  }
  if (capture.drainTimeout <= capture.drainGracePeriod) {
    ctx.issues.push({
      code: 'custom',
      path: ['drainTimeout'],
      input: formatDuration(capture.drainTimeout),
      message: `a drain timeout longer than the drain grace period (${formatDuration(capture.drainGracePeriod)})`,
    });
  }
});

// ---------------------------------------------------------------------------------------------------------
// Promotion: the canary gate and node generations. Cluster-level fields have defaults; a pool's
// `promotion` overrides them field by field (a pool's checkPod replaces the cluster's as a whole).

/**
 * Fields a check pod may not have, and why. It runs in the prep namespace, whose Pod Security level is
 * `privileged` (for the prep pod), so the namespace would not stop them: the schema does. A health check
 * of a new node needs none of them; what needs the host is the prep pod's job, not the check's.
 */
const CHECK_POD_REFUSED: Readonly<Record<string, string>> = {
  privileged: 'the check pod never runs privileged: it only checks the new node (refused on purpose)',
  securityContext: 'the check pod runs unprivileged with every capability dropped; it cannot be changed',
  capabilities: 'the check pod runs with every capability dropped; it cannot add any',
  hostPath: 'the check pod cannot mount host paths (it would read or change the new node itself)',
  volumes: 'the check pod mounts no volumes (host paths in particular are refused)',
  hostNetwork: 'the check pod cannot use the host network namespace',
  hostPID: 'the check pod cannot use the host PID namespace',
  hostIPC: 'the check pod cannot use the host IPC namespace',
  serviceAccountName: 'the check pod runs without a service account token',
};

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]{0,127}$/;
const CHECK_POD_ACCEPTS = 'a check pod: { "image", "command", "args"?, "env"?, "timeout"? }';

const CHECK_POD_SHAPE = {
  image: named(PINNED_IMAGE_RULE),
  command: z
    .array(z.string({ error: 'a command word' }).min(1, { error: 'a non-empty command word' }), {
      error: 'the command as a list of words, e.g. ["sh", "-c", "test -e /dev/kvm"]',
    })
    .min(1, { error: 'at least one command word' })
    .max(20, { error: 'at most 20 command words' }),
  args: z
    .array(z.string({ error: 'an argument' }), { error: 'a list of arguments' })
    .max(50)
    .default([]),
  env: z
    .array(
      strictObject(
        {
          name: z.string({ error: 'an environment variable name' }).regex(ENV_NAME, {
            error: 'an environment variable name: letters, digits, "_", "-", ".", not starting with a digit',
          }),
          value: z.string({ error: 'a value (plain configuration, never a secret)' }).max(1024),
        },
        'an environment variable: { "name", "value" } (plain configuration, never a secret)',
      ),
      { error: 'a list of { "name", "value" }' },
    )
    .max(20)
    .default([]),
  timeout: duration(10, 3_600).default(600),
};

const CheckPod = z.strictObject(CHECK_POD_SHAPE, {
  error: (issue) => {
    if (issue.code === 'unrecognized_keys') {
      const refused = issue.keys.filter((key) => CHECK_POD_REFUSED[key] !== undefined);
      return [
        `${FIELDS_MARKER}${Object.keys(CHECK_POD_SHAPE).join(',')}`,
        ...refused.map((key) => `${key}=${CHECK_POD_REFUSED[key] ?? ''}`),
      ].join('\n');
    }
    return CHECK_POD_ACCEPTS;
  },
});

const AFTER_PASS = ['keep-size', 'keep', 'remove'] as const;
const AFTER_FAIL = ['delete', 'keep-cordoned'] as const;
const OTHERS_AFTER_FAIL = ['replace', 'keep'] as const;
const TAINT_EFFECTS = ['PreferNoSchedule', 'NoSchedule', 'NoExecute'] as const;

export const CANARY_FIELDS = {
  enabled: Flag,
  instances: integer(1, 10),
  soak: duration(0, 6 * 3_600),
  deadline: duration(60, 24 * 3_600),
  afterPass: z.enum(AFTER_PASS, {
    error:
      '"keep-size" (the canary stays and one oldest-generation node is retired in its place; on an autoscaled pool it just stays), "keep" (the canary stays, the pool is one node larger) or "remove" (drained and deleted)',
  }),
  afterFail: z.enum(AFTER_FAIL, {
    error: '"delete" (the canary instances are deleted) or "keep-cordoned" (kept, cordoned and labelled)',
  }),
  othersAfterFail: z.enum(OTHERS_AFTER_FAIL, {
    error:
      '"replace" (nodes an outside scale-out built from a failed version are retired at once, a replacement first) or "keep" (left to a later retirement)',
  }),
  checkPod: CheckPod,
};
const CANARY_ACCEPTS = `the canary gate: { ${Object.keys(CANARY_FIELDS).join(', ')} }, all optional`;

export const GENERATION_FIELDS = {
  maxGenerationsBehind: integer(0, 50),
  taintEffect: z.enum(TAINT_EFFECTS, { error: '"PreferNoSchedule", "NoSchedule" or "NoExecute"' }),
};
const GENERATIONS_ACCEPTS = `node generations: { ${Object.keys(GENERATION_FIELDS).join(', ')} }, all optional`;

function canaryDeadlineAfterSoak(
  canary: { soak?: number; deadline?: number },
  ctx: z.RefinementCtx<{ soak?: number; deadline?: number }>,
): void {
  if (canary.soak !== undefined && canary.deadline !== undefined && canary.deadline <= canary.soak) {
    ctx.issues.push({
      code: 'custom',
      path: ['deadline'],
      input: formatDuration(canary.deadline),
      message: `a deadline longer than the soak (${formatDuration(canary.soak)}): each canary must join, turn Ready and stay Ready for the soak within it`,
    });
  }
}

const ClusterPromotion = strictObject(
  {
    canary: strictObject(
      {
        enabled: CANARY_FIELDS.enabled.default(DEFAULT_CANARY_POLICY.enabled),
        instances: CANARY_FIELDS.instances.default(DEFAULT_CANARY_POLICY.instances),
        soak: CANARY_FIELDS.soak.default(DEFAULT_CANARY_POLICY.soakSeconds),
        deadline: CANARY_FIELDS.deadline.default(DEFAULT_CANARY_POLICY.deadlineSeconds),
        afterPass: CANARY_FIELDS.afterPass.default(DEFAULT_CANARY_POLICY.afterPass),
        afterFail: CANARY_FIELDS.afterFail.default(DEFAULT_CANARY_POLICY.afterFail),
        othersAfterFail: CANARY_FIELDS.othersAfterFail.default(DEFAULT_CANARY_POLICY.othersAfterFail),
        checkPod: CANARY_FIELDS.checkPod.optional(),
      },
      CANARY_ACCEPTS,
    )
      .superRefine(canaryDeadlineAfterSoak)
      .prefault({}),
    generations: strictObject(
      {
        maxGenerationsBehind: GENERATION_FIELDS.maxGenerationsBehind.optional(),
        taintEffect: GENERATION_FIELDS.taintEffect.default(DEFAULT_GENERATION_POLICY.taintEffect),
      },
      GENERATIONS_ACCEPTS,
    ).prefault({}),
    retirement: ClusterRetirement,
  },
  'promotion: { "canary"?, "generations"?, "retirement"? }',
);

const PoolPromotion = strictObject(
  {
    canary: strictObject(
      {
        enabled: CANARY_FIELDS.enabled.optional(),
        instances: CANARY_FIELDS.instances.optional(),
        soak: CANARY_FIELDS.soak.optional(),
        deadline: CANARY_FIELDS.deadline.optional(),
        afterPass: CANARY_FIELDS.afterPass.optional(),
        afterFail: CANARY_FIELDS.afterFail.optional(),
        othersAfterFail: CANARY_FIELDS.othersAfterFail.optional(),
        checkPod: CANARY_FIELDS.checkPod.optional(),
      },
      CANARY_ACCEPTS,
    )
      .superRefine(canaryDeadlineAfterSoak)
      .optional(),
    generations: strictObject(
      {
        maxGenerationsBehind: GENERATION_FIELDS.maxGenerationsBehind.optional(),
        taintEffect: GENERATION_FIELDS.taintEffect.optional(),
      },
      GENERATIONS_ACCEPTS,
    ).optional(),
    retirement: PoolRetirement.optional(),
  },
  'a pool\'s promotion overrides: { "canary"?, "generations"?, "retirement"? }',
);

const STORAGE_ACCOUNT_TYPES = ['Standard_ZRS', 'Standard_LRS'] as const;

const GalleryOptions = strictObject(
  {
    name: z
      .string({ error: 'a gallery name' })
      .superRefine((name, ctx) => {
        const problem = galleryNameProblem(name);
        if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: name });
      })
      .optional(),
    resourceGroup: named(RESOURCE_GROUP_RULE).optional(),
    storageAccountType: z
      .enum(STORAGE_ACCOUNT_TYPES, {
        error: '"Standard_ZRS" (falls back to Standard_LRS where the region has no ZRS) or "Standard_LRS"',
      })
      .default('Standard_ZRS'),
    replicaCount: integer(1, 100).default(1),
    targetRegions: uniqueList(named(REGION_RULE), 'a list of Azure regions', 100).optional(),
    pinVersion: Flag.default(false),
  },
  'gallery options: { name, resourceGroup, storageAccountType, replicaCount, targetRegions, pinVersion }',
);

const Pool = strictObject(
  {
    name: named(IDENTIFIER_RULE),
    scaleSet: named(SCALE_SET_RULE).optional(),
    resourceGroup: named(RESOURCE_GROUP_RULE).optional(),
    enabled: Flag.default(true),
    selection: PoolSelection.optional(),
    /**
     * How the pool's nodes get kubelet credentials; decides what the prep script removes and whether the
     * pool can be captured at all (shared/domain/bootstrap-flavour.ts). Absent: detected from the nodes.
     */
    bootstrapFlavour: z
      .enum(BOOTSTRAP_FLAVOURS, {
        error: `one of ${BOOTSTRAP_FLAVOURS.map((flavour) => `"${flavour}"`).join(', ')} (how the pool's nodes get kubelet credentials)`,
      })
      .optional(),
    promotion: PoolPromotion.optional(),
    capz: PoolCapz.optional(),
  },
  'a pool: { "name", "scaleSet"?, "resourceGroup"?, "enabled"?, "selection"?, "bootstrapFlavour"?, "promotion"?, "capz"? }',
);

const POOLS_ACCEPTS = '"all" (every scale set in the resource group) or a non-empty list of pools';

const Cluster = strictObject(
  {
    name: named(IDENTIFIER_RULE),
    subscriptionId: named(GUID_RULE),
    resourceGroup: named(RESOURCE_GROUP_RULE),
    apiServer: ApiServer,
    pools: z.union([z.literal('all'), z.array(Pool).min(1, { error: POOLS_ACCEPTS })], {
      error: POOLS_ACCEPTS,
    }),
    selection: ClusterSelection.prefault({}),
    capture: Capture.prefault({}),
    gallery: GalleryOptions.prefault({}),
    history: integer(1, 50).default(3),
    promotion: ClusterPromotion.prefault({}),
    capz: ClusterCapz.optional(),
  },
  'a cluster: { "name", "subscriptionId", "resourceGroup", "apiServer", "pools", "selection"?, "capture"?, "gallery"?, "history"?, "promotion"?, "capz"? }',
)
  .superRefine(checkPoolRetirement)
  .transform((cluster) => ({
    ...cluster,
    pools:
      cluster.pools === 'all'
        ? ('all' as const)
        : cluster.pools.map((pool) => ({
            name: pool.name,
            scaleSet: pool.scaleSet ?? pool.name,
            resourceGroup: pool.resourceGroup ?? cluster.resourceGroup,
            enabled: pool.enabled,
            ...definedOnly({
              selection: pool.selection,
              bootstrapFlavour: pool.bootstrapFlavour,
              promotion: pool.promotion,
              capz: pool.capz,
            }),
          })),
    gallery: {
      ...cluster.gallery,
      name: cluster.gallery.name ?? galleryNameFor(cluster.resourceGroup),
      resourceGroup: cluster.gallery.resourceGroup ?? cluster.resourceGroup,
    },
  }));

/** A pool that enables scheduled retirement must say (or inherit) which generations are due. */
function checkPoolRetirement<T extends RetirementCheckable>(cluster: T, ctx: z.RefinementCtx<T>): void {
  checkRetirementOf(cluster, ctx);
}

interface RetirementCheckable {
  readonly promotion: { readonly retirement: z.output<typeof ClusterRetirement> };
  readonly pools: 'all' | readonly { promotion?: { retirement?: z.output<typeof PoolRetirement> } }[];
}

function checkRetirementOf(cluster: RetirementCheckable, ctx: { issues: z.core.$ZodRawIssue[] }): void {
  if (cluster.pools === 'all') return;
  for (const [index, pool] of cluster.pools.entries()) {
    const resolved = resolveRetirement(cluster.promotion.retirement, pool.promotion?.retirement);
    if ('problem' in resolved && pool.promotion?.retirement !== undefined) {
      ctx.issues.push({
        code: 'custom',
        path: ['pools', index, 'promotion', 'retirement', 'enabled'],
        input: true,
        message: resolved.problem,
      });
    }
  }
}

const Clusters = z
  .array(Cluster, { error: 'a JSON array of clusters' })
  .min(1, { error: 'a JSON array of at least one cluster' })
  .superRefine(checkClusterUniqueness, { when: () => true });

/** Duplicate cluster names, pools, and scale sets claimed twice. Reads defensively: it also runs on input with other issues. */
function checkClusterUniqueness(clusters: readonly unknown[], ctx: z.RefinementCtx<unknown[]>): void {
  // With `when`, this also runs when the value is not even an array.
  if (!Array.isArray(clusters)) return;
  const clusterNames = new Map<string, number>();
  const scaleSets = new Map<string, string>();
  for (const [index, cluster] of clusters.entries()) {
    if (!isRecord(cluster)) continue;
    const name = stringField(cluster, 'name');
    if (name !== undefined) {
      const first = clusterNames.get(name);
      if (first !== undefined) {
        ctx.issues.push({
          code: 'custom',
          path: [index, 'name'],
          input: name,
          message: `a cluster name not used before (clusters[${first}] has it)`,
        });
      } else clusterNames.set(name, index);
    }
    const pools = cluster['pools'];
    if (!Array.isArray(pools)) continue;
    const subscription = (stringField(cluster, 'subscriptionId') ?? '').toLowerCase();
    const clusterGroup = stringField(cluster, 'resourceGroup') ?? '';
    const poolNames = new Map<string, number>();
    for (const [poolIndex, pool] of pools.entries()) {
      if (!isRecord(pool)) continue;
      const poolName = stringField(pool, 'name');
      if (poolName === undefined) continue;
      const firstPool = poolNames.get(poolName);
      if (firstPool !== undefined) {
        ctx.issues.push({
          code: 'custom',
          path: [index, 'pools', poolIndex, 'name'],
          input: poolName,
          message: `a pool name not used before in this cluster (pools[${firstPool}] has it)`,
        });
        continue;
      }
      poolNames.set(poolName, poolIndex);
      const scaleSet = stringField(pool, 'scaleSet') ?? poolName;
      const group = stringField(pool, 'resourceGroup') ?? clusterGroup;
      const key = `${subscription}/${group}/${scaleSet}`.toLowerCase();
      const owner = scaleSets.get(key);
      if (owner !== undefined) {
        ctx.issues.push({
          code: 'custom',
          path: [index, 'pools', poolIndex, 'scaleSet'],
          input: scaleSet,
          message: `a scale set no other pool manages (${owner} already does; two refreshes would fight over it)`,
        });
      } else scaleSets.set(key, `${name ?? `clusters[${index}]`}/${poolName}`);
    }
  }
}

/** A timer trigger's schedule: six-field NCRONTAB, checked here so a bad one names its setting. */
function ncrontab() {
  return z.string({ error: NCRONTAB_FORMAT }).superRefine((value, ctx) => {
    const problem = ncrontabProblem(value);
    if (problem !== undefined)
      ctx.issues.push({ code: 'custom', message: `${NCRONTAB_FORMAT} (${problem})`, input: value });
  });
}

/** The validated settings of the app. Durations are whole seconds. */
export const Settings = z.object({
  clusters: Clusters,
  schedule: ncrontab().default('0 0 3 * * *'),
  /** The reaper's own timer: gives back what dead runs left, between the refreshes. */
  reaperSchedule: ncrontab().default('0 */5 * * * *'),
  taskHub: named(TASK_HUB_RULE).default('vmssprototype'),
  maxParallelPools: integer(1, 20).default(4),
  /** Pools of one Azure subscription refreshing at once on the schedule. */
  maxPoolsPerSubscription: integer(1, 100).default(8),
  rebootQueue: named(QUEUE_NAME_RULE).default('vmss-prototype-reboots'),
  quietPeriod: duration(0, 86_400).default(600),
  eventsTopicEndpoint: httpsUrl(`an Event Grid topic endpoint: ${HTTPS_URL_ACCEPTS}`).optional(),
  azureClientId: named(GUID_RULE).optional(),
  /**
   * The simulator seam (simulator-settings.ts), from the four VMSSP_SIMULATOR* keys: set only when
   * VMSSP_SIMULATOR=true and the others are valid; then ARM is the simulator's, not Azure's.
   */
  simulator: SimulatorSettings.optional(),
});
export type Settings = z.output<typeof Settings>;
export type ClusterSettings = Settings['clusters'][number];
export type CaptureSettings = ClusterSettings['capture'];
export type GallerySettings = ClusterSettings['gallery'];
export type PoolSettings = Exclude<ClusterSettings['pools'], 'all'>[number];

/** Which environment key feeds each top-level field. */
const KEY_OF_FIELD: Readonly<Record<keyof z.input<typeof Settings>, SettingsKey | SimulatorSettingsKey>> = {
  clusters: 'VMSSP_CLUSTERS',
  schedule: 'VMSSP_SCHEDULE',
  reaperSchedule: 'VMSSP_REAPER_SCHEDULE',
  taskHub: 'VMSSP_TASK_HUB',
  maxParallelPools: 'VMSSP_MAX_PARALLEL_POOLS',
  maxPoolsPerSubscription: 'VMSSP_MAX_POOLS_PER_SUBSCRIPTION',
  rebootQueue: 'VMSSP_REBOOT_QUEUE',
  quietPeriod: 'VMSSP_QUIET_PERIOD',
  eventsTopicEndpoint: 'VMSSP_EVENTS_TOPIC_ENDPOINT',
  azureClientId: 'AZURE_CLIENT_ID',
  simulator: 'VMSSP_SIMULATOR',
};

/** Every key of ours, for the unknown-key check and its "did you mean". */
const KNOWN_KEYS: readonly string[] = [...SETTINGS_KEYS, ...SIMULATOR_SETTINGS_KEYS];

// ---------------------------------------------------------------------------------------------------------
// Loading

/**
 * Builds the settings from app settings (environment). Empty values count as unset. Throws a SettingsError
 * listing every problem at once; it never contains a secret value.
 */
export function loadSettings(env: Readonly<Record<string, string | undefined>>): Settings {
  const issues: RawIssue[] = [];
  const read = (key: SettingsKey): string | undefined => {
    const value = env[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  for (const key of Object.keys(env).sort()) {
    if (!key.startsWith(SETTINGS_KEY_PREFIX) || KNOWN_KEYS.includes(key)) continue;
    if (key.startsWith(SECRET_SETTING_PREFIX) && isSecretEnvName(key)) continue;
    issues.push({
      path: [key],
      received: 'an unknown app setting',
      expected: `one of ${KNOWN_KEYS.join(', ')} or ${SECRET_SETTING_PREFIX}<NAME>${didYouMean(key, KNOWN_KEYS)}`,
    });
  }

  const clustersText = read('VMSSP_CLUSTERS');
  let clusters: unknown;
  let clustersUnreadable = false;
  if (clustersText !== undefined) {
    const parsed = parseJson(clustersText);
    if (parsed.ok) {
      clusters = parsed.value;
      issues.push(...findInlineSecrets(clusters, ['clusters']));
      issues.push(...checkEnvReferences(clusters, ['clusters'], env));
    } else {
      clustersUnreadable = true;
      issues.push({
        path: ['clusters'],
        received: `text that is not JSON (${parsed.problem})`,
        expected: 'a JSON array of clusters',
      });
    }
  }

  const simulator = readSimulatorSettings(env);
  issues.push(...simulator.issues);

  const input = {
    clusters,
    schedule: read('VMSSP_SCHEDULE'),
    reaperSchedule: read('VMSSP_REAPER_SCHEDULE'),
    taskHub: read('VMSSP_TASK_HUB'),
    maxParallelPools: read('VMSSP_MAX_PARALLEL_POOLS'),
    maxPoolsPerSubscription: read('VMSSP_MAX_POOLS_PER_SUBSCRIPTION'),
    rebootQueue: read('VMSSP_REBOOT_QUEUE'),
    quietPeriod: read('VMSSP_QUIET_PERIOD'),
    eventsTopicEndpoint: read('VMSSP_EVENTS_TOPIC_ENDPOINT'),
    azureClientId: read('AZURE_CLIENT_ID'),
    simulator: simulator.input,
  };
  const result = Settings.safeParse(input, { reportInput: true });
  if (!result.success) {
    for (const issue of result.error.issues) {
      if (clustersUnreadable && issue.path[0] === 'clusters') continue;
      issues.push(...fromZodIssue(issue, []));
    }
  }
  if (issues.length > 0 || !result.success) throw new SettingsError(toSettingsIssues(issues, KEY_OF_FIELD));
  return result.data;
}

/** The selection policy of one pool: the pool's overrides over the cluster's policy (over the defaults). */
export function selectionPolicyFor(cluster: ClusterSettings, poolName: string): SelectionPolicy {
  let overrides: PoolSettings['selection'];
  if (cluster.pools !== 'all') {
    const pool = cluster.pools.find((candidate) => candidate.name === poolName);
    if (pool === undefined) {
      throw new Error(
        `building the selection policy of pool ${poolName} in cluster ${cluster.name}: no such pool`,
      );
    }
    overrides = pool.selection;
  }
  const merged = { ...cluster.selection, ...withoutUndefined(overrides ?? {}) };
  const policy: SelectionPolicy = {
    lastPatchAnnotation: merged.lastPatchAnnotation,
    pendingRebootAnnotation: merged.pendingRebootAnnotation,
    ignoreAnnotations: merged.ignoreAnnotations,
    excludeNodeNames: merged.excludeNodeNames,
    minimumReadySeconds: merged.minimumReadyTime,
    minimumCandidates: merged.minimumCandidates,
  };
  return merged.maximumImageAge === undefined
    ? policy
    : { ...policy, maximumImageAgeSeconds: merged.maximumImageAge };
}

/** Whether a CAPZ pool may be refreshed (CAPZ then replaces its machines): the pool's setting over the cluster's. */
export function capzRolloutFor(cluster: ClusterSettings, poolName: string): 'refuse' | 'allow' {
  const pool = cluster.pools === 'all' ? undefined : cluster.pools.find((p) => p.name === poolName);
  return pool?.capz?.rollout ?? cluster.capz?.rollout ?? 'refuse';
}

/** The retirement settings of one pool: the pool's fields over the cluster's (validated at load). */
export function retirementFor(cluster: ClusterSettings, poolName: string): RetirementSettings {
  const pool = cluster.pools === 'all' ? undefined : cluster.pools.find((p) => p.name === poolName);
  const resolved = resolveRetirement(cluster.promotion.retirement, pool?.promotion?.retirement);
  if ('problem' in resolved) throw new Error(`pool ${poolName}: promotion.retirement: ${resolved.problem}`);
  return resolved;
}

/** The canary and generation policies of one pool: the pool's overrides over the cluster's (over the defaults). */
export function promotionPolicyFor(
  cluster: ClusterSettings,
  poolName: string,
): { canary: CanaryPolicy; generations: GenerationPolicy } {
  const pool = cluster.pools === 'all' ? undefined : cluster.pools.find((p) => p.name === poolName);
  const canary = { ...cluster.promotion.canary, ...withoutUndefined(pool?.promotion?.canary ?? {}) };
  const generations = {
    ...cluster.promotion.generations,
    ...withoutUndefined(pool?.promotion?.generations ?? {}),
  };
  const checkPod = canary.checkPod;
  return {
    canary: {
      enabled: canary.enabled,
      instances: canary.instances,
      soakSeconds: canary.soak,
      deadlineSeconds: canary.deadline,
      afterPass: canary.afterPass,
      afterFail: canary.afterFail,
      othersAfterFail: canary.othersAfterFail,
      ...(checkPod === undefined
        ? {}
        : {
            checkPod: {
              image: checkPod.image,
              command: checkPod.command,
              args: checkPod.args,
              env: checkPod.env,
              timeoutSeconds: checkPod.timeout,
            },
          }),
    },
    generations: {
      taintEffect: generations.taintEffect,
      ...definedOnly({ maxGenerationsBehind: generations.maxGenerationsBehind }),
    },
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}
