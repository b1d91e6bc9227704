/**
 * The machine's kubectl against a simulated API server started in-process over HTTPS, with the
 * product's RBAC manifests (infra/kubernetes) loaded: an `admin` context (system:masters) and a
 * `product` context (the product's service-account token). For the tests of kubectl, curl and the
 * other clients a user would point at the simulator.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createRbacAuthorizer } from '../../../sim/kube/rbac.js';
import type { TestCluster } from './fixtures.js';
import { ADMIN_TOKEN, namespaceObject, SA_TOKEN, startTestCluster } from './fixtures.js';
import { createTestTls } from './tls.js';

const RBAC_DIR = fileURLToPath(new URL('../../../../infra/kubernetes/', import.meta.url));

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface KubectlSessionOptions {
  /** Namespaces created up front (default: `default` and `vmss-prototype`). */
  readonly namespaces?: readonly string[];
  /** Authorize with the product's RBAC manifests (default); false: every authenticated user may all. */
  readonly rbac?: boolean;
}

export interface KubectlSession {
  cluster: TestCluster;
  /** The session's directory: its kubeconfig, `ca.crt` and the manifests written. */
  directory: string;
  /** Runs kubectl with the session's kubeconfig (admin context unless `--context=product`). */
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** Runs any client (curl) with the session's kubeconfig and home; stdout as bytes. */
  run(
    command: string,
    args: readonly string[],
  ): Promise<{ code: number | null; stdout: Buffer; stderr: string }>;
  /** Writes a manifest into the session's directory and returns its path. */
  manifest(name: string, yaml: string): string;
  close(): Promise<void>;
}

export async function startKubectlSession(options: KubectlSessionOptions = {}): Promise<KubectlSession> {
  const tls = createTestTls();
  const manifests = readdirSync(RBAC_DIR)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .map((file) => join(RBAC_DIR, file));
  const cluster = await startTestCluster({
    tls,
    ...(options.rbac === false ? {} : { authorizer: createRbacAuthorizer(manifests) }),
    kubernetesVersion: 'v1.32.4',
  });
  const directory = mkdtempSync(join(tmpdir(), 'kube-sim-kubectl-'));
  writeFileSync(join(directory, 'ca.crt'), tls.caPem);
  writeFileSync(
    join(directory, 'kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: sim\n  cluster:\n    server: ${cluster.url}\n    certificate-authority: ${join(directory, 'ca.crt')}`,
      'users:',
      `- name: admin\n  user:\n    token: ${ADMIN_TOKEN}`,
      `- name: product\n  user:\n    token: ${SA_TOKEN}`,
      'contexts:',
      '- name: sim\n  context:\n    cluster: sim\n    user: admin',
      '- name: product\n  context:\n    cluster: sim\n    user: product\n    namespace: vmss-prototype',
      'current-context: sim',
      '',
    ].join('\n'),
  );
  for (const namespace of options.namespaces ?? ['default', 'vmss-prototype']) {
    cluster.store.create('namespaces', namespaceObject(namespace));
  }
  const run: KubectlSession['run'] = (command, args) =>
    new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env: { ...process.env, KUBECONFIG: join(directory, 'kubeconfig'), HOME: directory },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const stdout: Buffer[] = [];
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
    });
  return {
    cluster,
    directory,
    async kubectl(...args) {
      const result = await run('kubectl', args);
      return { ...result, stdout: result.stdout.toString() };
    },
    run,
    manifest(name, yaml) {
      const path = join(directory, name);
      writeFileSync(path, yaml);
      return path;
    },
    async close() {
      await cluster.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
