/**
 * The permissions the product is deployed with are exactly the ones its code uses, checked against
 * real refreshes on the simulator (which enforces infra/azure/compute-actions.json and the RBAC
 * manifests in infra/kubernetes/): every ARM action a refresh performs is in the role file and every
 * action in it is exercised (or listed here with why not); every Kubernetes rule and verb is needed —
 * the refresh fails, naming the permission, as soon as one is removed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseAllDocuments, stringify } from 'yaml';

import { ORCHESTRATION } from '../../shared/application/orchestration-ids.js';
import { POOL2, startHarness } from '../e2e/harness.js';

const ACTIONS_FILE = fileURLToPath(new URL('../../../infra/azure/compute-actions.json', import.meta.url));
const RBAC_DIR = fileURLToPath(new URL('../../../infra/kubernetes', import.meta.url));

/**
 * Actions in the role file that a refresh of the sample's Uniform pools does not perform, and why they
 * are granted anyway. Anything else unused is an excess permission and fails the test.
 */
const NOT_EXERCISED: Readonly<Record<string, string>> = {
  'Microsoft.Compute/virtualMachines/read':
    'Flexible scale sets: members are virtualMachines (sim-tested in tests/sim/arm)',
  'Microsoft.Compute/virtualMachines/start/action': 'Flexible scale sets: start the donor again',
  'Microsoft.Compute/virtualMachines/powerOff/action':
    'Flexible scale set members: power-off after Run Command, or when the guest stayed up',
  'Microsoft.Compute/virtualMachines/runCommand/action':
    'capture mode run-command on Flexible scale set members',
  'Microsoft.Compute/virtualMachineScaleSets/virtualMachines/delete':
    'only a rejected canary (or one settings remove after a pass) is deleted: tests/e2e/canary.test.ts',
  'Microsoft.Compute/virtualMachines/delete': 'the same for Flexible scale set members',
  'Microsoft.Compute/virtualMachines/attachDetachDataDisks/action':
    'live capture on Flexible scale set members (the copy disk attached to the donor VM)',
  'Microsoft.Compute/disks/read':
    'linked authorization: creating a snapshot reads its source disk (the simulator checks it on snapshots/write, ' +
    'it is not a request of its own)',
  'Microsoft.Compute/locations/operations/read':
    'status URLs (Azure-AsyncOperation) the SDK polls while waiting for the gallery and image definition; the ' +
    'simulator answers those creations at once',
  'Microsoft.Compute/locations/diskOperations/read':
    'the same for disk-resource-provider operations (snapshots)',
  'Microsoft.Network/virtualNetworks/subnets/join/action':
    "linked authorization of the canary scale set's creation (its subnet); the simulator does not model it",
  'Microsoft.Network/loadBalancers/backendAddressPools/join/action':
    "the same for the load balancer backend pools the canary scale set's NICs name",
  'Microsoft.ManagedIdentity/userAssignedIdentities/assign/action':
    "the same for the user-assigned identities the canary scale set's model names",
};

interface RoleDocument {
  kind: string;
  metadata: { name: string };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
}

async function refreshPool2(
  options: { rbacDir?: string; scenarioLrs?: boolean; runCommand?: boolean; live?: boolean } = {},
) {
  const harness = await startHarness({
    ...(options.rbacDir === undefined ? {} : { rbacDir: options.rbacDir }),
    ...(options.runCommand === true
      ? {
          settings: (cluster) => {
            cluster.capture = { mode: 'run-command' };
          },
        }
      : {}),
    ...(options.live === true
      ? {
          settings: (cluster) => {
            cluster.capture = { ...cluster.capture, mode: 'live' };
          },
        }
      : {}),
    ...(options.scenarioLrs === true
      ? {
          scenario: (scenario) => {
            scenario.region.zoneRedundantStorage = false;
          },
        }
      : {}),
  });
  try {
    const status = await harness.run(
      ORCHESTRATION.refreshPool,
      { cluster: 'prod', pool: POOL2, trigger: 'permissions-test' },
      'permissions',
    );
    return { status, log: harness.sim.running.log.snapshot() };
  } finally {
    await harness.stop();
  }
}

/** A copy of infra/kubernetes/ with `change` applied to the parsed documents of every file. */
async function rbacVariant(change: (documents: RoleDocument[], file: string) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'vmssp-rbac-'));
  for (const file of await readdir(RBAC_DIR)) {
    if (!/\.ya?ml$/.test(file)) continue;
    const documents = parseAllDocuments(await readFile(join(RBAC_DIR, file), 'utf8')).map(
      (document) => document.toJS() as RoleDocument,
    );
    change(documents, file);
    await writeFile(join(dir, file), documents.map((document) => stringify(document)).join('---\n'));
  }
  return dir;
}

void describe('deployed permissions match what the code uses', { concurrency: false }, () => {
  void it('every ARM action of a refresh is granted, and every granted action is used or explained', async () => {
    const granted = (JSON.parse(await readFile(ACTIONS_FILE, 'utf8')) as { action: string }[]).map(
      (a) => a.action,
    );
    const used = new Set<string>();
    // Four refreshes: ZRS (default), a region without ZRS (failed version deleted, LRS retry), capture
    // mode run-command (Run Command, then power-off through the API) and live capture (copy disk, attach).
    for (const options of [{}, { scenarioLrs: true }, { runCommand: true }, { live: true }]) {
      const { status, log } = await refreshPool2(options);
      assert.equal(status.runtimeStatus, 'Completed', JSON.stringify(status.failure));
      for (const entry of log.entries) {
        if (entry.api !== 'arm') continue;
        assert.notEqual(entry.status, 403, `denied: ${entry.operation}`);
        const action = entry.operation.replace(/#lro$/, '');
        if (action.startsWith('Microsoft.')) used.add(action);
      }
    }
    const missing = [...used].filter(
      (action) => !granted.some((g) => g.toLowerCase() === action.toLowerCase()),
    );
    assert.deepEqual(missing, [], 'actions used but not in infra/azure/compute-actions.json');
    const excess = granted.filter(
      (action) => !used.has(action) && ![...used].some((u) => u.toLowerCase() === action.toLowerCase()),
    );
    assert.deepEqual(
      excess.filter((action) => NOT_EXERCISED[action] === undefined),
      [],
      'actions granted but neither used by a refresh nor explained in NOT_EXERCISED',
    );
    assert.deepEqual(
      Object.keys(NOT_EXERCISED).filter((action) => !granted.includes(action)),
      [],
      'NOT_EXERCISED lists only granted actions',
    );
  });

  void it('a refresh fails with a message naming the permission when any single RBAC verb is removed', async () => {
    const roles: { file: string; role: string; rule: number; verb: string; resources: string[] }[] = [];
    for (const file of await readdir(RBAC_DIR)) {
      if (!/\.ya?ml$/.test(file)) continue;
      for (const document of parseAllDocuments(await readFile(join(RBAC_DIR, file), 'utf8'))) {
        const role = document.toJS() as RoleDocument | null;
        if (role === null || (role.kind !== 'ClusterRole' && role.kind !== 'Role')) continue;
        for (const [index, rule] of (role.rules ?? []).entries()) {
          for (const verb of rule.verbs) {
            roles.push({ file, role: role.metadata.name, rule: index, verb, resources: rule.resources });
          }
        }
      }
    }
    assert.ok(roles.length >= 8, `found ${roles.length} grants`);
    const notNeeded: string[] = [];
    for (const grant of roles) {
      const dir = await rbacVariant((documents, file) => {
        if (file !== grant.file) return;
        for (const document of documents) {
          if (document.metadata.name !== grant.role || document.rules === undefined) continue;
          const rule = document.rules[grant.rule];
          if (rule === undefined) continue;
          rule.verbs = rule.verbs.filter((verb) => verb !== grant.verb);
          if (rule.verbs.length === 0) document.rules.splice(grant.rule, 1);
        }
      });
      try {
        const { status } = await refreshPool2({ rbacDir: dir });
        const label = `${grant.role}: ${grant.verb} ${grant.resources.join(',')}`;
        if (status.runtimeStatus === 'Completed') {
          notNeeded.push(label);
          continue;
        }
        const message = status.failure?.ErrorMessage ?? '';
        assert.match(
          message,
          /forbidden|may not|cannot/i,
          `${label}: the failure names a permission: ${message}`,
        );
        const resource = grant.resources[0]?.split('/')[0] ?? '';
        assert.ok(
          message.includes(resource.replace(/s$/, '')),
          `${label}: the failure names ${resource}: ${message}`,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    assert.deepEqual(
      notNeeded,
      [],
      'grants a full refresh does not need (remove them from infra/kubernetes/)',
    );
  });
});
