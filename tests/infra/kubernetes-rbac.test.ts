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
import { KUBERNETES_RBAC } from '../../shared/domain/kubernetes-rbac.generated.js';
import { readRepoFile, REPO_ROOT } from './repo-files.js';

void describe('shared/domain/kubernetes-rbac.generated.ts', () => {
  void it('equals the roles of infra/kubernetes/ (run `npm run rbac:generate` after changing them)', () => {
    const files = readdirSync(join(REPO_ROOT, 'infra/kubernetes'))
      .filter((file) => /\.ya?ml$/.test(file) && !file.startsWith('kustomization'))
      .sort();
    const documents = files.flatMap((file) =>
      parseAllDocuments(readRepoFile(`infra/kubernetes/${file}`)).map(
        (document) => document.toJS() as unknown,
      ),
    );

    assert.deepEqual(KUBERNETES_RBAC, rbacRolesFromManifests(documents));
    assert.ok(KUBERNETES_RBAC.length >= 2);
  });
});
