/**
 * CABPK's bootstrap token rotation for MachinePools (cluster-api
 * bootstrap/kubeadm/reconcilers/kubeadmconfig/kubeadmconfig_controller.go `rotateMachinePoolBootstrapToken`
 * and token.go `shouldRotate`, https://github.com/kubernetes-sigs/cluster-api): the KubeadmConfig of a
 * MachinePool is checked every TokenTTL/3; when its token's Secret in the workload cluster is gone or
 * expires within TokenTTL/2, a new token (TTL TokenTTL) is created and the bootstrap data Secret
 * regenerated with it. The scale set's customData follows only with CAPZ's next model write.
 */
import { createHash } from 'node:crypto';

import type { KubeObject, KubeStore } from '../../contracts.js';
import { specOf, statusOf } from '../../kube/objects.js';
import { BOOTSTRAP_TOKEN_RE, bootstrapTokenSecret, kubeadmJoinOf } from '../kubeadm.js';
import { bootstrapDataOf, CLUSTER_NAME_LABEL } from './objects.js';
import type { ManagedCluster } from './seed.js';

/** The token a KubeadmConfig joins with (`spec.joinConfiguration.discovery.bootstrapToken.token`). */
export function tokenOf(config: KubeObject): string | undefined {
  const spec = config.spec as
    { joinConfiguration?: { discovery?: { bootstrapToken?: { token?: unknown } } } } | undefined;
  const token = spec?.joinConfiguration?.discovery?.bootstrapToken?.token;
  return typeof token === 'string' ? token : undefined;
}

/** `shouldRotate`: the token's Secret is missing, or expires before now + ttl/2 (no expiration: never). */
export function shouldRotate(workload: KubeStore, token: string, nowMs: number, ttlMs: number): boolean {
  const id = BOOTSTRAP_TOKEN_RE.exec(token)?.[1];
  if (id === undefined) return false;
  const secret = workload.get('secrets', 'kube-system', `bootstrap-token-${id}`);
  if (!secret) return true;
  const raw = (secret.data as Record<string, unknown> | undefined)?.expiration;
  if (typeof raw !== 'string') return false;
  const expires = Date.parse(Buffer.from(raw, 'base64').toString('utf8'));
  return Number.isFinite(expires) && expires < nowMs + ttlMs / 2;
}

/** A new token, deterministic for the config and the time (the world has no randomness outside its seed). */
export function newToken(seed: string): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = createHash('sha256').update(seed).digest();
  const chars = [...bytes].slice(0, 22).map((byte) => alphabet[byte % alphabet.length] ?? 'a');
  return `${chars.slice(0, 6).join('')}.${chars.slice(6).join('')}`;
}

/** Creates the new token's Secret in the workload cluster; returns the bootstrap data with the token replaced. */
export function rotateToken(
  workload: KubeStore,
  oldToken: string,
  token: string,
  bootstrapData: string,
  expiresMs: number,
): string {
  workload.create('secrets', bootstrapTokenSecret(token, expiresMs));
  return bootstrapData.split(oldToken).join(token);
}

/** CABPK's token for a new config: created in the workload cluster (TTL `ttlMs`), put in a copy of the data. */
export function issueToken(
  workload: KubeStore,
  seed: string,
  sourceData: string,
  nowMs: number,
  ttlMs: number,
): { data: string; token?: string } {
  const old = kubeadmJoinOf(sourceData)?.token;
  if (!old) return { data: sourceData };
  const token = newToken(`${seed}/${nowMs}`);
  return { data: rotateToken(workload, old, token, sourceData, nowMs + ttlMs), token };
}

/** One CABPK token check over a managed cluster's KubeadmConfigs; returns the rotations made. */
export function rotateMachinePoolTokens(
  store: KubeStore,
  managed: ManagedCluster,
  nowMs: number,
  ttlMs: number,
): { config: string; detail: string }[] {
  const rotations: { config: string; detail: string }[] = [];
  for (const config of store.list('kubeadmconfigs', managed.namespace)) {
    const token = tokenOf(config);
    const secretName = statusOf(config).dataSecretName;
    if (token === undefined || typeof secretName !== 'string') continue;
    if (config.metadata.labels?.[CLUSTER_NAME_LABEL] !== managed.clusterName) continue;
    if (!shouldRotate(managed.world.store, token, nowMs, ttlMs)) continue;
    const data = bootstrapDataOf(store.get('secrets', managed.namespace, secretName));
    if (data === undefined) continue;
    const next = newToken(`${managed.clusterName}/${config.metadata.name}/${nowMs}`);
    const rotated = rotateToken(managed.world.store, token, next, data, nowMs + ttlMs);
    store.mutate('secrets', managed.namespace, secretName, (secret) => {
      secret.data = {
        ...(secret.data as Record<string, unknown>),
        value: Buffer.from(rotated).toString('base64'),
      };
    });
    store.mutate('kubeadmconfigs', managed.namespace, config.metadata.name, (object) => {
      object.spec = {
        ...specOf(object),
        joinConfiguration: {
          ...(specOf(object).joinConfiguration as object),
          discovery: { bootstrapToken: { token: next } },
        },
      };
    });
    rotations.push({
      config: config.metadata.name,
      detail: `rotated bootstrap token ${token.split('.')[0] ?? ''} → ${next.split('.')[0] ?? ''}`,
    });
  }
  return rotations;
}
