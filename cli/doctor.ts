/**
 * `vmss-prototype doctor`, and the permission preflight `refresh` runs before its first write: checks,
 * all of them reads, that the settings load, that an Azure token and each cluster's secrets can be had,
 * that the service account holds every Kubernetes permission a run needs (SelfSubjectAccessReview, or a
 * SelfSubjectRulesReview where the server has no access reviews) and that the Azure identity holds every
 * action of infra/azure/compute-actions.json on each pool's resource groups (ARM's "permissions of the
 * caller" API). Each check that fails names what is missing and the fix; one failing check does not stop
 * the others, so a single run lists everything.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { z } from 'zod';

import { createAzureCredential } from '../shared/adapters/azure/credentials.js';
import {
  checkKubernetesAccess,
  kubernetesPermissionFix,
  requiredAccessFor,
} from '../shared/application/kubernetes-permissions.js';
import { listPoolsOfCluster, namedPool } from '../shared/application/pool-lookup.js';
import type { ClusterHandle, ConfiguredPool } from '../shared/application/refresh-dependencies.js';
import type { RequiredAction } from '../shared/domain/arm-permissions.js';
import { missingActions, requiredActionsFor } from '../shared/domain/arm-permissions.js';
import { describeAccess } from '../shared/domain/kubernetes-access.js';
import { definedOnly } from '../shared/domain/optional.js';
import type { CliOptions } from './args.js';
import { type DoctorCheck, failed } from './doctor-check.js';
import { managementClusterChecks } from './doctor-management.js';
import { poolPolicyChecks } from './doctor-policies.js';
import { isUnreachable, unreachableCheck } from './doctor-reachability.js';
import type { Session } from './session.js';

export type { CheckKind, DoctorCheck } from './doctor-check.js';

const ARM_SCOPE = 'https://management.azure.com/.default';
/** The one list of Azure actions (also the Bicep role's and the simulator's). */
const COMPUTE_ACTIONS_FILE = fileURLToPath(
  new URL('../../infra/azure/compute-actions.json', import.meta.url),
);

export interface DoctorResult {
  readonly kind: 'doctor';
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

const ComputeActions = z.array(
  z.object({ action: z.string(), why: z.string(), captureMode: z.string().optional() }),
);

async function computeActions(): Promise<RequiredAction[]> {
  return ComputeActions.parse(JSON.parse(await readFile(COMPUTE_ACTIONS_FILE, 'utf8')));
}

interface Scope {
  readonly clusters: readonly string[];
  readonly pool?: string;
  /** Against real Azure (not the simulator): the Azure token is checked on its own first. */
  readonly realAzure: boolean;
}

function scopeOf(session: Session, options: CliOptions): Scope {
  const names = session.composition.dependencies.clusterNames;
  return {
    clusters: options.cluster === undefined ? names : names.filter((name) => name === options.cluster),
    ...definedOnly({ pool: options.pool }),
    // A settings file may point at the simulator too (VMSSP_SIMULATOR=true, docs/local-host.md).
    realAzure:
      options.sim === undefined &&
      options.simConnect === undefined &&
      session.composition.settings.simulator === undefined,
  };
}

/** Every check, for the clusters (and pool) the options name. */
export async function runDoctor(session: Session, options: CliOptions): Promise<DoctorResult> {
  const scope = scopeOf(session, options);
  const settings = session.composition.settings;
  const checks: DoctorCheck[] = [
    {
      check: 'settings',
      target: 'VMSSP_* app settings',
      result: 'ok',
      detail: `${settings.clusters.length} cluster(s): ${settings.clusters.map((c) => c.name).join(', ')}`,
    },
  ];
  let azureToken = true;
  if (scope.realAzure) {
    try {
      await createAzureCredential(settings.azureClientId).getToken(ARM_SCOPE);
      checks.push({
        check: 'azure-credential',
        target: 'Azure Resource Manager',
        result: 'ok',
        detail: 'a token was issued',
      });
    } catch (error) {
      azureToken = false;
      checks.push(failed({ check: 'azure-credential', target: 'Azure Resource Manager' }, error));
    }
  }
  checks.push(...(await permissionChecks(session, scope, azureToken)));
  // Each cluster's PoolImagePolicy objects: what a run would refuse (not part of refresh's preflight,
  // which must not be stopped by another pool's object).
  for (const cluster of scope.clusters) {
    const handle = await session.composition.dependencies.cluster(cluster).catch(() => undefined);
    if (handle !== undefined) checks.push(...(await poolPolicyChecks(cluster, handle)));
  }
  return { kind: 'doctor', ok: checks.every((check) => check.result === 'ok'), checks };
}

/**
 * The checks of each cluster in scope: its secrets, the service account's Kubernetes permissions and
 * the Azure identity's actions on its pools' resource groups (skipped when no Azure token could be had).
 * With a pool in scope, only that pool is looked for (namedPool: no listing of every node when its scale
 * set is in the cluster's resource group), or taken from `named` (by cluster) when the caller found it.
 */
async function permissionChecks(
  session: Session,
  scope: Scope,
  azureToken: boolean,
  named?: ReadonlyMap<string, ConfiguredPool>,
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const actions = await computeActions();
  // One answer per resource group: pools and clusters often share them.
  const permissions = new Map<
    string,
    ReturnType<Session['composition']['armPermissions']['listPermissions']>
  >();
  for (const cluster of scope.clusters) {
    const clusterSettings = session.composition.settings.clusters.find((c) => c.name === cluster);
    if (clusterSettings === undefined) continue;
    let handle: ClusterHandle;
    try {
      handle = await session.composition.dependencies.cluster(cluster);
      checks.push({
        check: 'cluster-secrets',
        cluster,
        target: 'CA certificate and credentials',
        result: 'ok',
        detail: 'readable',
      });
    } catch (error) {
      checks.push(
        failed({ check: 'cluster-secrets', cluster, target: 'CA certificate and credentials' }, error),
      );
      continue;
    }

    const captureMode = clusterSettings.capture.mode;
    const namespace = clusterSettings.capture.prepNamespace;
    const apiServer = clusterSettings.apiServer.url;
    try {
      const access = await checkKubernetesAccess(
        handle.kube,
        requiredAccessFor({ captureMode, namespace }),
        namespace,
      );
      const how = access.method === 'access-review' ? 'SelfSubjectAccessReview' : 'SelfSubjectRulesReview';
      if (access.missing.length === 0) {
        checks.push({
          check: 'kubernetes',
          cluster,
          target: apiServer,
          result: 'ok',
          detail: `all ${access.required.length} permissions of capture mode ${captureMode} (${how})`,
        });
      } else {
        checks.push({
          check: 'kubernetes',
          cluster,
          target: apiServer,
          result: 'missing',
          detail:
            `the service account may not ${access.missing.map(describeAccess).join(', ')} (${how}` +
            `${access.incomplete ? '; the server said its rules list is incomplete' : ''})`,
          missing: access.missing.map(describeAccess),
          fix: kubernetesPermissionFix(access.missing),
        });
      }
    } catch (error) {
      const base = { check: 'kubernetes', cluster, target: apiServer } as const;
      checks.push(isUnreachable(error) ? unreachableCheck(base, apiServer, error) : failed(base, error));
    }
    if (handle.configuration.capz !== undefined) {
      checks.push(...(await managementClusterChecks(cluster, handle.configuration.capz, handle)));
    }

    if (!azureToken) continue;
    let pools;
    try {
      if (scope.pool === undefined) pools = await listPoolsOfCluster(handle);
      else {
        const pool = named?.get(cluster) ?? (await namedPool(handle, scope.pool));
        pools = pool === undefined ? [] : [pool];
      }
    } catch (error) {
      checks.push(failed({ check: 'azure-role', cluster, target: 'the pools of the cluster' }, error));
      continue;
    }
    if (pools.length === 0) {
      checks.push({
        check: 'azure-role',
        cluster,
        target: 'the pools of the cluster',
        result: 'error',
        detail:
          scope.pool === undefined
            ? 'no pool found (no node belongs to a scale set): nothing to check'
            : `cluster ${cluster} has no pool ${scope.pool}`,
      });
      continue;
    }
    const needed = requiredActionsFor(actions, captureMode);
    // Resource group → the pools whose actions are needed there, per scope.
    const groups = new Map<
      string,
      { subscriptionId: string; resourceGroup: string; actions: Set<string>; pools: Set<string> }
    >();
    const need = (
      subscriptionId: string,
      resourceGroup: string,
      pool: string,
      list: readonly RequiredAction[],
    ): void => {
      const key = `${subscriptionId}/${resourceGroup}`.toLowerCase();
      const entry = groups.get(key) ?? {
        subscriptionId,
        resourceGroup,
        actions: new Set(),
        pools: new Set(),
      };
      for (const action of list) entry.actions.add(action.action);
      entry.pools.add(pool);
      groups.set(key, entry);
    };
    for (const pool of pools) {
      const configuration = handle.configuration.poolConfiguration(pool);
      need(pool.scaleSet.subscriptionId, pool.scaleSet.resourceGroup, pool.name, needed['scale-set']);
      need(
        configuration.gallery.subscriptionId,
        configuration.gallery.resourceGroup,
        pool.name,
        needed.gallery,
      );
    }
    for (const [key, group] of groups) {
      const target = `resource group ${group.resourceGroup} (pools ${[...group.pools].join(', ')})`;
      let answer = permissions.get(key);
      if (answer === undefined) {
        answer = session.composition.armPermissions.listPermissions(
          group.subscriptionId,
          group.resourceGroup,
        );
        // A rejected answer is reported where it is awaited; keep Node from calling it unhandled meanwhile.
        answer.catch(() => undefined);
        permissions.set(key, answer);
      }
      try {
        const missing = missingActions([...group.actions], await answer);
        checks.push(
          missing.length === 0
            ? {
                check: 'azure-role',
                cluster,
                target,
                result: 'ok',
                detail: `all ${group.actions.size} actions of capture mode ${captureMode}`,
              }
            : {
                check: 'azure-role',
                cluster,
                target,
                result: 'missing',
                detail: `the Azure identity may not ${missing.join(', ')}`,
                missing,
                fix:
                  `assign the product's role (infra/azure/compute-actions.json, deployed by infra/main.bicep) on ` +
                  `resource group ${group.resourceGroup}: az role assignment create --assignee <identity> ` +
                  `--role <vmss-prototype role> --scope /subscriptions/${group.subscriptionId}/resourceGroups/${group.resourceGroup}`,
              },
        );
      } catch (error) {
        checks.push(failed({ check: 'azure-role', cluster, target }, error));
      }
    }
  }
  return checks;
}

/** A refresh that would fail on a missing permission: thrown before anything is cordoned (exit 1). */
export class PermissionPreflightError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermissionPreflightError';
  }
}

/**
 * The preflight of `refresh`: the same permission checks as doctor for the clusters (and pool) it
 * covers, before its first write. Anything missing or unreadable stops it, naming what and the fix.
 * `named`: the pool the options name, per cluster, as the preconditions found it (read once).
 */
export async function requirePermissions(
  session: Session,
  options: CliOptions,
  named?: ReadonlyMap<string, ConfiguredPool>,
): Promise<void> {
  const scope = scopeOf(session, options);
  // The Azure token itself was checked by the preconditions (a clear error, within seconds).
  const problems = (await permissionChecks(session, scope, true, named)).filter(
    (check) => check.result !== 'ok',
  );
  if (problems.length === 0) return;
  throw new PermissionPreflightError(
    'refresh not started, nothing was changed: ' +
      problems
        .map(
          (check) =>
            `${check.cluster === undefined ? '' : `cluster ${check.cluster}, `}${check.target}: ${check.detail}` +
            (check.fix === undefined ? '' : ` (fix: ${check.fix})`),
        )
        .join('; ') +
      ' — `vmss-prototype doctor` lists every check',
  );
}
