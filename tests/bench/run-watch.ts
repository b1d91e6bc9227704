/**
 * What the refresh bench observes on the simulator while a run goes, in simulated time on the manual
 * clock, rather than taking it from the product's own result: when the pool's scale-set model first
 * changed, what a new instance of the pool would boot after every ARM request and model change (so the
 * moment the run's version reached `latest` for everyone), every ARM request in the order served, and how
 * long a donor's root filesystem stayed frozen (the simulated hosts' freeze records).
 */
import type { JsonObject } from '../../sim/arm/compute-state.js';
import type { WorldClock } from '../../sim/world/clock.js';
import type { World } from '../../sim/world/world.js';
import type { ArmRequest } from './arm-polls.js';

/** What a new instance of the pool boots, from the moment `atMs` on. */
interface BootSample {
  readonly atMs: number;
  /** The model names the image definition (`latest`), not one version. */
  readonly viaLatest: boolean;
  /** The gallery image version it resolves to, lower case; undefined for a marketplace image or none. */
  readonly versionId: string | undefined;
}

export interface RunWatch {
  /** The first change of the pool's scale-set model. */
  modelChangedAtMs(): number | undefined;
  /** The first moment a new instance would boot `versionId` through `latest`. */
  publishedAtMs(versionId: string): number | undefined;
  /** Every ARM request since the watch began, in the order served. */
  armRequests(): readonly ArmRequest[];
  stop(): void;
}

const VERSION_OF_DEFINITION = /\/versions\/[^/]+$/i;

/** Major.Minor.Patch compared numerically, as `latest` picks (sim/arm/compute-core.ts). */
function compareVersionNames(a: string, b: string): number {
  const [left, right] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let index = 0; index < 3; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** What `latest` of a definition resolves to: the newest Succeeded version not excluded from it. */
function latestOf(world: World, definitionId: string): string | undefined {
  const candidates = world.compute.listImageVersionRecords(definitionId).filter((version) => {
    const properties = version.properties as JsonObject & {
      provisioningState?: string;
      publishingProfile?: { excludeFromLatest?: boolean };
    };
    return (
      properties.provisioningState === 'Succeeded' && properties.publishingProfile?.excludeFromLatest !== true
    );
  });
  candidates.sort((a, b) => compareVersionNames(a.name, b.name));
  return candidates.at(-1)?.id.toLowerCase();
}

function bootOf(world: World, pool: string, atMs: number): BootSample {
  const scaleSet = world.compute.listScaleSets().find((entry) => entry.name.toLowerCase() === pool);
  const reference = scaleSet?.imageReference['id'];
  if (typeof reference !== 'string') return { atMs, viaLatest: false, versionId: undefined };
  if (VERSION_OF_DEFINITION.test(reference))
    return { atMs, viaLatest: false, versionId: reference.toLowerCase() };
  return { atMs, viaLatest: true, versionId: latestOf(world, reference) };
}

export function watchRun(world: World, clock: WorldClock, pool: string): RunWatch {
  const name = pool.toLowerCase();
  let modelChangedAt: number | undefined;
  const samples: BootSample[] = [];
  const requests: ArmRequest[] = [];
  const sample = () => {
    const next = bootOf(world, name, clock.nowMs());
    const last = samples.at(-1);
    if (last?.viaLatest !== next.viaLatest || last.versionId !== next.versionId) samples.push(next);
  };
  sample();
  const stopModel = world.compute.subscribe((event) => {
    if (event.type !== 'scale-set-model-changed' || event.scaleSet.name.toLowerCase() !== name) return;
    modelChangedAt ??= clock.nowMs();
    sample();
  });
  const stopLog = world.log.subscribe((request) => {
    if (request.api !== 'arm') return;
    requests.push({
      operation: request.operation,
      status: request.status,
      method: request.target?.method ?? 'GET',
      path: request.target?.path ?? '',
    });
    // A version published by a PATCH changes no model: look after every request.
    sample();
  });
  return {
    modelChangedAtMs: () => modelChangedAt,
    publishedAtMs(versionId) {
      const id = versionId.toLowerCase();
      return samples.find((entry) => entry.viaLatest && entry.versionId === id)?.atMs;
    },
    armRequests: () => [...requests],
    stop() {
      stopModel();
      stopLog();
    },
  };
}

/**
 * Simulated seconds the node's root filesystem stayed frozen, from the simulator's freeze records
 * (`world.hosts()`), over the freezes that began at `sinceMs` or later; one still on at `nowMs` counts up
 * to then.
 */
export function frozenSeconds(world: World, nodeName: string, sinceMs: number, nowMs: number): number {
  // Records carry whole seconds (the Kubernetes wire form).
  const since = Math.floor(sinceMs / 1000) * 1000;
  const seconds = world
    .hosts()
    .freezes.filter((freeze) => freeze.nodeName === nodeName && Date.parse(freeze.frozenAt) >= since)
    .reduce((sum, freeze) => sum + (freeze.seconds ?? (nowMs - Date.parse(freeze.frozenAt)) / 1000), 0);
  return Math.round(seconds * 10) / 10;
}
