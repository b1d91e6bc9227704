/**
 * The runs a PoolImagePolicy starts (docs/pool-policy.md), for the explorer: the retirement timer's tick
 * acting on `rollbackTo` and on `retire`, with its status writes. The setup installs the CRD and the
 * policy with the machine's kubectl, as an administrator does; after unattended recovery (which includes
 * the next retirement tick) the action must have been acted on once and recorded as ended — never left
 * Running — and, when Done, its effect must be there.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { WorldCheck } from '../../cli/demo-checks.js';
import { IMAGE_VERSION_LABEL } from '../../shared/domain/generations.js';
import type { ClusterSettingsData, Harness, HarnessOptions } from '../e2e/harness.js';
import { nodeOf, POOL2 } from '../e2e/harness.js';

/** What a setup gets (space.ts's SetupWorld, which lists these variants: no import back to it). */
interface SetupWorld {
  readonly harness: Harness;
  readonly pool: string;
  run(name: string, input: Record<string, unknown>, instanceId: string): Promise<string>;
}

/** A variant of the space (space.ts's Variant, the fields these use). */
interface PolicyVariant {
  readonly name: string;
  readonly description: string;
  readonly harness: HarnessOptions;
  readonly pool: string;
  readonly run: {
    readonly orchestration: string;
    readonly input: (pool: string, seed: string) => Record<string, unknown>;
    readonly instanceId: (pool: string) => string;
  };
  readonly setup: (world: SetupWorld) => Promise<void>;
  readonly checks: (harness: Harness) => Promise<WorldCheck[]>;
}

const CRD = fileURLToPath(new URL('../../../infra/kubernetes/pool-image-policy.crd.yaml', import.meta.url));

function kubectl(harness: Harness, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'kubectl',
      ['--kubeconfig', harness.sim.running.kubeconfigPath, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)),
    );
  });
}

/** The CRD and the pool's policy, applied with kubectl; `spec` may name the setup's versions. */
async function applyPolicy(
  world: SetupWorld,
  spec: (versions: readonly string[]) => Record<string, unknown>,
): Promise<void> {
  await kubectl(world.harness, 'apply', '-f', CRD);
  await kubectl(
    world.harness,
    'wait',
    '--for=condition=Established',
    '--timeout=30s',
    'crd/poolimagepolicies.vmss-prototype.io',
  );
  const file = join(dirname(world.harness.sim.running.kubeconfigPath), `policy-${world.pool}.json`);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'vmss-prototype.io/v1alpha1',
      kind: 'PoolImagePolicy',
      metadata: { name: world.pool },
      spec: spec(versionsOf(world.harness, world.pool)),
    }),
  );
  await kubectl(world.harness, 'apply', '-f', file);
}

/** The pool's gallery versions, oldest first. */
function versionsOf(harness: Harness, pool: string): string[] {
  const compute = harness.sim.running.world.compute;
  const names: string[] = [];
  for (const scaleSet of compute.listScaleSets()) {
    for (const gallery of compute.listGalleries(scaleSet.subscriptionId, scaleSet.resourceGroup)) {
      for (const definition of compute.listImageDefinitions(gallery.id)) {
        if (!definition.id.toLowerCase().endsWith(`-${pool}`)) continue;
        names.push(
          ...compute.listImageVersions(definition.id).map((version) => version.id.split('/').at(-1) ?? ''),
        );
      }
    }
  }
  return [...new Set(names)].sort();
}

async function twoVersions(world: SetupWorld): Promise<void> {
  for (const [index, node] of [1, 2].entries()) {
    const end = await world.run(
      'refreshPool',
      {
        cluster: 'prod',
        pool: world.pool,
        trigger: 'explore-setup',
        runSeed: `version-${index}`,
        node: nodeOf(world.pool, node),
      },
      `refresh:prod:${world.pool}`,
    );
    if (end !== 'Completed refreshed') throw new Error(`setup: refresh ${index + 1} ended ${end}`);
    world.harness.sim.running.clock.advanceBy(60 * 60);
  }
}

interface PolicyObject {
  readonly metadata: { readonly generation?: number };
  readonly spec?: { readonly rollbackTo?: string };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly actions?: Record<
      string,
      { readonly target: string; readonly state: string; readonly message?: string }
    >;
  };
}

/** After recovery: the action ended (never left Running), its effect is there when Done, the status is current. */
function policyChecks(kind: 'rollback' | 'retire', target: (object: PolicyObject) => string) {
  return async (harness: Harness): Promise<WorldCheck[]> => {
    const object = JSON.parse(
      await kubectl(harness, 'get', 'poolimagepolicy', POOL2, '-o', 'json'),
    ) as PolicyObject;
    const record = object.status?.actions?.[kind];
    const wanted = target(object);
    const checks: WorldCheck[] = [];
    const check = (name: string, ok: boolean, detail: string): void => {
      checks.push(ok ? { name, ok } : { name, ok, detail });
    };
    check(
      `policy ${kind}: recorded as ended for ${wanted}`,
      record?.target === wanted && (record.state === 'Done' || record.state === 'Failed'),
      JSON.stringify(record ?? null),
    );
    check(
      'policy status describes the current spec',
      object.status?.observedGeneration === object.metadata.generation,
      `observedGeneration ${object.status?.observedGeneration ?? 'none'}, generation ${object.metadata.generation ?? '?'}`,
    );
    if (record?.state === 'Done' && kind === 'retire') {
      const left = harness.sim.running.world
        .cluster('prod')
        .world.store.list('nodes')
        .filter(
          (node) =>
            node.metadata.name.startsWith(POOL2) && node.metadata.labels?.[IMAGE_VERSION_LABEL] === wanted,
        );
      // Done: none left to take; a node a mark keeps, or whose drain was given back, is named in the record.
      const unnamed = left.filter((node) => !(record.message ?? '').includes(node.metadata.name));
      check(
        'policy retire Done: every node of the generation left is named as kept or given back',
        unnamed.length === 0,
        `${unnamed.map((n) => n.metadata.name).join(', ')} (record: ${record.message ?? ''})`,
      );
    }
    if (record?.state === 'Done' && kind === 'rollback') {
      const scaleSet = harness.sim.running.world.compute
        .listScaleSets()
        .find((entry) => entry.name === POOL2);
      const id = JSON.stringify(scaleSet?.imageReference ?? {});
      const excluded = versionsOf(harness, POOL2).filter((name) => name > wanted);
      check(
        'policy rollback Done: the model is not on a newer version',
        !excluded.some((name) => id.includes(name)),
        id,
      );
    }
    const events = (
      JSON.parse(
        await kubectl(
          harness,
          'get',
          'events',
          '-n',
          'default',
          '--field-selector',
          `involvedObject.name=${POOL2}`,
          '-o',
          'json',
        ),
      ) as { items: { reason: string; message: string }[] }
    ).items.filter((event) => ['RolledBack', 'Retired', 'ActionFailed'].includes(event.reason));
    check(
      'policy action: one Event for its end',
      events.length <= 1,
      events.map((event) => `${event.reason} (${event.message})`).join('; '),
    );
    return checks;
  };
}

function drainSettings(cluster: ClusterSettingsData): void {
  cluster.capture = { ...cluster.capture, mode: 'drain-and-stop' };
  cluster['promotion'] = { canary: { enabled: false } };
  cluster.history = 2;
}

const TICK = {
  orchestration: 'retireCluster',
  input: (_pool: string, seed: string) => ({ cluster: 'prod', trigger: 'explore', runSeed: seed }),
  instanceId: () => 'retire:prod',
};

export const POLICY_VARIANTS: readonly PolicyVariant[] = [
  {
    name: 'policy rollbackTo',
    description:
      "the retirement timer's tick acting on a PoolImagePolicy's rollbackTo, recorded in its status",
    harness: { clock: 'manual', settings: drainSettings },
    pool: POOL2,
    run: TICK,
    setup: async (world) => {
      await twoVersions(world);
      await applyPolicy(world, (versions) => ({ rollbackTo: versions[0] ?? '' }));
    },
    // The target as the policy asks it: the world's versions may be gone (a definition deleted).
    checks: policyChecks('rollback', (object) => object.spec?.rollbackTo ?? ''),
  },
  {
    name: 'policy retire',
    description: "the retirement timer's tick acting on a PoolImagePolicy's retire of the original nodes",
    harness: { clock: 'manual', settings: drainSettings },
    pool: POOL2,
    run: TICK,
    setup: async (world) => {
      await twoVersions(world);
      await applyPolicy(world, () => ({ retirement: { budget: '100%' }, retire: { generation: 'unknown' } }));
    },
    checks: policyChecks('retire', () => 'unknown'),
  },
];
