// Tests for the settings schema and loadSettings: defaults, every rejection naming path and accepted form,
// secrets never echoed, the sample file, and the per-pool selection policy.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import {
  DEFAULT_KEEP_EXTENSIONS,
  loadSettings,
  retirementFor,
  selectionPolicyFor,
  SettingsError,
  type SettingsIssue,
} from '../../../shared/config/settings.js';
import {
  classifySettingsKey,
  REQUIRED_SETTINGS_KEYS,
  SETTINGS_KEYS,
} from '../../../shared/config/settings-keys.js';
import { DEFAULT_SELECTION_POLICY } from '../../../shared/domain/selection-policy.js';

const JWT =
  'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwic3ViIjoic3lzdGVtOnNhIn0.c2lnbmF0dXJlLXZhbHVlLWhlcmU';
const DIGEST = 'a'.repeat(64);
const VAULT = 'https://kv-ops.vault.azure.net/secrets';

type Json = Record<string, unknown>;

function baseCluster(): Json {
  return {
    name: 'prod',
    subscriptionId: '11111111-2222-3333-4444-555555555555',
    resourceGroup: 'k8s-prod',
    apiServer: {
      url: 'https://k8s-prod.westeurope.cloudapp.azure.com:6443',
      caCertificate: { keyVaultSecretUri: `${VAULT}/prod-ca` },
      auth: { serviceAccountToken: { keyVaultSecretUri: `${VAULT}/prod-token` } },
    },
    pools: [{ name: 'agents', scaleSet: 'k8s-agents-vmss' }],
    capture: { prepImage: `registry.example.com/tools/busybox:1.37@sha256:${DIGEST}` },
  };
}

function envWith(
  clusters: unknown,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return { VMSSP_CLUSTERS: JSON.stringify(clusters), ...extra };
}

/** Returns a copy of the base cluster with `patch` applied to the object at `path` (undefined deletes). */
function clusterWith(path: readonly (string | number)[], value: unknown): Json {
  const cluster = baseCluster();
  let node: Record<string | number, unknown> = cluster;
  for (const segment of path.slice(0, -1)) {
    node[segment] ??= typeof segment === 'number' ? [] : {};
    node = node[segment] as Record<string | number, unknown>;
  }
  const last = path.at(-1);
  if (last === undefined) throw new Error('empty path');
  if (value === undefined) delete node[last];
  else node[last] = value;
  return cluster;
}

function issuesOf(env: Record<string, string | undefined>): readonly SettingsIssue[] {
  try {
    loadSettings(env);
  } catch (error) {
    assert.ok(error instanceof SettingsError, `expected a SettingsError, got ${String(error)}`);
    return error.issues;
  }
  assert.fail('expected loadSettings to throw');
}

interface InvalidCase {
  readonly name: string;
  readonly env: Record<string, string | undefined>;
  readonly path: string;
  /** A fragment of "what is accepted". */
  readonly accepts: string;
}

const c = (path: readonly (string | number)[], value: unknown): Record<string, string | undefined> =>
  envWith([clusterWith(path, value)]);

const INVALID: readonly InvalidCase[] = [
  { name: 'clusters missing', env: {}, path: 'VMSSP_CLUSTERS', accepts: 'JSON array' },
  {
    name: 'clusters not JSON',
    env: { VMSSP_CLUSTERS: '[{"name": ' },
    path: 'VMSSP_CLUSTERS',
    accepts: 'JSON array',
  },
  { name: 'clusters an object', env: envWith({ name: 'x' }), path: 'VMSSP_CLUSTERS', accepts: 'JSON array' },
  { name: 'clusters empty', env: envWith([]), path: 'VMSSP_CLUSTERS', accepts: 'at least one cluster' },
  { name: 'cluster not an object', env: envWith(['prod']), path: 'VMSSP_CLUSTERS[0]', accepts: 'a cluster:' },
  {
    name: 'cluster name uppercase',
    env: c(['name'], 'Prod'),
    path: 'VMSSP_CLUSTERS[0].name',
    accepts: 'lowercase',
  },
  {
    name: 'cluster name too long',
    env: c(['name'], 'a'.repeat(41)),
    path: 'VMSSP_CLUSTERS[0].name',
    accepts: '1–40',
  },
  {
    name: 'cluster name missing',
    env: c(['name'], undefined),
    path: 'VMSSP_CLUSTERS[0].name',
    accepts: 'lowercase',
  },
  {
    name: 'subscription not a GUID',
    env: c(['subscriptionId'], 'prod-sub'),
    path: 'VMSSP_CLUSTERS[0].subscriptionId',
    accepts: 'GUID',
  },
  {
    name: 'resource group ends with a period',
    env: c(['resourceGroup'], 'rg.'),
    path: 'VMSSP_CLUSTERS[0].resourceGroup',
    accepts: 'not ending in "."',
  },
  {
    name: 'resource group too long',
    env: c(['resourceGroup'], 'r'.repeat(91)),
    path: 'VMSSP_CLUSTERS[0].resourceGroup',
    accepts: '1–90',
  },
  {
    name: 'unknown cluster field (typo)',
    env: c(['hsitory'], 3),
    path: 'VMSSP_CLUSTERS[0].hsitory',
    accepts: 'did you mean history?',
  },
  {
    name: 'API server over http',
    env: c(['apiServer', 'url'], 'http://10.0.0.4:6443'),
    path: 'VMSSP_CLUSTERS[0].apiServer.url',
    accepts: 'https URL',
  },
  {
    name: 'API server URL with credentials',
    env: c(['apiServer', 'url'], 'https://admin:pw@k8s.example.com'),
    path: 'VMSSP_CLUSTERS[0].apiServer.url',
    accepts: 'without credentials',
  },
  {
    name: 'CA certificate missing',
    env: c(['apiServer', 'caCertificate'], undefined),
    path: 'VMSSP_CLUSTERS[0].apiServer.caCertificate',
    accepts: 'a CA certificate',
  },
  {
    name: 'CA as base64 kubeconfig data',
    env: c(['apiServer', 'caCertificate'], { pem: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t' }),
    path: 'VMSSP_CLUSTERS[0].apiServer.caCertificate.pem',
    accepts: 'decode it first',
  },
  {
    name: 'CA with two sources',
    env: c(['apiServer', 'caCertificate'], { keyVaultSecretUri: `${VAULT}/ca`, env: 'VMSSP_SECRET_CA' }),
    path: 'VMSSP_CLUSTERS[0].apiServer.caCertificate',
    accepts: 'exactly one of pem, keyVaultSecretUri and env',
  },
  {
    name: 'auth with neither method',
    env: c(['apiServer', 'auth'], {}),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth',
    accepts: 'exactly one of serviceAccountToken and entraId',
  },
  {
    name: 'token reference over http',
    env: c(['apiServer', 'auth', 'serviceAccountToken'], {
      keyVaultSecretUri: 'http://kv-ops.vault.azure.net/secrets/t',
    }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken.keyVaultSecretUri',
    accepts: 'does not use https',
  },
  {
    name: 'token reference to a foreign host',
    env: c(['apiServer', 'auth', 'serviceAccountToken'], {
      keyVaultSecretUri: 'https://kv-ops.example.com/secrets/t',
    }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken.keyVaultSecretUri',
    accepts: 'vault.azure.net',
  },
  {
    name: 'token reference with a bad version',
    env: c(['apiServer', 'auth', 'serviceAccountToken'], { keyVaultSecretUri: `${VAULT}/t/v1` }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken.keyVaultSecretUri',
    accepts: '32 hex digits',
  },
  {
    name: 'token env name without the secret prefix',
    env: c(['apiServer', 'auth', 'serviceAccountToken'], { env: 'PROD_TOKEN' }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken.env',
    accepts: 'VMSSP_SECRET_',
  },
  {
    name: 'token env setting not set',
    env: c(['apiServer', 'auth', 'serviceAccountToken'], { env: 'VMSSP_SECRET_PROD_TOKEN' }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken.env',
    accepts: 'app setting that is set',
  },
  {
    name: 'token env setting left as an unresolved Key Vault reference',
    env: {
      ...c(['apiServer', 'auth', 'serviceAccountToken'], { env: 'VMSSP_SECRET_PROD_TOKEN' }),
      VMSSP_SECRET_PROD_TOKEN: `@Microsoft.KeyVault(SecretUri=${VAULT}/prod-token)`,
    },
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken.env',
    accepts: 'Key Vault Secrets User',
  },
  {
    name: 'inline JWT as the token',
    env: c(['apiServer', 'auth', 'serviceAccountToken'], JWT),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.serviceAccountToken',
    accepts: 'never the secret itself',
  },
  {
    name: 'inline token literal field',
    env: c(['apiServer', 'auth'], { token: 'sup3r-secret-static-token' }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.token',
    accepts: 'never the secret itself',
  },
  {
    name: 'Entra ID server app not a GUID',
    env: c(['apiServer', 'auth'], { entraId: { serverAppId: 'aks-server' } }),
    path: 'VMSSP_CLUSTERS[0].apiServer.auth.entraId.serverAppId',
    accepts: 'GUID',
  },
  { name: 'pools missing', env: c(['pools'], undefined), path: 'VMSSP_CLUSTERS[0].pools', accepts: '"all"' },
  {
    name: 'pools a wrong word',
    env: c(['pools'], 'every'),
    path: 'VMSSP_CLUSTERS[0].pools',
    accepts: '"all"',
  },
  {
    name: 'pools empty list',
    env: c(['pools'], []),
    path: 'VMSSP_CLUSTERS[0].pools',
    accepts: 'non-empty list',
  },
  {
    name: 'pool name with underscore',
    env: c(['pools'], [{ name: 'agent_pool' }]),
    path: 'VMSSP_CLUSTERS[0].pools[0].name',
    accepts: 'lowercase',
  },
  {
    name: 'scale set name too long',
    env: c(['pools'], [{ name: 'agents', scaleSet: 's'.repeat(65) }]),
    path: 'VMSSP_CLUSTERS[0].pools[0].scaleSet',
    accepts: '1–64',
  },
  {
    name: 'duplicate pool names',
    env: c(['pools'], [{ name: 'agents' }, { name: 'agents', scaleSet: 'other' }]),
    path: 'VMSSP_CLUSTERS[0].pools[1].name',
    accepts: 'not used before',
  },
  {
    name: 'two pools on one scale set',
    env: c(
      ['pools'],
      [
        { name: 'a', scaleSet: 'vmss1' },
        { name: 'b', scaleSet: 'VMSS1' },
      ],
    ),
    path: 'VMSSP_CLUSTERS[0].pools[1].scaleSet',
    accepts: 'no other pool manages',
  },
  {
    name: 'pool enabled as a string',
    env: c(['pools'], [{ name: 'agents', enabled: 'yes' }]),
    path: 'VMSSP_CLUSTERS[0].pools[0].enabled',
    accepts: 'true or false',
  },
  {
    name: 'pool minimum ready time with unknown unit',
    env: c(['pools'], [{ name: 'agents', selection: { minimumReadyTime: '5x' } }]),
    path: 'VMSSP_CLUSTERS[0].pools[0].selection.minimumReadyTime',
    accepts: 'a duration',
  },
  {
    name: 'pool bootstrap flavour unknown',
    env: c(['pools'], [{ name: 'agents', bootstrapFlavour: 'kops' }]),
    path: 'VMSSP_CLUSTERS[0].pools[0].bootstrapFlavour',
    accepts: 'one of "aks-engine", "kubeadm", "k3s", "rke2"',
  },
  {
    name: 'pool selection unknown field',
    env: c(['pools'], [{ name: 'agents', selection: { minimumReadyTme: '1h' } }]),
    path: 'VMSSP_CLUSTERS[0].pools[0].selection.minimumReadyTme',
    accepts: 'did you mean minimumReadyTime?',
  },
  {
    name: 'negative minimum ready time',
    env: c(['selection'], { minimumReadyTime: '-1h' }),
    path: 'VMSSP_CLUSTERS[0].selection.minimumReadyTime',
    accepts: 'a duration',
  },
  {
    name: 'minimum candidates zero',
    env: c(['selection'], { minimumCandidates: 0 }),
    path: 'VMSSP_CLUSTERS[0].selection.minimumCandidates',
    accepts: 'integer from 1',
  },
  {
    name: 'maximum image age below an hour',
    env: c(['selection'], { maximumImageAge: '10m' }),
    path: 'VMSSP_CLUSTERS[0].selection.maximumImageAge',
    accepts: 'from 1h',
  },
  {
    name: 'annotation key with two slashes',
    env: c(['selection'], { lastPatchAnnotation: 'a/b/c' }),
    path: 'VMSSP_CLUSTERS[0].selection.lastPatchAnnotation',
    accepts: 'annotation key',
  },
  {
    name: 'ignore annotations not a list',
    env: c(['selection'], { ignoreAnnotations: 'example.com/skip' }),
    path: 'VMSSP_CLUSTERS[0].selection.ignoreAnnotations',
    accepts: 'list of annotation keys',
  },
  {
    name: 'excluded node name uppercase',
    env: c(['selection'], { excludeNodeNames: ['Node-1'] }),
    path: 'VMSSP_CLUSTERS[0].selection.excludeNodeNames[0]',
    accepts: 'node name',
  },
  {
    name: 'excluded node listed twice',
    env: c(['selection'], { excludeNodeNames: ['n1', 'n1'] }),
    path: 'VMSSP_CLUSTERS[0].selection.excludeNodeNames[1]',
    accepts: 'each once',
  },
  {
    name: 'canary soak not below its deadline',
    env: c(['promotion'], { canary: { soak: '30m', deadline: '30m' } }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.deadline',
    accepts: 'a deadline longer than the soak (30m)',
  },
  {
    name: 'canary instances out of range',
    env: c(['promotion'], { canary: { instances: 0 } }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.instances',
    accepts: '1',
  },
  {
    name: 'canary afterFail unknown',
    env: c(['promotion'], { canary: { afterFail: 'keep' } }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.afterFail',
    accepts: '"keep-cordoned"',
  },
  {
    name: 'check pod asks to run privileged: refused by name',
    env: c(['promotion'], {
      canary: { checkPod: { image: `busybox@sha256:${DIGEST}`, command: ['true'], privileged: true } },
    }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.checkPod.privileged',
    accepts: 'never runs privileged',
  },
  {
    name: 'check pod mounts a host path: refused by name',
    env: c(['promotion'], {
      canary: { checkPod: { image: `busybox@sha256:${DIGEST}`, command: ['true'], hostPath: '/' } },
    }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.checkPod.hostPath',
    accepts: 'cannot mount host paths',
  },
  {
    name: 'check pod image by tag only',
    env: c(['promotion'], { canary: { checkPod: { image: 'busybox:1.37', command: ['true'] } } }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.checkPod.image',
    accepts: 'pinned by digest',
  },
  {
    name: 'older-generation taint effect unknown',
    env: c(['promotion'], { generations: { taintEffect: 'Evict' } }),
    path: 'VMSSP_CLUSTERS[0].promotion.generations.taintEffect',
    accepts: '"PreferNoSchedule"',
  },
  {
    name: 'retirement enabled without a rule of which generations are due',
    env: c(['promotion'], { retirement: { enabled: true } }),
    path: 'VMSSP_CLUSTERS[0].promotion.retirement.enabled',
    accepts: 'needs "olderThan"',
  },
  {
    name: "a pool's retirement enabled with no rule of its own or the cluster's",
    env: c(['pools', 0, 'promotion'], { retirement: { enabled: true, budget: 2 } }),
    path: 'VMSSP_CLUSTERS[0].pools[0].promotion.retirement.enabled',
    accepts: 'keepGenerations',
  },
  {
    name: 'retirement budget of zero nodes',
    env: c(['promotion'], { retirement: { budget: 0 } }),
    path: 'VMSSP_CLUSTERS[0].promotion.retirement.budget',
    accepts: 'a percentage',
  },
  {
    name: 'retirement budget over 100%',
    env: c(['promotion'], { retirement: { budget: '150%' } }),
    path: 'VMSSP_CLUSTERS[0].promotion.retirement.budget',
    accepts: 'rounded up',
  },
  {
    name: 'retirement window with a five-field cron',
    env: c(['promotion'], { retirement: { windows: [{ schedule: '0 2 * * sat', duration: '4h' }] } }),
    path: 'VMSSP_CLUSTERS[0].promotion.retirement.windows[0].schedule',
    accepts: 'not 6',
  },
  {
    name: 'retirement window without a duration',
    env: c(['promotion'], { retirement: { windows: [{ schedule: '0 0 2 * * sat' }] } }),
    path: 'VMSSP_CLUSTERS[0].promotion.retirement.windows[0].duration',
    accepts: 'duration',
  },
  {
    name: 'retirement field misspelt',
    env: c(['promotion'], { retirement: { keepGeneration: 1 } }),
    path: 'VMSSP_CLUSTERS[0].promotion.retirement.keepGeneration',
    accepts: 'keepGenerations',
  },
  {
    name: 'canary afterPass unknown',
    env: c(['promotion'], { canary: { afterPass: 'shrink' } }),
    path: 'VMSSP_CLUSTERS[0].promotion.canary.afterPass',
    accepts: '"keep-size"',
  },
  {
    name: 'pool promotion override with an unknown field',
    env: c(['pools', 0, 'promotion'], { canary: { soakTime: '5m' } }),
    path: 'VMSSP_CLUSTERS[0].pools[0].promotion.canary.soakTime',
    accepts: 'soak',
  },
  {
    name: 'capture mode unknown',
    env: c(['capture', 'mode'], 'snapshot-only'),
    path: 'VMSSP_CLUSTERS[0].capture.mode',
    accepts: '"auto" (live capture where safe, else drain-and-stop)',
  },
  {
    name: 'prep image pinned by tag only',
    env: c(['capture', 'prepImage'], 'busybox:1.37'),
    path: 'VMSSP_CLUSTERS[0].capture.prepImage',
    accepts: 'pinned by digest',
  },
  {
    name: 'prep image missing in drain-and-stop',
    env: c(['capture'], { mode: 'drain-and-stop' }),
    path: 'VMSSP_CLUSTERS[0].capture.prepImage',
    accepts: 'required: the prep pods run nsenter',
  },
  {
    name: 'prep image missing with the default mode (auto runs prep pods too)',
    env: c(['capture'], {}),
    path: 'VMSSP_CLUSTERS[0].capture.prepImage',
    accepts: 'required: the prep pods run nsenter',
  },
  {
    name: 'run-command with a prep image (no pod runs in that mode)',
    env: c(['capture', 'mode'], 'run-command'),
    path: 'VMSSP_CLUSTERS[0].capture.prepImage',
    accepts: 'no prep image with mode "run-command"',
  },
  {
    name: "run command timeout beyond Azure's 90 minutes",
    env: c(['capture'], { mode: 'run-command', runCommandTimeout: '2h' }),
    path: 'VMSSP_CLUSTERS[0].capture.runCommandTimeout',
    accepts: 'to 1h30m',
  },
  {
    name: 'snapshot completion wait not one of auto, always, never',
    env: c(['capture', 'waitForSnapshotCompletion'], 'yes'),
    path: 'VMSSP_CLUSTERS[0].capture.waitForSnapshotCompletion',
    accepts: '"always" (keep the node stopped until the snapshot completed)',
  },
  {
    name: 'drain timeout not above grace period',
    env: c(['capture', 'drainTimeout'], '5m'),
    path: 'VMSSP_CLUSTERS[0].capture.drainTimeout',
    accepts: 'longer than the drain grace period',
  },
  {
    name: 'drain grace period too long',
    env: c(['capture', 'drainGracePeriod'], '2h'),
    path: 'VMSSP_CLUSTERS[0].capture.drainGracePeriod',
    accepts: 'to 1h',
  },
  {
    name: 'prep namespace invalid',
    env: c(['capture', 'prepNamespace'], 'VMSS_Prototype'),
    path: 'VMSSP_CLUSTERS[0].capture.prepNamespace',
    accepts: 'DNS label',
  },
  {
    name: 'extension type without publisher',
    env: c(['capture', 'keepExtensions'], ['CustomScript']),
    path: 'VMSSP_CLUSTERS[0].capture.keepExtensions[0]',
    accepts: 'publisher/type',
  },
  {
    name: 'gallery name with a hyphen',
    env: c(['gallery'], { name: 'k8s-prod-gallery' }),
    path: 'VMSSP_CLUSTERS[0].gallery.name',
    accepts: "cannot contain '-'",
  },
  {
    name: 'gallery storage type premium',
    env: c(['gallery'], { storageAccountType: 'Premium_LRS' }),
    path: 'VMSSP_CLUSTERS[0].gallery.storageAccountType',
    accepts: 'Standard_ZRS',
  },
  {
    name: 'gallery target region with a space',
    env: c(['gallery'], { targetRegions: ['West Europe'] }),
    path: 'VMSSP_CLUSTERS[0].gallery.targetRegions[0]',
    accepts: 'region name',
  },
  {
    name: 'gallery pinVersion as a string',
    env: c(['gallery'], { pinVersion: 'false' }),
    path: 'VMSSP_CLUSTERS[0].gallery.pinVersion',
    accepts: 'true or false',
  },
  {
    name: 'history zero',
    env: c(['history'], 0),
    path: 'VMSSP_CLUSTERS[0].history',
    accepts: 'from 1 to 50',
  },
  {
    name: 'history fractional',
    env: c(['history'], 2.5),
    path: 'VMSSP_CLUSTERS[0].history',
    accepts: 'from 1 to 50',
  },
  {
    name: 'duplicate cluster names',
    env: envWith([baseCluster(), { ...baseCluster(), pools: [{ name: 'other', scaleSet: 'other-vmss' }] }]),
    path: 'VMSSP_CLUSTERS[1].name',
    accepts: 'not used before',
  },
  {
    name: 'one scale set claimed by two clusters',
    env: envWith([baseCluster(), { ...baseCluster(), name: 'prod2' }]),
    path: 'VMSSP_CLUSTERS[1].pools[0].scaleSet',
    accepts: 'no other pool manages',
  },
  {
    name: 'schedule with five fields',
    env: envWith([baseCluster()], { VMSSP_SCHEDULE: '0 3 * * *' }),
    path: 'VMSSP_SCHEDULE',
    accepts: '6 fields',
  },
  {
    name: 'schedule hour 24',
    env: envWith([baseCluster()], { VMSSP_SCHEDULE: '0 0 24 * * *' }),
    path: 'VMSSP_SCHEDULE',
    accepts: 'NCRONTAB',
  },
  {
    name: 'reaper schedule with a minute 60',
    env: envWith([baseCluster()], { VMSSP_REAPER_SCHEDULE: '0 60 * * * *' }),
    path: 'VMSSP_REAPER_SCHEDULE',
    accepts: 'NCRONTAB',
  },
  {
    name: 'reaper schedule as a TimeSpan',
    env: envWith([baseCluster()], { VMSSP_REAPER_SCHEDULE: '00:05:00' }),
    path: 'VMSSP_REAPER_SCHEDULE',
    accepts: 'not on Flex Consumption',
  },
  {
    name: 'task hub with a hyphen',
    env: envWith([baseCluster()], { VMSSP_TASK_HUB: 'vmss-hub' }),
    path: 'VMSSP_TASK_HUB',
    accepts: 'letters and digits',
  },
  {
    name: 'task hub too short',
    env: envWith([baseCluster()], { VMSSP_TASK_HUB: 'ab' }),
    path: 'VMSSP_TASK_HUB',
    accepts: '3–45',
  },
  {
    name: 'parallel pools above 20',
    env: envWith([baseCluster()], { VMSSP_MAX_PARALLEL_POOLS: '21' }),
    path: 'VMSSP_MAX_PARALLEL_POOLS',
    accepts: 'from 1 to 20',
  },
  {
    name: 'parallel pools not a number',
    env: envWith([baseCluster()], { VMSSP_MAX_PARALLEL_POOLS: 'four' }),
    path: 'VMSSP_MAX_PARALLEL_POOLS',
    accepts: 'integer',
  },
  {
    name: 'reboot queue uppercase',
    env: envWith([baseCluster()], { VMSSP_REBOOT_QUEUE: 'Reboots' }),
    path: 'VMSSP_REBOOT_QUEUE',
    accepts: 'lowercase',
  },
  {
    name: 'reboot queue double hyphen',
    env: envWith([baseCluster()], { VMSSP_REBOOT_QUEUE: 'node--reboots' }),
    path: 'VMSSP_REBOOT_QUEUE',
    accepts: 'single "-"',
  },
  {
    name: 'quiet period in milliseconds',
    env: envWith([baseCluster()], { VMSSP_QUIET_PERIOD: '500ms' }),
    path: 'VMSSP_QUIET_PERIOD',
    accepts: 'unit s, m, h or d',
  },
  {
    name: 'events endpoint over http',
    env: envWith([baseCluster()], {
      VMSSP_EVENTS_TOPIC_ENDPOINT: 'http://topic.westeurope-1.eventgrid.azure.net/api/events',
    }),
    path: 'VMSSP_EVENTS_TOPIC_ENDPOINT',
    accepts: 'https URL',
  },
  {
    name: 'events endpoint with a SAS query',
    env: envWith([baseCluster()], {
      VMSSP_EVENTS_TOPIC_ENDPOINT:
        'https://topic.westeurope-1.eventgrid.azure.net/api/events?aeg-sas-key=abc',
    }),
    path: 'VMSSP_EVENTS_TOPIC_ENDPOINT',
    accepts: 'without credentials, query',
  },
  {
    name: 'client id not a GUID',
    env: envWith([baseCluster()], { AZURE_CLIENT_ID: 'my-identity' }),
    path: 'AZURE_CLIENT_ID',
    accepts: 'GUID',
  },
  {
    name: 'unknown app setting with our prefix (typo)',
    env: envWith([baseCluster()], { VMSSP_SCHEDUEL: '0 0 3 * * *' }),
    path: 'VMSSP_SCHEDUEL',
    accepts: 'did you mean VMSSP_SCHEDULE?',
  },
];

void describe('loadSettings rejects invalid settings', () => {
  void it('has at least 35 distinct cases', () => {
    assert.ok(INVALID.length >= 35, `only ${INVALID.length} cases`);
    assert.equal(new Set(INVALID.map((x) => x.name)).size, INVALID.length);
  });

  for (const testCase of INVALID) {
    void it(testCase.name, () => {
      const issues = issuesOf(testCase.env);
      const issue = issues.find((candidate) => candidate.path === testCase.path);
      assert.ok(issue, `no issue at ${testCase.path}; got ${issues.map((i) => i.path).join(', ')}`);
      assert.ok(
        issue.expected.includes(testCase.accepts),
        `issue at ${testCase.path} says "${issue.expected}", not "${testCase.accepts}"`,
      );
      assert.ok(issue.received.length > 0);
      let message = '';
      try {
        loadSettings(testCase.env);
      } catch (error) {
        message = error instanceof Error ? error.message : '';
      }
      assert.ok(message.includes(`${testCase.path}: got ${issue.received}; expected`), message);
    });
  }
});

void describe('loadSettings reports everything at once', () => {
  void it('lists problems from several keys and clusters in one error, sorted by path', () => {
    const bad = clusterWith(['history'], 99);
    const issues = issuesOf(
      envWith([bad, { ...baseCluster(), name: 'Second', pools: [{ name: 'x', scaleSet: 'x' }] }], {
        VMSSP_TASK_HUB: '1hub',
        VMSSP_QUIET_PERIOD: '1w',
      }),
    );
    assert.deepEqual(
      issues.map((issue) => issue.path),
      ['VMSSP_CLUSTERS[0].history', 'VMSSP_CLUSTERS[1].name', 'VMSSP_QUIET_PERIOD', 'VMSSP_TASK_HUB'],
    );
  });

  void it('shows the received value, truncated when long', () => {
    const issues = issuesOf(c(['resourceGroup'], `${'x'.repeat(200)}.`));
    const issue = issues.find((i) => i.path === 'VMSSP_CLUSTERS[0].resourceGroup');
    assert.ok(issue);
    assert.match(issue.received, /^"x{60}"… \(201 characters\)$/);
  });

  void it('never reports the unparseable JSON text itself', () => {
    const issues = issuesOf({ VMSSP_CLUSTERS: `[{"token": "${JWT}" ` });
    assert.equal(issues.length, 1);
    assert.match(issues[0]?.received ?? '', /not JSON/);
    assert.ok(!JSON.stringify(issues).includes('eyJ'));
  });
});

void describe('secrets are never echoed', () => {
  const secrets: readonly { name: string; env: Record<string, string | undefined>; secret: string }[] = [
    { name: 'JWT as token', env: c(['apiServer', 'auth', 'serviceAccountToken'], JWT), secret: JWT },
    {
      name: 'plain token under auth',
      env: c(['apiServer', 'auth', 'serviceAccountToken'], 'Xk9-pl41n-t0ken-value'),
      secret: 'Xk9-pl41n-t0ken-value',
    },
    { name: 'token literal field in cluster', env: c(['token'], 'hunter2hunter2'), secret: 'hunter2hunter2' },
    {
      name: 'password in a pool',
      env: c(['pools'], [{ name: 'agents', password: 'Pa55word!' }]),
      secret: 'Pa55word!',
    },
    {
      name: 'private key pasted as CA',
      env: c(['apiServer', 'caCertificate'], {
        pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzzz\n-----END RSA PRIVATE KEY-----',
      }),
      secret: 'MIIEowIBAAKCAQEAzzz',
    },
    { name: 'JWT in an unrelated field', env: c(['resourceGroup'], JWT), secret: JWT.slice(0, 30) },
    {
      name: 'JWT in the env reference field',
      env: c(['apiServer', 'auth', 'serviceAccountToken'], { env: JWT }),
      secret: JWT.slice(0, 30),
    },
    {
      name: 'storage key in the events endpoint',
      env: envWith([baseCluster()], {
        VMSSP_EVENTS_TOPIC_ENDPOINT: 'DefaultEndpointsProtocol=https;AccountName=x;AccountKey=c2VjcmV0a2V5',
      }),
      secret: 'c2VjcmV0a2V5',
    },
  ];

  for (const testCase of secrets) {
    void it(testCase.name, () => {
      let message = '';
      try {
        loadSettings(testCase.env);
      } catch (error) {
        assert.ok(error instanceof SettingsError);
        message = `${error.message}\n${JSON.stringify(error.issues)}`;
      }
      assert.ok(message.length > 0, 'expected a SettingsError');
      assert.ok(!message.includes(testCase.secret), `the secret leaked: ${message}`);
      assert.match(message, /<redacted \d+-character/);
    });
  }

  void it('shows a Key Vault reference, which is not a secret', () => {
    const issues = issuesOf(
      c(['apiServer', 'auth', 'serviceAccountToken'], {
        keyVaultSecretUri: 'https://kv-ops.vault.azure.net/keys/x',
      }),
    );
    assert.ok(issues.some((i) => i.received === '"https://kv-ops.vault.azure.net/keys/x"'));
  });
});

void describe('capture mode run-command', () => {
  void it('needs no prep image and takes a run command timeout', () => {
    const settings = loadSettings(
      envWith([clusterWith(['capture'], { mode: 'run-command', runCommandTimeout: '15m' })]),
    );

    const capture = settings.clusters[0]?.capture;
    assert.equal(capture?.mode, 'run-command');
    assert.equal(capture.prepImage, undefined);
    assert.equal(capture.runCommandTimeout, 900);
  });
});

void describe('capture.waitForSnapshotCompletion', () => {
  void it('takes always and never as given', () => {
    for (const value of ['always', 'never', 'auto'] as const) {
      const settings = loadSettings(envWith([clusterWith(['capture', 'waitForSnapshotCompletion'], value)]));
      assert.equal(settings.clusters[0]?.capture.waitForSnapshotCompletion, value);
    }
  });
});

void describe('loadSettings applies defaults', () => {
  void it('fills every optional field of a minimal cluster', () => {
    const settings = loadSettings(envWith([baseCluster()]));
    assert.equal(settings.schedule, '0 0 3 * * *');
    assert.equal(settings.reaperSchedule, '0 */5 * * * *');
    assert.equal(settings.taskHub, 'vmssprototype');
    assert.equal(settings.maxParallelPools, 4);
    assert.equal(settings.rebootQueue, 'vmss-prototype-reboots');
    assert.equal(settings.quietPeriod, 600);
    assert.equal(settings.eventsTopicEndpoint, undefined);
    assert.equal(settings.azureClientId, undefined);
    const [cluster] = settings.clusters;
    assert.ok(cluster);
    assert.deepEqual(cluster.selection, {
      lastPatchAnnotation: 'weave.works/kured-most-recent-reboot-needed',
      pendingRebootAnnotation: 'weave.works/kured-reboot-in-progress',
      ignoreAnnotations: [],
      excludeNodeNames: [],
      minimumReadyTime: 3600,
      minimumCandidates: 1,
    });
    assert.deepEqual(cluster.capture, {
      mode: 'auto',
      live: { rootPartition: 1, maxFreeze: 10 },
      drainGracePeriod: 300,
      drainTimeout: 900,
      prepNamespace: 'vmss-prototype',
      prepImage: `registry.example.com/tools/busybox:1.37@sha256:${DIGEST}`,
      runCommandTimeout: 600,
      waitForSnapshotCompletion: 'auto',
      keepExtensions: [...DEFAULT_KEEP_EXTENSIONS],
    });
    assert.equal(cluster.gallery.storageAccountType, 'Standard_ZRS');
    assert.equal(cluster.gallery.replicaCount, 1);
    assert.equal(cluster.gallery.pinVersion, false);
    assert.equal(cluster.gallery.resourceGroup, 'k8s-prod');
    assert.match(cluster.gallery.name, /^vmssp_k8s_prod_[0-9a-f]{8}$/);
    assert.equal(cluster.history, 3);
    assert.deepEqual(cluster.pools, [
      { name: 'agents', scaleSet: 'k8s-agents-vmss', resourceGroup: 'k8s-prod', enabled: true },
    ]);
    assert.deepEqual(cluster.apiServer.auth, {
      kind: 'service-account-token',
      token: {
        source: 'key-vault',
        secretUri: `${VAULT}/prod-token`,
        vaultUrl: 'https://kv-ops.vault.azure.net',
        secretName: 'prod-token',
      },
    });
  });

  void it('parses explicit values: durations to seconds, env references, Entra ID scope, "all" pools', () => {
    const cluster = {
      ...baseCluster(),
      apiServer: {
        url: 'https://10.1.0.4:6443',
        tlsServerName: 'k8s-prod.internal',
        caCertificate: {
          pem: '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUabc=\n-----END CERTIFICATE-----\n',
        },
        auth: { entraId: { serverAppId: '6dae42f8-4368-4678-94ff-3960e28e3630' } },
      },
      pools: 'all',
      selection: {
        minimumReadyTime: '1h30m',
        maximumImageAge: '14d',
        ignoreAnnotations: ['example.com/skip'],
      },
      capture: {
        mode: 'drain-and-stop',
        prepImage: `registry.example.com/tools/busybox:1.37@sha256:${DIGEST}`,
        drainGracePeriod: 30,
        drainTimeout: '1.5h',
      },
      gallery: {
        name: 'shared.gallery_1',
        resourceGroup: 'images',
        storageAccountType: 'Standard_LRS',
        pinVersion: true,
      },
      history: '5',
    };
    const settings = loadSettings(
      envWith([cluster], {
        VMSSP_SCHEDULE: '0 */30 1-5 * jan-mar mon,fri',
        VMSSP_REAPER_SCHEDULE: '30 */10 * * * *',
        VMSSP_MAX_PARALLEL_POOLS: ' 8 ',
        VMSSP_QUIET_PERIOD: '0',
        VMSSP_EVENTS_TOPIC_ENDPOINT: 'https://vmssp.westeurope-1.eventgrid.azure.net/api/events',
        AZURE_CLIENT_ID: '0f0e0d0c-0b0a-0908-0706-050403020100',
        VMSSP_TASK_HUB: '',
      }),
    );
    const [parsed] = settings.clusters;
    assert.ok(parsed);
    assert.equal(settings.maxParallelPools, 8);
    assert.equal(settings.reaperSchedule, '30 */10 * * * *');
    assert.equal(settings.quietPeriod, 0);
    assert.equal(settings.taskHub, 'vmssprototype', 'an empty value counts as unset');
    assert.equal(settings.azureClientId, '0f0e0d0c-0b0a-0908-0706-050403020100');
    assert.equal(parsed.pools, 'all');
    assert.deepEqual(parsed.apiServer.auth, {
      kind: 'entra-id',
      scope: '6dae42f8-4368-4678-94ff-3960e28e3630/.default',
    });
    assert.equal(parsed.apiServer.caCertificate.source, 'inline');
    assert.equal(parsed.selection.minimumReadyTime, 5400);
    assert.equal(parsed.selection.maximumImageAge, 14 * 86_400);
    assert.equal(parsed.capture.drainTimeout, 5400);
    assert.equal(parsed.capture.mode, 'drain-and-stop');
    assert.deepEqual(
      { name: parsed.gallery.name, rg: parsed.gallery.resourceGroup, pin: parsed.gallery.pinVersion },
      { name: 'shared.gallery_1', rg: 'images', pin: true },
    );
    assert.equal(parsed.history, 5);
  });

  void it('accepts an env reference whose app setting is set, without keeping its value', () => {
    const cluster = clusterWith(['apiServer', 'auth', 'serviceAccountToken'], {
      env: 'VMSSP_SECRET_PROD_TOKEN',
    });
    const settings = loadSettings(envWith([cluster], { VMSSP_SECRET_PROD_TOKEN: JWT }));
    assert.deepEqual(settings.clusters[0]?.apiServer.auth, {
      kind: 'service-account-token',
      token: { source: 'env', name: 'VMSSP_SECRET_PROD_TOKEN' },
    });
    assert.ok(!JSON.stringify(settings).includes('eyJ'));
  });

  void it("keeps a pool's bootstrap flavour, and leaves it unset (detected) when absent", () => {
    const cluster = clusterWith(['pools'], [{ name: 'agents', bootstrapFlavour: 'k3s' }, { name: 'other' }]);
    const [parsed] = loadSettings(envWith([cluster])).clusters;
    assert.ok(parsed && parsed.pools !== 'all');
    assert.equal(parsed.pools[0]?.bootstrapFlavour, 'k3s');
    assert.equal(parsed.pools[1]?.bootstrapFlavour, undefined);
  });

  void it('ignores environment keys that are not ours', () => {
    const settings = loadSettings(envWith([baseCluster()], { PATH: '/usr/bin', WEBSITE_SITE_NAME: 'x' }));
    assert.equal(settings.clusters.length, 1);
  });
});

void describe('retirementFor', () => {
  const settings = loadSettings(
    envWith([
      {
        ...baseCluster(),
        promotion: { retirement: { keepGenerations: 2, budget: '20%', surge: false } },
        pools: [
          { name: 'agents', scaleSet: 'vmss-a' },
          {
            name: 'gpu',
            scaleSet: 'vmss-g',
            promotion: {
              retirement: {
                enabled: true,
                budget: 1,
                windows: [{ schedule: '0 0 2 * * sat', duration: '4h' }],
                drainTimeout: '30m',
              },
            },
          },
        ],
      },
    ]),
  );
  const [cluster] = settings.clusters;
  assert.ok(cluster);

  void it('is off by default, one node at a time, surge first', () => {
    const plain = loadSettings(envWith([baseCluster()])).clusters[0];
    assert.ok(plain);
    assert.deepEqual(retirementFor(plain, 'agents'), {
      enabled: false,
      policy: { budget: { nodes: 1 }, windows: [], surge: true },
      drainTimeoutSeconds: 900,
    });
  });

  void it("takes the cluster's fields, the pool's over them", () => {
    assert.deepEqual(retirementFor(cluster, 'agents'), {
      enabled: false,
      policy: { keepGenerations: 2, budget: { percent: 20 }, windows: [], surge: false },
      drainTimeoutSeconds: 900,
    });
    assert.deepEqual(retirementFor(cluster, 'gpu'), {
      enabled: true,
      policy: {
        keepGenerations: 2,
        budget: { nodes: 1 },
        windows: [{ schedule: '0 0 2 * * sat', durationSeconds: 4 * 3600 }],
        surge: false,
      },
      drainTimeoutSeconds: 1800,
    });
  });
});

void describe('selectionPolicyFor', () => {
  const settings = loadSettings(
    envWith([
      {
        ...baseCluster(),
        selection: { minimumReadyTime: '2h', ignoreAnnotations: ['example.com/a'], maximumImageAge: '7d' },
        pools: [
          { name: 'agents', scaleSet: 'vmss-a' },
          {
            name: 'gpu',
            scaleSet: 'vmss-g',
            selection: { minimumCandidates: 3, ignoreAnnotations: ['example.com/b'], minimumReadyTime: 0 },
          },
        ],
      },
      { ...baseCluster(), name: 'plain', resourceGroup: 'k8s-plain', pools: 'all' },
    ]),
  );
  const [custom, plain] = settings.clusters;
  assert.ok(custom && plain);

  void it('uses the cluster policy for a pool without overrides', () => {
    assert.deepEqual(selectionPolicyFor(custom, 'agents'), {
      ...DEFAULT_SELECTION_POLICY,
      ignoreAnnotations: ['example.com/a'],
      minimumReadySeconds: 7200,
      maximumImageAgeSeconds: 7 * 86_400,
    });
  });

  void it('lets pool fields replace cluster fields, lists included', () => {
    assert.deepEqual(selectionPolicyFor(custom, 'gpu'), {
      ...DEFAULT_SELECTION_POLICY,
      ignoreAnnotations: ['example.com/b'],
      minimumReadySeconds: 0,
      minimumCandidates: 3,
      maximumImageAgeSeconds: 7 * 86_400,
    });
  });

  void it('equals the domain defaults when nothing is configured ("all" pools)', () => {
    assert.deepEqual(selectionPolicyFor(plain, 'any-scale-set'), DEFAULT_SELECTION_POLICY);
  });

  void it('refuses a pool the cluster does not list', () => {
    assert.throws(() => selectionPolicyFor(custom, 'missing'), /pool missing in cluster prod: no such pool/);
  });
});

void describe('local.settings.sample.json', () => {
  const sample = JSON.parse(
    readFileSync(new URL('../../../../local.settings.sample.json', import.meta.url), 'utf8'),
  ) as {
    IsEncrypted: boolean;
    Values: Record<string, string>;
  };

  void it('parses with loadSettings', () => {
    const settings = loadSettings(sample.Values);
    assert.ok(settings.clusters.length >= 2);
  });

  void it('carries every app key and only known keys', () => {
    assert.equal(sample.IsEncrypted, false);
    const keys = Object.keys(sample.Values);
    for (const key of SETTINGS_KEYS) assert.ok(keys.includes(key), `missing ${key}`);
    for (const key of keys) assert.notEqual(classifySettingsKey(key), 'unknown', `unknown key ${key}`);
    for (const key of REQUIRED_SETTINGS_KEYS) assert.notEqual(sample.Values[key], '');
  });

  void it('holds no secrets', () => {
    const text = JSON.stringify(sample);
    assert.doesNotMatch(text, /eyJ[\w-]+\.eyJ|PRIVATE KEY|AccountKey=|serviceAccountToken":"[^{]/);
  });
});
