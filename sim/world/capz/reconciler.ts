/**
 * A CAPZ-like controller for one Cluster API management cluster, on the world clock: it keeps the scale
 * sets of the MachinePools it manages as their AzureMachinePool, MachinePool and KubeadmConfig say, the
 * way cluster-api-provider-azure does (https://github.com/kubernetes-sigs/cluster-api-provider-azure):
 *
 * - the scale set model from the template (azure/services/scalesets/spec.go `existingParameters`): a
 *   different image is a model change, written whole (image, customData, the `capz-custom-data-hash`
 *   tag, the owner tags) with capacity replicas + maxSurge while a rollout is on; no model change and
 *   no scale-up: nothing is written (customData may go stale until then, as spec.go says);
 * - when it runs: on every MachinePool, AzureMachinePool or KubeadmConfig change, on the resync
 *   (main.go `--sync-period`, default 10m), and every 10 s (main.go `--debouncing-timer`) while a pool is
 *   not at rest — so a model written behind its back is written back at the next resync;
 * - the rollout (azure/scope/machinepool.go, strategies/machinepool_deployments): machines chosen by
 *   `SelectMachinesToDelete` (strategy.ts) are cordoned, drained (drain.ts) and their instances deleted;
 * - AzureMachinePoolMachines (exp/controllers/azuremachinepoolmachine_controller.go) follow instances
 *   and nodes; MachinePool and AzureMachinePool status follow the machines;
 * - a MachinePool whose AzureMachinePool has no scale set yet gets one (a canary pool: cloned from the
 *   scale set named by its `vmss-prototype.io/canary-of` label); deleting the MachinePool or the
 *   AzureMachinePool deletes the scale set (exp/controllers/azuremachinepool_controller.go reconcileDelete);
 * - CABPK's token rotation (tokens.ts).
 * Its compute calls go straight to the ComputeState: they are not the product's ARM requests (no request
 * log, no throttling budget).
 */
import type { ComputeState, InstanceInfo, JsonObject } from '../../arm/compute-state.js';
import { type ImageReferenceProblem, imageReferenceProblem } from '../../arm/image-reference-check.js';
import type { KubeObject, KubeStore } from '../../contracts.js';
import { isNodeReady, specOf, timestamp } from '../../kube/objects.js';
import type { WorldClock } from '../clock.js';
import type { ClusterWorld } from '../cluster.js';
import { nodeNameOf } from '../nodes.js';
import { bootstrapDataFor, createCanaryScaleSet } from './canary.js';
import { CapiMachines, DELETE_MACHINE_ANNOTATION } from './capi-machines.js';
import { drainPass } from './drain.js';
import type { CapzEvent, CapzEventKind } from './events.js';
import { CapzMachines } from './machines.js';
import {
  CAPZ_ROLE_TAG,
  CUSTOM_DATA_HASH_TAG,
  customDataHash,
  imageReferenceOf,
  sameImage,
} from './objects.js';
import { capzOwnerTag } from './scenario.js';
import { type ManagedCluster, scaleSetIdOf, seedManagementObjects } from './seed.js';
import { type DeletePolicy, scaledValue, selectMachinesToDelete } from './strategy.js';
import { issueToken, rotateMachinePoolTokens } from './tokens.js';

export interface CapzReconcilerOptions {
  name: string;
  management: ClusterWorld;
  managed: ManagedCluster[];
  clock: WorldClock;
  compute: ComputeState;
  location: string;
  syncPeriodSeconds: number;
  tokenTtlSeconds: number;
}

/** main.go `--debouncing-timer`: the requeue interval while a pool is changing. */
export const CAPZ_REQUEUE_SECONDS = 10;
/** How soon a watched change is reconciled. */
const WATCH_DELAY_SECONDS = 2;

interface PoolMemory {
  /** The imageReference CAPZ last wrote or found, to tell a revert from a template change. */
  lastImage: unknown;
  managed: ManagedCluster;
  scaleSetId: string;
}

export class CapzReconciler {
  readonly events: CapzEvent[] = [];
  readonly name: string;
  private readonly store: KubeStore;
  private readonly pools = new Map<string, PoolMemory>();
  private readonly draining = new Set<string>();
  /** The generation (a Secret: its data) each watched object was last seen with. */
  private readonly generations = new Map<string, string>();
  private readonly machines: CapzMachines;
  private readonly capi: CapiMachines;
  private readonly cancels: (() => void)[] = [];
  private pending: (() => void) | undefined;
  private pendingForce = false;
  private stopped = false;

  constructor(private readonly options: CapzReconcilerOptions) {
    this.name = options.name;
    this.store = options.management.store;
    for (const managed of options.managed) {
      seedManagementObjects(this.store, options.compute, managed, options.location);
    }
    this.machines = new CapzMachines(this.store, options.compute);
    this.capi = new CapiMachines(this.store);
    for (const managed of options.managed) {
      for (const amp of this.store.list('azuremachinepools', managed.namespace)) {
        const id = scaleSetIdOf(managed, amp.metadata.name);
        const info = options.compute.getScaleSet(id);
        if (info)
          this.pools.set(keyOf(managed.namespace, amp.metadata.name), {
            lastImage: info.imageReference,
            managed,
            scaleSetId: id,
          });
      }
    }
    for (const resource of ['machinepools', 'azuremachinepools', 'kubeadmconfigs', 'secrets'] as const) {
      for (const object of this.store.list(resource)) {
        const generation = resource === 'secrets' ? object.data : object.metadata.generation;
        this.generations.set(
          `${resource}/${keyOf(object.metadata.namespace ?? '', object.metadata.name)}`,
          JSON.stringify(generation),
        );
      }
    }
    this.reconcileAll(false);
    this.cancels.push(
      this.store.subscribe((event) => {
        // A client's delete-machine annotation on a Machine: CAPZ's machine controllers react to it.
        if (
          event.resource === 'machines' &&
          event.type === 'MODIFIED' &&
          event.object.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined &&
          event.object.metadata.deletionTimestamp === undefined
        ) {
          this.schedule(false);
          return;
        }
        if (!['machinepools', 'azuremachinepools', 'kubeadmconfigs', 'secrets'].includes(event.resource))
          return;
        // A spec change (a new generation), a new or deleted object: a full reconcile; a status write: none.
        const key = `${event.resource}/${keyOf(event.object.metadata.namespace ?? '', event.object.metadata.name)}`;
        const generation =
          event.resource === 'secrets' ? event.object.data : event.object.metadata.generation;
        const seen = JSON.stringify(generation);
        if (event.type === 'MODIFIED' && this.generations.get(key) === seen) return;
        if (event.type === 'DELETED') this.generations.delete(key);
        else this.generations.set(key, seen);
        this.schedule(true);
      }),
    );
    this.every(CAPZ_REQUEUE_SECONDS, 'capz requeue', () => this.reconcileAll(false));
    this.every(options.syncPeriodSeconds, 'capz resync', () => this.reconcileAll(true));
    this.every(options.tokenTtlSeconds / 3, 'cabpk token check', () => {
      for (const managed of options.managed) {
        const rotated = rotateMachinePoolTokens(
          this.store,
          managed,
          options.clock.nowMs(),
          options.tokenTtlSeconds * 1000,
        );
        for (const { config, detail } of rotated)
          this.record(managed.namespace, config, 'token-rotate', detail);
      }
    });
  }

  stop(): void {
    this.stopped = true;
    this.pending?.();
    for (const cancel of this.cancels) cancel();
  }

  private every(seconds: number, label: string, action: () => void): void {
    let cancel = (): void => undefined;
    const tick = (): void => {
      if (this.stopped) return;
      action();
      cancel = this.options.clock.after(seconds, label, tick);
    };
    cancel = this.options.clock.after(seconds, label, tick);
    this.cancels.push(() => cancel());
  }

  private schedule(force: boolean): void {
    this.pendingForce ||= force;
    if (this.pending || this.stopped) return;
    this.pending = this.options.clock.after(WATCH_DELAY_SECONDS, 'capz watch', () => {
      this.pending = undefined;
      const forced = this.pendingForce;
      this.pendingForce = false;
      this.reconcileAll(forced);
    });
  }

  private record(namespace: string, pool: string, kind: CapzEventKind, detail: string): void {
    this.events.push({
      at: timestamp(this.options.clock.nowMs()),
      managementCluster: this.name,
      namespace,
      pool,
      kind,
      detail,
    });
  }

  private managedOf(namespace: string, clusterName: unknown): ManagedCluster | undefined {
    return this.options.managed.find(
      (managed) => managed.namespace === namespace && managed.clusterName === clusterName,
    );
  }

  /** One pass over every MachinePool; `force`: also the scale set model (a watched change, the resync). */
  reconcileAll(force: boolean): void {
    if (this.stopped) return;
    const seen = new Set<string>();
    for (const namespace of new Set(this.options.managed.map((managed) => managed.namespace))) {
      for (const machinePool of this.store.list('machinepools', namespace)) {
        const managed = this.managedOf(namespace, specOf(machinePool).clusterName);
        const template = (
          specOf(machinePool).template as
            | {
                spec?: {
                  infrastructureRef?: { name?: string };
                  bootstrap?: { configRef?: { name?: string } };
                };
              }
            | undefined
        )?.spec;
        const ampName = template?.infrastructureRef?.name;
        const amp =
          ampName === undefined ? undefined : this.store.get('azuremachinepools', namespace, ampName);
        if (!managed || !amp) continue;
        seen.add(keyOf(namespace, amp.metadata.name));
        this.reconcilePool(managed, machinePool, amp, template?.bootstrap?.configRef?.name, force);
      }
    }
    for (const [key, memory] of [...this.pools]) {
      if (seen.has(key)) continue;
      this.deletePool(key, memory);
    }
  }

  /** The MachinePool or its AzureMachinePool is gone: the scale set, its machines and (with the MachinePool) the pool's other objects go. */
  private deletePool(key: string, memory: PoolMemory): void {
    const [namespace = '', name = ''] = key.split('/');
    this.pools.delete(key);
    if (!this.store.get('machinepools', namespace, name)) {
      for (const resource of ['azuremachinepools', 'kubeadmconfigs', 'secrets'] as const)
        this.store.remove(resource, namespace, name);
    }
    this.machines.removeAll(namespace, name);
    this.capi.removeAll(namespace, name);
    if (this.options.compute.getScaleSet(memory.scaleSetId)) {
      this.options.compute.deleteScaleSet(memory.scaleSetId);
      this.record(namespace, name, 'scale-set-delete', `deleted scale set ${name}`);
    }
  }

  private reconcilePool(
    managed: ManagedCluster,
    machinePool: KubeObject,
    amp: KubeObject,
    configName: string | undefined,
    force: boolean,
  ): void {
    const namespace = managed.namespace;
    const name = amp.metadata.name;
    const { compute } = this.options;
    const bootstrapData = bootstrapDataFor(this.store, namespace, configName, amp, (sourceData) =>
      issueToken(
        managed.world.store,
        `${managed.clusterName}/${name}`,
        sourceData,
        this.options.clock.nowMs(),
        this.options.tokenTtlSeconds * 1000,
      ),
    );
    const image = imageReferenceOf((specOf(amp).template as { image?: unknown } | undefined)?.image);
    if (bootstrapData === undefined || image === undefined) return;
    // CAPZ's ARM PUT of a model naming an image that is not there fails, and writes nothing
    // (scalesets.go `Reconcile`): no scale set for a new pool, no model change, no surge.
    const problem = imageReferenceProblem(compute, image);
    this.machines.writePutCondition(
      amp,
      problem === undefined ? undefined : `${problem.code}: ${problem.message}`,
      new Date(this.options.clock.nowMs()).toISOString(),
    );
    if (problem !== undefined) this.recordPutFailure(namespace, name, problem);
    const replicas =
      typeof specOf(machinePool).replicas === 'number' ? (specOf(machinePool).replicas as number) : 1;
    const rolling =
      (specOf(amp).strategy as { rollingUpdate?: Record<string, unknown> } | undefined)?.rollingUpdate ?? {};
    const maxSurge = (rolling.maxSurge as number | string | undefined) ?? 1;
    const maxUnavailable = (rolling.maxUnavailable as number | string | undefined) ?? 0;
    const policy = (rolling.deletePolicy as DeletePolicy | undefined) ?? 'Oldest';
    const key = keyOf(namespace, name);
    const scaleSetId = scaleSetIdOf(managed, name);
    if (!compute.getScaleSet(scaleSetId)) {
      if (problem !== undefined) return;
      const created = createCanaryScaleSet(this.store, compute, managed, amp, image, bootstrapData, replicas);
      if (created === undefined) return;
      this.record(namespace, name, 'scale-set-create', created);
      this.pools.set(key, { lastImage: image, managed, scaleSetId });
      return;
    }
    if (!this.pools.has(key))
      this.pools.set(key, {
        lastImage: compute.getScaleSet(scaleSetId)?.imageReference,
        managed,
        scaleSetId,
      });
    const instances = compute.listInstances(scaleSetId);
    const latest = (instance: InstanceInfo): boolean => sameImage(instance.imageReference, image);
    this.capi.propagateDeleteAnnotations(namespace, name);
    const annotated = this.capi.deleteAnnotated(namespace, name);
    const atRest =
      annotated.size === 0 &&
      instances.length === replicas &&
      instances.every((instance) => latest(instance) && this.ready(managed, instance)) &&
      !instances.some((instance) => this.draining.has(instance.id.toLowerCase()));
    if ((force || !atRest) && problem === undefined)
      this.writeModel(managed, name, scaleSetId, image, bootstrapData, replicas, maxSurge, force);
    const views = this.machines.sync(
      managed,
      amp,
      (instance) => this.ready(managed, instance),
      latest,
      this.draining,
      annotated,
    );
    if (!atRest) {
      const rollout = views.some((view) => !view.latestModelApplied);
      for (const view of selectMachinesToDelete(views, replicas, maxUnavailable, policy, rollout)) {
        const instance = compute
          .listInstances(scaleSetId)
          .find((candidate) => `${name}-${candidate.instanceId}` === view.name);
        if (!instance) continue;
        this.draining.add(instance.id.toLowerCase());
        this.capi.markDeleting(namespace, view.name, this.options.clock.nowMs());
        this.record(
          namespace,
          name,
          'machine-delete',
          `deleting machine ${view.name} (${view.latestModelApplied ? 'latest model' : 'old model'}, ${view.ready ? 'ready' : 'not ready'})`,
        );
      }
      this.drainAll(managed, name, scaleSetId);
      this.machines.sync(
        managed,
        amp,
        (instance) => this.ready(managed, instance),
        latest,
        this.draining,
        this.capi.deleteAnnotated(namespace, name),
      );
    }
    this.capi.sync(namespace, managed.clusterName, machinePool, name);
    this.machines.writeStatus(managed, machinePool, amp, replicas, compute.getScaleSet(scaleSetId));
  }

  /** A failed PUT, recorded once per error (CAPZ retries it at every reconcile). */
  private recordPutFailure(namespace: string, pool: string, problem: ImageReferenceProblem): void {
    const detail = `scale set PUT failed: ${problem.status} ${problem.code}: ${problem.message}`;
    const last = this.events.findLast((event) => event.namespace === namespace && event.pool === pool);
    if (last?.kind === 'model-write-failed' && last.detail === detail) return;
    this.record(namespace, pool, 'model-write-failed', detail);
  }

  private ready(managed: ManagedCluster, instance: InstanceInfo): boolean {
    const node = managed.world.store.get('nodes', undefined, nodeNameOf(instance));
    return node !== undefined && isNodeReady(node) && instance.provisioningState === 'Succeeded';
  }

  private drainAll(managed: ManagedCluster, pool: string, scaleSetId: string): void {
    for (const instance of this.options.compute.listInstances(scaleSetId)) {
      const key = instance.id.toLowerCase();
      if (!this.draining.has(key)) continue;
      const result = drainPass(managed.world.store, managed.world.controllers, nodeNameOf(instance));
      if (result.kind === 'blocked') {
        const last = this.events.at(-1);
        if (last?.kind !== 'drain-blocked' || last.detail !== result.detail)
          this.record(managed.namespace, pool, 'drain-blocked', result.detail);
      }
      if (result.kind !== 'drained') continue;
      this.draining.delete(key);
      this.capi.deleteInfrastructure(
        managed.namespace,
        `${pool}-${instance.instanceId}`,
        this.options.clock.nowMs(),
      );
      this.options.compute.deleteInstance(instance.id);
      this.record(
        managed.namespace,
        pool,
        'instance-delete',
        `deleted instance ${instance.instanceId} (node ${nodeNameOf(instance)})`,
      );
    }
  }

  /** spec.go `existingParameters`: surge while not updated; write on a model change or a scale-up only. */
  private writeModel(
    managed: ManagedCluster,
    pool: string,
    scaleSetId: string,
    image: JsonObject,
    bootstrapData: string,
    replicas: number,
    maxSurgeValue: number | string,
    force: boolean,
  ): void {
    const { compute } = this.options;
    const scaleSet = compute.getScaleSet(scaleSetId);
    const model = compute.getScaleSetModel(scaleSetId);
    if (!scaleSet || !model) return;
    const instances = compute.listInstances(scaleSetId);
    const hasModelChanges = !sameImage(scaleSet.imageReference, image);
    // HasEnoughLatestModelOrNotMixedModel (azure/types.go): instances running the scale set's image.
    const latest = instances.filter((instance) =>
      sameImage(instance.imageReference, scaleSet.imageReference),
    ).length;
    const updated = latest === instances.length || latest === scaleSet.capacity;
    const surge = scaledValue(maxSurgeValue, replicas, true);
    const capacity = surge > 0 && (hasModelChanges || !updated) ? replicas + surge : replicas;
    if (capacity <= scaleSet.capacity && !hasModelChanges) return;
    const memory = this.pools.get(keyOf(managed.namespace, pool));
    const before = JSON.stringify(scaleSet.imageReference);
    // A model written behind CAPZ's back waits for the resync or an object change (not the requeue).
    if (!force && memory !== undefined && !sameImage(memory.lastImage, scaleSet.imageReference)) return;
    const hash = customDataHash(bootstrapData);
    const tags = {
      ...scaleSet.tags,
      [capzOwnerTag(managed.clusterName)]: 'owned',
      [CAPZ_ROLE_TAG]: 'node',
      Name: pool,
      [CUSTOM_DATA_HASH_TAG]: hash,
    };
    if (hasModelChanges || scaleSet.tags[CUSTOM_DATA_HASH_TAG] !== hash) {
      const profile = model.virtualMachineProfile as { storageProfile: JsonObject; osProfile: JsonObject };
      profile.storageProfile.imageReference = image;
      profile.osProfile.customData = Buffer.from(bootstrapData).toString('base64');
    }
    compute.replaceScaleSet(scaleSetId, { properties: model, tags, capacity });
    if (hasModelChanges) {
      const reverted = memory !== undefined && !sameImage(memory.lastImage, scaleSet.imageReference);
      this.record(
        managed.namespace,
        pool,
        reverted ? 'revert' : 'model-write',
        `${reverted ? 'reverted a model written outside CAPZ: ' : ''}imageReference ${before} → ${JSON.stringify(image)}, capacity ${scaleSet.capacity} → ${capacity}`,
      );
    } else {
      this.record(managed.namespace, pool, 'scale', `capacity ${scaleSet.capacity} → ${capacity}`);
    }
    if (memory) memory.lastImage = image;
  }
}

function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
