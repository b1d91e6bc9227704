/**
 * startSimulator's RBAC for a Cluster API management cluster (sim/index.ts): with `rbacDir`, the
 * management cluster's service-account token is authorized against `<rbacDir>/management/` when that
 * folder exists (else everything is allowed), the workload cluster's against the folder itself.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

import { CAPZ_SCENARIO, type RunningSimulator, startSimulator } from '../../sim/index.js';

const MANAGEMENT_ROLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: vmss-prototype, namespace: default }
rules:
  - apiGroups: [cluster.x-k8s.io]
    resources: [machinepools]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: vmss-prototype, namespace: default }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: vmss-prototype }
subjects:
  - { kind: ServiceAccount, name: vmss-prototype, namespace: vmss-prototype }
`;

const POOLS = { group: 'cluster.x-k8s.io', version: 'v1beta1', namespace: 'default', plural: 'machinepools' };

async function rbacDir(withManagement: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vmss-sim-rbac-'));
  for (const name of await readdir('infra/kubernetes')) {
    if (name.endsWith('.yaml')) await copyFile(join('infra/kubernetes', name), join(dir, name));
  }
  if (withManagement) {
    await mkdir(join(dir, 'management'));
    await writeFile(join(dir, 'management', 'role.yaml'), MANAGEMENT_ROLE);
  }
  return dir;
}

function client<T>(sim: RunningSimulator, context: string, api: new (...args: never[]) => T): T {
  const config = new KubeConfig();
  config.loadFromFile(sim.kubeconfigPath);
  config.setCurrentContext(context);
  return config.makeApiClient(api as never) as T;
}

void describe('management cluster RBAC', () => {
  const dirs: string[] = [];
  const sims: RunningSimulator[] = [];

  async function start(withManagement: boolean): Promise<RunningSimulator> {
    const dir = await rbacDir(withManagement);
    dirs.push(dir);
    const sim = await startSimulator({
      scenario: CAPZ_SCENARIO,
      outDir: join(dir, 'out'),
      clock: 'manual',
      rbacDir: dir,
    });
    sims.push(sim);
    return sim;
  }

  after(async () => {
    for (const sim of sims) await sim.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  void it('authorizes the management token against management/ and the workload token against the folder', async () => {
    const sim = await start(true);
    const pools = client(sim, 'mgmt-vmss-prototype', CustomObjectsApi);
    const listed = (await pools.listNamespacedCustomObject(POOLS)) as { items: unknown[] };
    assert.equal(listed.items.length, 1);
    await assert.rejects(
      pools.deleteNamespacedCustomObject({ ...POOLS, name: 'capz-lab-mp-0' }),
      (error: unknown) => error instanceof ApiException && error.code === 403,
    );
    const nodes = await client(sim, 'vmss-prototype', CoreV1Api).listNode();
    assert.ok(nodes.items.length > 0);
  });

  void it('allows the management token everything when management/ does not exist', async () => {
    const sim = await start(false);
    const pools = client(sim, 'mgmt-vmss-prototype', CustomObjectsApi);
    await pools.patchNamespacedCustomObject({
      ...POOLS,
      name: 'capz-lab-mp-0',
      body: [{ op: 'replace', path: '/spec/replicas', value: 4 }],
    });
  });
});
