/**
 * The product asks for exactly what infra/kubernetes/ grants: the generated role list the run's
 * permission check and `doctor` use equals the manifests (regenerate with `npm run rbac:generate`).
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { parseAllDocuments } from 'yaml';

import { rbacRolesFromManifests } from '../../shared/domain/kubernetes-access.js';
import { KUBERNETES_RBAC, MANAGEMENT_RBAC } from '../../shared/domain/kubernetes-rbac.generated.js';
import { readRepoFile, REPO_ROOT } from './repo-files.js';

/** The parsed documents of the YAML files directly in `dir` (a repository path), in file order. */
function manifestsIn(dir: string): unknown[] {
  const files = readdirSync(join(REPO_ROOT, dir))
    .filter((file) => /\.ya?ml$/.test(file) && !file.startsWith('kustomization'))
    .sort();
  return files.flatMap((file) =>
    parseAllDocuments(readRepoFile(`${dir}/${file}`)).map((document) => document.toJS() as unknown),
  );
}

void describe('shared/domain/kubernetes-rbac.generated.ts', () => {
  void it('equals the roles of infra/kubernetes/ (run `npm run rbac:generate` after changing them)', () => {
    assert.deepEqual(KUBERNETES_RBAC, rbacRolesFromManifests(manifestsIn('infra/kubernetes')));
    assert.ok(KUBERNETES_RBAC.length >= 2);
  });

  void it('equals the roles of infra/kubernetes/management/ as MANAGEMENT_RBAC', () => {
    assert.deepEqual(MANAGEMENT_RBAC, rbacRolesFromManifests(manifestsIn('infra/kubernetes/management')));
    assert.ok(MANAGEMENT_RBAC.length >= 1);
  });

  void it('grants in the management cluster what the MachinePools adapter calls', () => {
    const granted = new Set(
      MANAGEMENT_RBAC.flatMap((role) =>
        role.rules.flatMap((rule) =>
          rule.apiGroups.flatMap((group) =>
            rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${verb} ${resource}.${group}`)),
          ),
        ),
      ),
    );
    const used = [
      'get azuremachinepools.infrastructure.cluster.x-k8s.io',
      'patch azuremachinepools.infrastructure.cluster.x-k8s.io',
      'create azuremachinepools.infrastructure.cluster.x-k8s.io',
      'delete azuremachinepools.infrastructure.cluster.x-k8s.io',
      'get machinepools.cluster.x-k8s.io',
      'list machinepools.cluster.x-k8s.io',
      'create machinepools.cluster.x-k8s.io',
      'delete machinepools.cluster.x-k8s.io',
      'list azuremachinepoolmachines.infrastructure.cluster.x-k8s.io',
      'get kubeadmconfigs.bootstrap.cluster.x-k8s.io',
      'create kubeadmconfigs.bootstrap.cluster.x-k8s.io',
      'delete kubeadmconfigs.bootstrap.cluster.x-k8s.io',
    ];
    assert.deepEqual(
      used.filter((permission) => !granted.has(permission)),
      [],
    );
  });
});
