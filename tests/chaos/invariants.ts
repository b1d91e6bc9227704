/**
 * The invariants every refresh must leave behind, whatever failed on the way: checked from
 * the simulator's own records against a snapshot of the world taken before the run, so a run that
 * reports success while leaving a node cordoned (or fails leaving a snapshot behind) is caught.
 */
import type { WorldCheck } from '../../cli/demo-checks.js';
import { CAPTURE_RUN_ANNOTATION } from '../../shared/domain/cluster-node.js';
import { SCALE_DOWN_DISABLED_ANNOTATION } from '../../shared/domain/cluster-node.js';
import type { RunningSimulator } from '../../sim/index.js';

export type { WorldCheck } from '../../cli/demo-checks.js';

interface NodeObject {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { unschedulable?: boolean };
}

interface NodeState {
  readonly cluster: string;
  readonly cordoned: boolean;
  readonly annotations: Readonly<Record<string, string>>;
}

interface ScaleSetState {
  readonly name: string;
  readonly imageReference: string;
  readonly customData: string | undefined;
  readonly extensions: readonly string[];
}

/** What the invariants compare against: taken before the run starts. */
export interface WorldBefore {
  readonly nodes: ReadonlyMap<string, NodeState>;
  readonly scaleSets: ReadonlyMap<string, ScaleSetState>;
  readonly versionIds: ReadonlySet<string>;
  readonly snapshotIds: ReadonlySet<string>;
  /** The VMs that were running before the run, by `<scale set id>|<instance id>`. */
  readonly runningVms: ReadonlySet<string>;
}

/** The prep pod's name prefix (refresh-pool.orchestration.ts prepPodNameFor). */
const PREP_POD_PREFIX = 'vmssp-prep-';

function nodesOf(running: RunningSimulator): Map<string, NodeState> {
  const nodes = new Map<string, NodeState>();
  for (const [cluster, handle] of running.world.clusters) {
    for (const object of handle.world.store.list('nodes')) {
      const node = object as unknown as NodeObject;
      nodes.set(node.metadata.name, {
        cluster,
        cordoned: node.spec?.unschedulable === true,
        annotations: { ...node.metadata.annotations },
      });
    }
  }
  return nodes;
}

function allVersionIds(running: RunningSimulator): string[] {
  const compute = running.world.compute;
  const ids: string[] = [];
  const groups = new Set(compute.listScaleSets().map((s) => `${s.subscriptionId}\n${s.resourceGroup}`));
  for (const group of groups) {
    const [subscriptionId = '', resourceGroup = ''] = group.split('\n');
    for (const gallery of compute.listGalleries(subscriptionId, resourceGroup)) {
      for (const definition of compute.listImageDefinitions(gallery.id)) {
        ids.push(...compute.listImageVersions(definition.id).map((version) => version.id.toLowerCase()));
      }
    }
  }
  return ids;
}

export function takeBefore(running: RunningSimulator): WorldBefore {
  const compute = running.world.compute;
  return {
    nodes: nodesOf(running),
    scaleSets: new Map(
      compute.listScaleSets().map((scaleSet) => [
        scaleSet.id.toLowerCase(),
        {
          name: scaleSet.name,
          imageReference: JSON.stringify(scaleSet.imageReference),
          customData: scaleSet.customData,
          extensions: scaleSet.extensions.map((extension) => extension.name).sort(),
        },
      ]),
    ),
    versionIds: new Set(allVersionIds(running)),
    snapshotIds: new Set(compute.listSnapshots().map((snapshot) => snapshot.id.toLowerCase())),
    runningVms: new Set(
      vmPowerStates(running)
        .filter(([, state]) => state === 'running')
        .map(([key]) => key),
    ),
  };
}

/** Every scale-set VM with its power state, keyed `<scale set id>|<instance id>`. */
function vmPowerStates(running: RunningSimulator): [string, string][] {
  const compute = running.world.compute;
  return compute
    .listScaleSets()
    .flatMap((scaleSet) =>
      compute
        .listInstances(scaleSet.id)
        .map((vm): [string, string] => [`${scaleSet.id.toLowerCase()}|${vm.instanceId}`, vm.powerState]),
    );
}

function sameAnnotations(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((key) => a[key] !== b[key]).sort();
}

/**
 * Checks the world after a run (success or failure). `runsPerPool` bounds the new image versions of
 * one definition (one per run).
 */
export function checkInvariants(
  running: RunningSimulator,
  before: WorldBefore,
  options: { readonly runsPerPool?: number } = {},
): WorldCheck[] {
  const checks: WorldCheck[] = [];
  const check = (name: string, ok: boolean, detail?: string): void => {
    checks.push(detail === undefined || ok ? { name, ok } : { name, ok, detail });
  };
  const compute = running.world.compute;

  // Nodes: nothing of ours left, and every node that still exists is as it was.
  const after = nodesOf(running);
  const held = [...after].filter(([, node]) => node.annotations[CAPTURE_RUN_ANNOTATION] !== undefined);
  check(
    `no node annotated ${CAPTURE_RUN_ANNOTATION}`,
    held.length === 0,
    held.map(([name]) => name).join(', '),
  );
  const scaleDown = [...after].filter(
    ([name, node]) =>
      node.annotations[SCALE_DOWN_DISABLED_ANNOTATION] !== undefined &&
      before.nodes.get(name)?.annotations[SCALE_DOWN_DISABLED_ANNOTATION] === undefined,
  );
  check(
    'no scale-down-disabled annotation added by us',
    scaleDown.length === 0,
    scaleDown.map(([name]) => name).join(', '),
  );
  const cordonChanged = [...after].filter(([name, node]) => {
    const prior = before.nodes.get(name);
    return prior !== undefined && prior.cordoned !== node.cordoned;
  });
  check(
    'every node cordoned exactly as before (none cordoned by us, admin cordons kept)',
    cordonChanged.length === 0,
    cordonChanged
      .map(([name, node]) => `${name} now ${node.cordoned ? 'cordoned' : 'uncordoned'}`)
      .join(', '),
  );
  const annotationChanged = [...after].flatMap(([name, node]) => {
    const prior = before.nodes.get(name);
    if (prior === undefined) return [];
    const keys = sameAnnotations(prior.annotations, node.annotations);
    return keys.length === 0 ? [] : [`${name}: ${keys.join(', ')}`];
  });
  check(
    'every node annotated exactly as before',
    annotationChanged.length === 0,
    annotationChanged.join('; '),
  );

  // VMs: none that ran before is left stopped (one that was scaled in meanwhile is gone, not stopped).
  const stopped = vmPowerStates(running).filter(
    ([key, state]) => before.runningVms.has(key) && state !== 'running' && state !== 'starting',
  );
  check(
    'no VM that was running is left stopped',
    stopped.length === 0,
    stopped.map(([key, state]) => `${key.split('/').at(-1) ?? key} ${state}`).join(', '),
  );

  // Image versions: at most one new per definition and run, none left Failed or in flight.
  const runsPerPool = options.runsPerPool ?? 1;
  const newVersions = allVersionIds(running).filter((id) => !before.versionIds.has(id));
  const perDefinition = new Map<string, number>();
  for (const id of newVersions) {
    const definition = id.replace(/\/versions\/[^/]+$/, '');
    perDefinition.set(definition, (perDefinition.get(definition) ?? 0) + 1);
  }
  const tooMany = [...perDefinition].filter(([, count]) => count > runsPerPool);
  check(
    `at most ${runsPerPool} new image version(s) per image definition`,
    tooMany.length === 0,
    tooMany.map(([definition, count]) => `${definition.split('/').at(-1) ?? ''}: ${count}`).join(', '),
  );
  const notSucceeded = newVersions
    .map((id) => compute.getImageVersion(id))
    .filter((version) => version !== undefined && version.provisioningState !== 'Succeeded');
  check(
    'no new image version left Failed or unfinished',
    notSucceeded.length === 0,
    notSucceeded.map((version) => `${version?.name} ${version?.provisioningState}`).join(', '),
  );

  // Snapshots: every one the run created is gone, or ARM accepted its deletion (the run does not wait).
  const orphans = compute
    .listSnapshots()
    .filter((s) => !before.snapshotIds.has(s.id.toLowerCase()) && s.provisioningState !== 'Deleting');
  check('no orphan snapshot', orphans.length === 0, orphans.map((s) => s.name).join(', '));

  // Scale sets: the model is unchanged, or points at a definition/version that can serve instances;
  // bootstrap extensions and customData go only together with a new image.
  for (const scaleSet of compute.listScaleSets()) {
    const prior = before.scaleSets.get(scaleSet.id.toLowerCase());
    if (prior === undefined) continue;
    const reference = JSON.stringify(scaleSet.imageReference);
    const extensions = scaleSet.extensions.map((extension) => extension.name).sort();
    const where = `scale set ${scaleSet.name}`;
    if (reference === prior.imageReference) {
      check(
        `${where}: model unchanged, extensions and customData intact`,
        JSON.stringify(extensions) === JSON.stringify(prior.extensions) &&
          scaleSet.customData === prior.customData,
        `extensions ${extensions.join(', ')} (before ${prior.extensions.join(', ')})`,
      );
      continue;
    }
    const id = typeof scaleSet.imageReference['id'] === 'string' ? scaleSet.imageReference['id'] : '';
    const isVersion = /\/versions\/[^/]+$/i.test(id);
    const usable = isVersion
      ? compute.getImageVersion(id)?.provisioningState === 'Succeeded'
      : compute
          .listImageVersions(id)
          .some((version) => version.provisioningState === 'Succeeded' && !version.excludeFromLatest);
    check(
      `${where}: model points at a ${isVersion ? 'Succeeded version' : 'definition with a Succeeded version'}`,
      usable && scaleSet.provisioningState === 'Succeeded',
      `${id || reference} (${scaleSet.provisioningState})`,
    );
  }

  // The prep pod is gone, from every cluster.
  const prepPods = [...running.world.clusters.values()].flatMap((handle) =>
    handle.world.store
      .list('pods')
      .map((pod) => pod.metadata.name)
      .filter((name) => name.startsWith(PREP_POD_PREFIX)),
  );
  check('no prep pod left', prepPods.length === 0, prepPods.join(', '));
  return checks;
}
