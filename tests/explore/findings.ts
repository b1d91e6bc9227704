/**
 * Points where outside probes found a pool harmed (issue 50, "never harm a pool, second pass"), each
 * reproduced in the fault space: they failed before the fix and must keep every invariant after it
 * (docs/fault-space.md has the table). explore.test.ts runs them with the earlier findings.
 */
import type { FaultKind } from './space.js';

export interface Finding {
  readonly variant: string;
  /** `<activity>#<occurrence>`. */
  readonly boundary: string;
  readonly fault: FaultKind;
}

export const FINDINGS: readonly Finding[] = [
  // The donor's Node object deleted while its VM is stopped (and while it is stopping), the run dead: the
  // VM must run again and its kubelet register the node, found by the record on the scale set alone.
  { variant: 'refresh drain-and-stop', boundary: 'requestSnapshot#1', fault: 'node-deleted' },
  { variant: 'refresh drain-and-stop', boundary: 'readPrepPod#1', fault: 'node-deleted' },
  // A runner whose clock is 16 minutes ahead took the live run's lease: the live run may not snapshot
  // (or publish) after that; every call that changes Azure or the cluster is fenced by the lease. Since
  // expiry is judged on the API server's clock, the skewed runner no longer takes it at all.
  { variant: 'refresh drain-and-stop', boundary: 'requestSnapshot#1', fault: 'clock-skew' },
  { variant: 'refresh drain-and-stop', boundary: 'requestImageVersionExclusion#1', fault: 'clock-skew' },
  // Lease expiry on the API server's clock (docs/fault-space.md): a runner 16 minutes ahead leaves the live
  // run's lease alone, one 16 minutes behind takes a run's lease 16 minutes after it died.
  { variant: 'refresh drain-and-stop', boundary: 'deletePrepPod#2', fault: 'clock-skew' },
  { variant: 'refresh drain-and-stop', boundary: 'requestInstanceStart#1', fault: 'clock-behind' },
  // The same for a rollback (its publication) and a retirement (holding and draining the next node), once
  // another rollback or retirement took their lease.
  { variant: 'rollback', boundary: 'requestImageVersionExclusion#1', fault: 'clock-skew' },
  { variant: 'retire', boundary: 'protectNode#1', fault: 'lease-lost' },
  // The image definition deleted while the version is built: the run fails at its first read (it waited
  // out the 8 h build timeout, holding the pool), everything given back.
  { variant: 'refresh drain-and-stop', boundary: 'readImageVersion#1', fault: 'definition-deleted' },
  // An autoscaler or admin scales the pool out while `retire` runs (before the run's first surge, and
  // while it waits for it): the surge is an instance the run created, and the pool ends at its demand.
  { variant: 'retire', boundary: 'startRetirementSurge#1', fault: 'outside-scale-out' },
  { variant: 'retire', boundary: 'observeRetirementSurge#1', fault: 'outside-scale-out' },
  // Found by `--per-fault 3`. A dead run's canary whose deletion was asked must read as given back (ARM
  // shows it Deleting at once; the simulator left it Succeeded and running until it was gone).
  { variant: 'canary fail pinned kubeadm', boundary: 'findOthersFromVersion#1', fault: 'clock-behind' },
  // An outsider's instance built from the rejected version that never registers (as broken as its canary):
  // replaced like the others, a replacement Ready first, then deleted without a drain.
  { variant: 'canary fail pinned kubeadm', boundary: 'restoreCanaryModel#1', fault: 'outside-scale-out' },
];
