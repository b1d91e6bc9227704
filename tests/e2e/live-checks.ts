/**
 * What a live capture must never leave behind, run or failed: a copy disk, a data disk attached to an
 * instance of the pool, a freeze or scrub pod not being deleted, a root filesystem still frozen, a host violation (boot
 * with a duplicate root attached, freeze past the world's limit, detach while mounted).
 */
import type { ScaleSetRef } from '../../shared/domain/resource-id.js';
import type { RunningSimulator } from '../../sim/index.js';

export function liveCaptureLeftovers(
  running: RunningSimulator,
  scaleSet: ScaleSetRef & { readonly id: string },
): string[] {
  const world = running.world;
  const leftovers: string[] = [];
  for (const disk of world.compute.listDisks(scaleSet.subscriptionId, scaleSet.resourceGroup)) {
    // One ARM is deleting is given back (the run asks and does not wait: refresh-pool/copy-disk.ts).
    if (disk.createOption === 'Copy' && disk.provisioningState !== 'Deleting')
      leftovers.push(`copy disk ${disk.name} (${disk.provisioningState})`);
  }
  for (const instance of world.compute.listInstances(scaleSet.id)) {
    for (const disk of instance.dataDisks) {
      leftovers.push(`data disk ${disk.name} attached to ${instance.computerName} at LUN ${disk.lun}`);
    }
  }
  for (const [, handle] of world.clusters) {
    for (const pod of handle.world.store.list('pods')) {
      // A pod deleted with a grace period is gone once its trap ran (at most the grace period later).
      const terminating = (pod.metadata as { deletionTimestamp?: string }).deletionTimestamp !== undefined;
      if (/^vmssp-(freeze|scrub)-/.test(pod.metadata.name) && !terminating) {
        leftovers.push(`pod ${pod.metadata.name}`);
      }
    }
  }
  const hosts = world.hosts();
  for (const freeze of hosts.freezes) {
    if (freeze.thawedAt === undefined) leftovers.push(`root of ${freeze.nodeName} still frozen`);
  }
  for (const violation of hosts.violations) {
    leftovers.push(`host violation ${violation.kind} on ${violation.nodeName}: ${violation.detail}`);
  }
  return leftovers;
}
