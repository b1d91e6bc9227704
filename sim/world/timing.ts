/**
 * The simulator's timing model: how much each long operation varies around its latency profile's figure
 * (sim/contracts.ts `LatencyProfile`), drawn from a seeded PRNG so a run is the same every time with the
 * same seed, and how long a new node takes to become Ready per bootstrap flavour, from our captured
 * image and from the pool's original image. Every figure names where it comes from; "estimate" says
 * that no public measurement was found and how the figure was reasoned.
 *
 * Jitter: one occurrence of an operation takes `figure × f`, f drawn from a triangular distribution
 * over [low, high] whose mode is 1 (the profile's figure is the usual case). Each operation has its own
 * stream, the n-th draw SHA-256 of (seed, operation, n): an operation's durations do not shift when
 * another operation happens more or less often, and never depend on resource names (some carry the
 * start time).
 */
import { createHash } from 'node:crypto';

import type { LatencyProfile, TimedOperation } from '../contracts.js';

/** The spread of one operation's duration, as factors of the profile's figure. */
export interface Spread {
  readonly low: number;
  readonly high: number;
}

/**
 * Where each spread comes from. Microsoft publishes no expected durations for these operations; the
 * spreads below are the ranges seen in kamino's published run logs (docs/design.md#timings) where they
 * exist, else estimates kept within ±30 % (an operation rarely takes the same time twice, and a cloud's
 * long tail is longer than its short one).
 */
export const SPREADS: Readonly<Record<TimedOperation, Spread>> = {
  // Pod start with cached images: the kubelet's sync loop and the runtime (estimate).
  podStartSeconds: { low: 0.5, high: 2 },
  // Registry pulls vary with the registry and the node's bandwidth; a 129 MB image took 16 s on a fresh
  // node (https://the-gigi.github.io/gigi-zone/posts/2025/12/blazing_fast_pods_image_preloading).
  imagePullSeconds: { low: 0.7, high: 1.4 },
  prepScriptSeconds: { low: 0.8, high: 1.3 },
  // kamino's log: `vmss stop` 113–183 s (docs/design.md#timings); the profile's 113 is the quickest seen.
  instanceStopSeconds: { low: 0.9, high: 1.6 },
  // Deallocation also releases the host (https://learn.microsoft.com/azure/virtual-machines/states-billing):
  // at least as long as a stop (estimate: the stop's spread).
  instanceDeallocateSeconds: { low: 0.9, high: 1.6 },
  // Start: kamino's log has one run (30 s); estimate ±30 % with the longer tail.
  instanceStartSeconds: { low: 0.8, high: 1.3 },
  nodeBootSeconds: { low: 0.8, high: 1.3 },
  newNodeJoinFromMarketplaceSeconds: { low: 0.85, high: 1.3 },
  newNodeJoinFromPrototypeSeconds: { low: 0.85, high: 1.3 },
  newNodeJoinFromPrototypeWithKubeadmJoinSeconds: { low: 0.85, high: 1.3 },
  // kamino's log: snapshots of a stopped disk 6–65 s; the profile's 65 is the longest seen. A full
  // snapshot is a background copy (https://learn.microsoft.com/azure/virtual-machines/disks-incremental-snapshots,
  // completionPercent), so its time follows the disk's used size.
  snapshotCreateSeconds: { low: 0.6, high: 1.2 },
  snapshotDeleteSeconds: { low: 0.7, high: 1.5 },
  // kamino's log: one image version, 664 s for one region; its helm README says 30 minutes to two hours
  // for 30 GB. Estimate: ±30 % around the profile's figure for the sample's small disk and one region.
  imageVersionCreateSeconds: { low: 0.8, high: 1.3 },
  imageVersionDeleteSeconds: { low: 0.7, high: 1.5 },
  galleryCreateSeconds: { low: 0.7, high: 1.5 },
  imageDefinitionCreateSeconds: { low: 0.7, high: 1.5 },
  // kamino's log: ≈3 s for a model-only update (no instance upgraded under the manual policy).
  scaleSetUpdateSeconds: { low: 0.7, high: 1.7 },
  // Run commands queue behind the VM agent (https://learn.microsoft.com/azure/virtual-machines/linux/run-command-managed).
  runCommandSeconds: { low: 0.7, high: 1.5 },
  diskCreateSeconds: { low: 0.7, high: 1.5 },
  diskDeleteSeconds: { low: 0.7, high: 1.5 },
  dataDiskAttachSeconds: { low: 0.7, high: 1.5 },
  dataDiskDetachSeconds: { low: 0.7, high: 1.5 },
};

/** A uniform number in [0, 1) for (seed, operation, occurrence): the PRNG in counter mode. */
function uniform(seed: number, operation: string, occurrence: number): number {
  const digest = createHash('sha256').update(`${seed}\0${operation}\0${occurrence}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** The factor at quantile `u` of the triangular distribution over [low, high] with mode 1. */
export function triangularFactor(spread: Spread, u: number): number {
  const { low, high } = spread;
  const mode = Math.min(high, Math.max(low, 1));
  const width = high - low;
  if (width <= 0) return low;
  const split = (mode - low) / width;
  return u < split
    ? low + Math.sqrt(u * width * (mode - low))
    : high - Math.sqrt((1 - u) * width * (high - mode));
}

/**
 * `profile` with a seeded jitter: each occurrence of an operation draws its own duration (rounded to the
 * second), the n-th occurrence of an operation the same for the same seed.
 */
export function withJitter(profile: LatencyProfile, seed: number): LatencyProfile {
  const occurrences = new Map<TimedOperation, number>();
  return {
    ...profile,
    name: `${profile.name}+jitter(seed ${seed})`,
    jitter(operation) {
      const occurrence = occurrences.get(operation) ?? 0;
      occurrences.set(operation, occurrence + 1);
      const factor = triangularFactor(SPREADS[operation], uniform(seed, operation, occurrence));
      return Math.max(0, Math.round(profile[operation] * factor));
    },
  };
}
