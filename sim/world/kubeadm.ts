/**
 * kubeadm as the world models it on a node's disk: the bootstrap tokens a cluster holds (Secrets
 * `kube-system/bootstrap-token-<id>`, https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/),
 * the `kubeadm join` a new machine's customData runs (preflight checks on leftover files, token discovery,
 * phase kubelet-start) and what the kubelet then does with what is on the disk (its client certificate,
 * or a TLS bootstrap). The wording of every failure is kubeadm's or the kubelet's:
 * cmd/kubeadm/app/preflight/checks.go (RunJoinNodeChecks), cmd/kubeadm/app/discovery/token/token.go and
 * pkg/kubelet/certificate/bootstrap/bootstrap.go in https://github.com/kubernetes/kubernetes.
 */
import { parse as parseYaml, parseAllDocuments } from 'yaml';

import type { DiskContent } from '../arm/compute-state.js';
import type { KubeObject } from '../contracts.js';
import { exists, filesUnder, PATHS, writeKubeadmJoinFiles, writeKubeletClientCert } from './os-disk.js';

/** kubeadm's bootstrap token format (`[a-z0-9]{6}.[a-z0-9]{16}`: token id, token secret). */
export const BOOTSTRAP_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** kubeadm's default token TTL (`kubeadm token create --ttl`). */
export const DEFAULT_TOKEN_TTL_MS = 24 * 3_600_000;

export interface KubeadmJoinCommand {
  /** The API server endpoint (`host:6443`). */
  endpoint: string;
  /** `--token` (or `--discovery-token`): `<id>.<secret>`; empty when the command carries none. */
  token: string;
}

/**
 * The `kubeadm join` a cloud-config (its runcmd, or any line of the user-data) runs, if any: with
 * `--token` on the command line, or with `--config FILE` — what Cluster API's bootstrap data runs
 * (`kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml`, cluster-api
 * bootstrap/kubeadm/pkg/cloudinit/cloudinit.go and node.go) — whose JoinConfiguration the same
 * cloud-config writes (`write_files`), its token and endpoint under `discovery.bootstrapToken`
 * (kubeadm's JoinConfiguration, https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/).
 */
export function kubeadmJoinOf(userData: string): KubeadmJoinCommand | undefined {
  for (const line of userData.split('\n')) {
    // A runcmd entry is a string or a list (`[kubeadm, join, …]`).
    const plain = line.replace(/["',[\]]/g, ' ').replace(/\s+/g, ' ');
    const at = plain.indexOf('kubeadm join');
    if (at < 0) continue;
    const words = plain
      .slice(at + 'kubeadm join'.length)
      .split(' ')
      .filter((word) => word !== '');
    let token = '';
    let endpoint = '';
    let config: string | undefined;
    for (let index = 0; index < words.length; index++) {
      const word = words[index] ?? '';
      if (word === '&&' || word === ';' || word === '||') break;
      const flag = /^--(token|discovery-token|config)(?:=(.*))?$/.exec(word);
      if (flag) {
        const value = flag[2] ?? words[++index] ?? '';
        if (flag[1] === 'config') config = value;
        else token = value;
      } else if (word.startsWith('--')) {
        if (!word.includes('=') && !(words[index + 1] ?? '--').startsWith('--')) index++;
      } else endpoint ||= word;
    }
    if (config !== undefined && token === '') {
      const join = joinConfigurationOf(userData, config);
      return { endpoint: endpoint || (join?.endpoint ?? ''), token: join?.token ?? '' };
    }
    return { endpoint, token };
  }
  return undefined;
}

/** The JoinConfiguration a cloud-config's `write_files` puts at `path` (plain or base64 content). */
function joinConfigurationOf(
  userData: string,
  path: string,
): { readonly token: string; readonly endpoint: string } | undefined {
  let cloudConfig: unknown;
  try {
    cloudConfig = parseYaml(userData);
  } catch {
    return undefined;
  }
  const files = (cloudConfig as { write_files?: unknown } | null)?.write_files;
  if (!Array.isArray(files)) return undefined;
  const file = (files as Record<string, unknown>[]).find((entry) => entry.path === path);
  if (typeof file?.content !== 'string') return undefined;
  const text =
    file.encoding === 'b64' || file.encoding === 'base64'
      ? Buffer.from(file.content, 'base64').toString('utf8')
      : file.content;
  let documents: unknown[];
  try {
    documents = parseAllDocuments(text).map((document) => document.toJS() as unknown);
  } catch {
    return undefined;
  }
  const join = documents.find(
    (document) => (document as { kind?: unknown } | null)?.kind === 'JoinConfiguration',
  ) as { discovery?: { bootstrapToken?: { token?: unknown; apiServerEndpoint?: unknown } } } | undefined;
  const bootstrapToken = join?.discovery?.bootstrapToken;
  if (bootstrapToken === undefined) return undefined;
  return {
    token: typeof bootstrapToken.token === 'string' ? bootstrapToken.token : '',
    endpoint: typeof bootstrapToken.apiServerEndpoint === 'string' ? bootstrapToken.apiServerEndpoint : '',
  };
}

function encode(text: string): string {
  return Buffer.from(text).toString('base64');
}

function decode(value: unknown): string {
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : '';
}

/** RFC 3339 without fractions, as kubeadm writes `expiration`. */
function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The Secret kubeadm stores a bootstrap token in; no `expiration` when it never expires (`--ttl 0`). */
export function bootstrapTokenSecret(token: string, expiresMs: number | undefined): KubeObject {
  const [id = '', secret = ''] = token.split('.');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: {
      description: encode('Bootstrap token for the kubeadm join of new nodes (simulator scenario).'),
      'token-id': encode(id),
      'token-secret': encode(secret),
      ...(expiresMs === undefined ? {} : { expiration: encode(rfc3339(expiresMs)) }),
      'usage-bootstrap-authentication': encode('true'),
      'usage-bootstrap-signing': encode('true'),
      'auth-extra-groups': encode('system:bootstrappers:kubeadm:default-node-token'),
    },
  };
}

/**
 * Why kubeadm's token discovery refuses `token` at `nowMs`, given the Secret the cluster holds for its
 * id (undefined: none), or undefined when the token is valid. An expired token is treated as absent, as
 * the API server's bootstrap authenticator and the token cleaner do.
 */
export function bootstrapTokenError(
  token: string,
  secret: KubeObject | undefined,
  nowMs: number,
): string | undefined {
  const match = BOOTSTRAP_TOKEN_RE.exec(token);
  if (!match) {
    return `error execution phase preflight: couldn't validate the identity of the API Server: the bootstrap token "${token}" was not of the form "${BOOTSTRAP_TOKEN_RE.source}"`;
  }
  const id = match[1] ?? '';
  const data = (secret?.data ?? {}) as Record<string, unknown>;
  const expiration = decode(data.expiration);
  const expired = expiration !== '' && !(Date.parse(expiration) > nowMs);
  if (
    secret === undefined ||
    expired ||
    decode(data['usage-bootstrap-signing']) !== 'true' ||
    decode(data['usage-bootstrap-authentication']) !== 'true'
  ) {
    return `error execution phase preflight: couldn't validate the identity of the API Server: token id "${id}" is invalid for this cluster or it has expired. Use "kubeadm token create" on the control-plane node to create a new valid token`;
  }
  if (decode(data['token-secret']) !== match[2]) {
    return "error execution phase preflight: couldn't validate the identity of the API Server: failed to verify JWS signature of received cluster info object, can't trust this API Server";
  }
  return undefined;
}

/** kubeadm's names for the checks' failures: `/etc/kubernetes/kubelet.conf` → `FileAvailable--etc-kubernetes-kubelet.conf`. */
function checkName(kind: string, path: string): string {
  return `${kind}--${path.slice(1).replaceAll('/', '-')}`;
}

/**
 * RunJoinNodeChecks on a worker, in kubeadm's order: the manifests directory must be empty, kubelet.conf
 * and bootstrap-kubelet.conf absent, port 10250 free (a kubelet already running from leftover
 * credentials holds it), the cluster CA absent. One `[ERROR …]` line per failure.
 */
export function joinPreflightErrors(content: DiskContent): string[] {
  const errors: string[] = [];
  if (filesUnder(content, PATHS.kubernetesManifests).length > 0)
    errors.push(
      `[ERROR ${checkName('DirAvailable', PATHS.kubernetesManifests)}]: ${PATHS.kubernetesManifests} is not empty`,
    );
  for (const path of [PATHS.kubeletConf, PATHS.bootstrapKubeletConf]) {
    if (exists(content, path))
      errors.push(`[ERROR ${checkName('FileAvailable', path)}]: ${path} already exists`);
  }
  if (kubeletListens(content)) errors.push('[ERROR Port-10250]: Port 10250 is in use');
  if (exists(content, PATHS.kubernetesCaCert))
    errors.push(
      `[ERROR ${checkName('FileAvailable', PATHS.kubernetesCaCert)}]: ${PATHS.kubernetesCaCert} already exists`,
    );
  return errors;
}

/** What `kubeadm join` prints when preflight fails (and exits 1: nothing is joined). */
export function preflightFailure(errors: readonly string[]): string {
  return `error execution phase preflight: [preflight] Some fatal errors occurred:\n\t${errors.join('\n\t')}\n[preflight] If you know what you are doing, you can make a check non-fatal with \`--ignore-preflight-errors=...\``;
}

/**
 * The kubelet unit (enabled in the image) started at boot before cloud-init's runcmd: it runs, and
 * listens on 10250, when its configuration and a kubeconfig with a client certificate are on the disk.
 */
function kubeletListens(content: DiskContent): boolean {
  return exists(content, PATHS.kubeletConfig) && clientCertificateOf(content) !== undefined;
}

/** The client certificate kubelet.conf names, when both are there. */
function clientCertificateOf(content: DiskContent): string | undefined {
  const conf = content.files[PATHS.kubeletConf];
  const path = /client-certificate: (\S+)/.exec(conf ?? '')?.[1];
  const certificate = path === undefined ? undefined : content.files[path];
  return certificate?.startsWith('system:node:') === true ? certificate : undefined;
}

export type KubeadmJoinOutcome =
  { kind: 'joined' } | { kind: 'kubeadm-preflight-failed' | 'bootstrap-token-rejected'; detail: string };

/**
 * `kubeadm join` up to the kubelet: preflight, then token discovery, then phase kubelet-start writes the
 * cluster CA, the kubelet's configuration and flags and bootstrap-kubelet.conf (the kubelet's TLS
 * bootstrap follows in `startKubelet`). On a failure nothing is written.
 */
export function runKubeadmJoin(
  content: DiskContent,
  join: KubeadmJoinCommand,
  cluster: string,
  tokenError: (token: string) => string | undefined,
): KubeadmJoinOutcome {
  const errors = joinPreflightErrors(content);
  if (errors.length > 0) return { kind: 'kubeadm-preflight-failed', detail: preflightFailure(errors) };
  const refused = tokenError(join.token);
  if (refused !== undefined) return { kind: 'bootstrap-token-rejected', detail: refused };
  writeKubeadmJoinFiles(content.files, cluster);
  content.files[PATHS.bootstrapKubeletConf] = `server: https://${join.endpoint}\ntoken: ${join.token}`;
  return { kind: 'joined' };
}

/**
 * The kubelet starting with what is on the disk (pkg/kubelet/certificate/bootstrap LoadClientConfig and
 * client-go's certificate manager): a kubeconfig with a client certificate is used as it is; without one,
 * bootstrap-kubelet.conf makes it write a kubeconfig pointing at its certificate store, whose current
 * certificate — a leftover one included, whatever node it names — it keeps using (the renewal it asks for
 * under its own name is a CSR signed by another node, which the approver does not approve); only an
 * empty store is filled by a TLS bootstrap with the token, for the machine's own name.
 */
export function startKubelet(
  content: DiskContent,
  hostname: string,
  nowMs: number,
  tokenError: (token: string) => string | undefined,
): { identity: string } | { refused: string } {
  const files = content.files;
  if (!exists(content, PATHS.kubeletConfig)) {
    return {
      refused: `no kubelet credential: the kubelet does not start: failed to load kubelet config file, path: ${PATHS.kubeletConfig}, error: open ${PATHS.kubeletConfig}: no such file or directory`,
    };
  }
  const current = clientCertificateOf(content);
  if (current !== undefined) return { identity: current.slice('system:node:'.length) };
  const bootstrap = files[PATHS.bootstrapKubeletConf];
  if (bootstrap === undefined) {
    return {
      refused: `no kubelet credential: no client certificate in ${PATHS.kubeletConf} and unable to load bootstrap kubeconfig: stat ${PATHS.bootstrapKubeletConf}: no such file or directory`,
    };
  }
  files[PATHS.kubeletConf] = `client-certificate: ${PATHS.kubeletClientCurrent}`;
  const stored = files[PATHS.kubeletClientCurrent];
  if (stored?.startsWith('system:node:') === true) return { identity: stored.slice('system:node:'.length) };
  const token = /token: (\S+)/.exec(bootstrap)?.[1] ?? '';
  if (tokenError(token) !== undefined) {
    delete files[PATHS.kubeletConf];
    return {
      refused: `no kubelet credential: the TLS bootstrap with the token in ${PATHS.bootstrapKubeletConf} was refused: cannot create certificate signing request: Unauthorized (the bootstrap token is unknown or has expired)`,
    };
  }
  writeKubeletClientCert(files, hostname, nowMs);
  return { identity: hostname };
}
