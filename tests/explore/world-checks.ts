/**
 * The explorer's invariants beyond the chaos suite's (tests/chaos/invariants.ts): what a canary, a live
 * capture and the model may never leave behind once unattended recovery is over.
 */
import type { WorldCheck } from '../../cli/demo-checks.js';
import { CANARY_TAG_PREFIX } from '../../shared/domain/canary-record.js';
import { CANARY_OF_LABEL } from '../../shared/domain/cluster-api-labels.js';
import { LEASE_ANNOTATIONS } from '../../shared/domain/ownership.js';
import { STOP_TAG_PREFIX } from '../../shared/domain/stop-record.js';
import type { RunningSimulator } from '../../sim/index.js';
import { liveCaptureLeftovers } from '../e2e/live-checks.js';

/** What the explorer compares against beyond the chaos snapshot: taken before the run. */
export interface ExploreBefore {
  /** Every scale-set instance before the run, `<scale set id>|<instance id>`. */
  readonly instances: ReadonlySet<string>;
  /** Each scale set's capacity before the run, by lower-cased id: a run (a retirement, a kept canary) keeps it. */
  readonly capacities: ReadonlyMap<string, number>;
  /** Each scale set's image reference before the run (JSON), by lower-cased id. */
  readonly models: ReadonlyMap<string, string>;
  /**
   * The kubelet certificate and machine-id on the OS disk of every VM of a kubeadm pool, by VM id: no run
   * may change them (only a copy of a kubeadm disk is ever scrubbed; the donor could not rejoin).
   */
  readonly kubeadmIdentities: ReadonlyMap<string, string>;
  /** Each AzureMachinePool's template image before the run (JSON), by `<cluster>/<namespace>/<name>`. */
  readonly capzTemplates: ReadonlyMap<string, string>;
}

/** What a run may leave in an AzureMachinePool's template: what was there, or a published version of ours. */
interface TemplateView {
  readonly key: string;
  readonly image: string;
  readonly canaryOf?: string;
}

/** The AzureMachinePools of every simulated Cluster API management cluster. */
function azureMachinePools(running: RunningSimulator): TemplateView[] {
  return [...running.world.clusters.values()]
    .filter((handle) => handle.world.spec.clusterApi !== undefined)
    .flatMap((handle) =>
      handle.world.store.list('azuremachinepools').map((object) => {
        const amp = object as {
          metadata: { name: string; namespace?: string; labels?: Record<string, string> };
          spec?: { template?: { image?: unknown } };
        };
        const canaryOf = amp.metadata.labels?.[CANARY_OF_LABEL];
        return {
          key: `${handle.world.spec.name}/${amp.metadata.namespace ?? ''}/${amp.metadata.name}`,
          image: JSON.stringify(amp.spec?.template?.image ?? null),
          ...(canaryOf === undefined ? {} : { canaryOf }),
        };
      }),
    );
}

/** The gallery version id a CAPZ image object names (`computeGallery` with its group, or `id`). */
function versionIdOfTemplate(image: string): string {
  const parsed = JSON.parse(image) as {
    id?: string;
    computeGallery?: {
      gallery: string;
      name: string;
      version: string;
      subscriptionID?: string;
      resourceGroup?: string;
    };
  } | null;
  if (parsed?.id !== undefined) return parsed.id;
  const gallery = parsed?.computeGallery;
  if (gallery === undefined) return '';
  return (
    `/subscriptions/${gallery.subscriptionID ?? ''}/resourceGroups/${gallery.resourceGroup ?? ''}` +
    `/providers/Microsoft.Compute/galleries/${gallery.gallery}/images/${gallery.name}/versions/${gallery.version}`
  );
}

const KUBELET_CERT = '/var/lib/kubelet/pki/kubelet-client-current.pem';

/** `<kubelet certificate>|<machine-id>` of each VM whose disk holds a kubeadm kubelet certificate. */
function kubeadmIdentities(running: RunningSimulator): Map<string, string> {
  const compute = running.world.compute;
  const identities = new Map<string, string>();
  for (const scaleSet of compute.listScaleSets()) {
    for (const vm of compute.listInstances(scaleSet.id)) {
      const files = vm.osDiskId === undefined ? undefined : compute.getDiskContent(vm.osDiskId)?.files;
      const certificate = files?.[KUBELET_CERT];
      if (certificate !== undefined)
        identities.set(vm.vmId, `${certificate}|${files?.['/etc/machine-id'] ?? ''}`);
    }
  }
  return identities;
}

function instanceKeys(running: RunningSimulator): string[] {
  const compute = running.world.compute;
  return compute
    .listScaleSets()
    .flatMap((scaleSet) =>
      compute.listInstances(scaleSet.id).map((vm) => `${scaleSet.id.toLowerCase()}|${vm.instanceId}`),
    );
}

export function takeExploreBefore(running: RunningSimulator): ExploreBefore {
  return {
    instances: new Set(instanceKeys(running)),
    capacities: new Map(
      running.world.compute.listScaleSets().map((scaleSet) => [scaleSet.id.toLowerCase(), scaleSet.capacity]),
    ),
    models: new Map(
      running.world.compute
        .listScaleSets()
        .map((scaleSet) => [scaleSet.id.toLowerCase(), JSON.stringify(scaleSet.imageReference)]),
    ),
    kubeadmIdentities: kubeadmIdentities(running),
    capzTemplates: new Map(azureMachinePools(running).map((view) => [view.key, view.image])),
  };
}

/** Published: a Succeeded version that `latest` may pick (a hidden one is under test or rejected). */
function isPublished(running: RunningSimulator, versionId: string): boolean {
  const version = running.world.compute.getImageVersion(versionId);
  return version !== undefined && version.provisioningState === 'Succeeded' && !version.excludeFromLatest;
}

/**
 * `outsideAdded`: instances an outsider (an autoscaler, an admin) added to a scale set during the run, by
 * lower-cased id — the pool's demand grew by as many, and a run must leave them (its own changes net zero).
 */
export function checkExploreInvariants(
  running: RunningSimulator,
  before: ExploreBefore,
  outsideAdded: ReadonlyMap<string, number> = new Map(),
): WorldCheck[] {
  const checks: WorldCheck[] = [];
  const check = (name: string, ok: boolean, detail: string): void => {
    checks.push(ok ? { name, ok } : { name, ok, detail });
  };
  const compute = running.world.compute;
  for (const scaleSet of compute.listScaleSets()) {
    const where = `scale set ${scaleSet.name}`;
    const reference = JSON.stringify(scaleSet.imageReference);
    const id = typeof scaleSet.imageReference['id'] === 'string' ? scaleSet.imageReference['id'] : '';
    const pinned = /\/versions\/[^/]+$/i.test(id);
    check(
      `${where}: model on a published version or the one it had before`,
      reference === before.models.get(scaleSet.id.toLowerCase()) || !pinned || isPublished(running, id),
      `pinned to ${id.split('/').at(-1) ?? id}, which is not published`,
    );
    const capacityBefore = before.capacities.get(scaleSet.id.toLowerCase());
    const added = outsideAdded.get(scaleSet.id.toLowerCase()) ?? 0;
    // An instance ARM is deleting is given back: it leaves the capacity when the deletion ends.
    const deleting = compute
      .listInstances(scaleSet.id)
      .filter((vm) => vm.provisioningState === 'Deleting').length;
    const capacity = scaleSet.capacity - deleting;
    check(
      `${where}: the pool keeps its size`,
      capacityBefore === undefined || capacity === capacityBefore + added,
      `capacity ${capacity}${deleting === 0 ? '' : ` (${deleting} more being deleted)`}, was ${capacityBefore ?? '?'}` +
        (added === 0 ? '' : ` and an outsider added ${added} during the run`),
    );
    const canaryTags = Object.keys(scaleSet.tags).filter((key) => key.startsWith(CANARY_TAG_PREFIX));
    check(`${where}: no canary record left`, canaryTags.length === 0, canaryTags.join(', '));
    const stopTags = Object.keys(scaleSet.tags).filter((key) =>
      key.toLowerCase().startsWith(STOP_TAG_PREFIX),
    );
    check(`${where}: no stopped-VM record left`, stopTags.length === 0, stopTags.join(', '));
    const onUnpublished = compute
      .listInstances(scaleSet.id)
      .filter((vm) => !before.instances.has(`${scaleSet.id.toLowerCase()}|${vm.instanceId}`))
      .filter((vm) => vm.provisioningState !== 'Deleting')
      .filter((vm) => {
        const image = typeof vm.imageReference['id'] === 'string' ? vm.imageReference['id'] : '';
        return /\/versions\/[^/]+$/i.test(image) && !isPublished(running, image);
      });
    check(
      `${where}: no instance added on an unpublished version (a canary) left`,
      onUnpublished.length === 0,
      onUnpublished.map((vm) => vm.name).join(', '),
    );
    const live = liveCaptureLeftovers(running, {
      id: scaleSet.id,
      name: scaleSet.name,
      subscriptionId: scaleSet.subscriptionId,
      resourceGroup: scaleSet.resourceGroup,
    });
    check(`${where}: nothing of a live capture left`, live.length === 0, live.join('; '));
  }
  // A run's temporary canary scale set (docs/design.md#canary) goes after its verdict, or with the reaper.
  const canaryScaleSets = compute
    .listScaleSets()
    .filter((scaleSet) => scaleSet.tags['vmss-prototype.purpose'] === 'canary-scale-set');
  check(
    'no canary scale set left',
    canaryScaleSets.length === 0,
    canaryScaleSets.map((scaleSet) => scaleSet.name).join(', '),
  );
  const identitiesNow = kubeadmIdentities(running);
  const changed = [...before.kubeadmIdentities].filter(([vmId, identity]) => {
    const now = identitiesNow.get(vmId);
    // A VM deleted since (scaled in) keeps nothing to compare; one that lost its certificate changed.
    const exists = compute
      .listScaleSets()
      .some((scaleSet) => compute.listInstances(scaleSet.id).some((vm) => vm.vmId === vmId));
    return exists && now !== identity;
  });
  check(
    'kubeadm VMs keep their kubelet certificate and machine-id',
    changed.length === 0,
    changed.map(([vmId]) => vmId).join(', '),
  );
  for (const view of azureMachinePools(running)) {
    check(
      `${view.key}: no canary pool left`,
      view.canaryOf === undefined,
      `a canary of ${view.canaryOf ?? ''}`,
    );
    const beforeImage = before.capzTemplates.get(view.key);
    check(
      `${view.key}: template on a published version or the image it had before`,
      view.canaryOf !== undefined ||
        view.image === beforeImage ||
        isPublished(running, versionIdOfTemplate(view.image)),
      `template image ${view.image}, which is not a published version`,
    );
  }
  const records = [...running.world.clusters.values()].flatMap((handle) =>
    handle.world.store
      .list('leases')
      .map(
        (object) => object as unknown as { metadata: { name: string; annotations?: Record<string, string> } },
      )
      .filter((lease) => (lease.metadata.annotations?.[LEASE_ANNOTATIONS.retirement] ?? '') !== '')
      .map((lease) => lease.metadata.name),
  );
  check('no retirement record left on a pool lease', records.length === 0, records.join(', '));
  return checks;
}
