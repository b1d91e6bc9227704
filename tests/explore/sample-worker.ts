/**
 * The worker thread a shard of the explorer's sample runs its points in (sample.ts says why): explores
 * the variant and fault kind pairs it is given, one boundary each, and posts the report back.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { explore } from './explore.js';
import type { SamplePair } from './sample.js';
import { VARIANTS } from './space.js';

const pairs = workerData as readonly SamplePair[];
const chosen = new Set(pairs.map((pair) => `${pair.variant}\n${pair.fault}`));
const report = await explore({
  variants: VARIANTS,
  boundariesPerFault: 1,
  select: (variant, fault) => chosen.has(`${variant.name}\n${fault}`),
});
parentPort?.postMessage(report);
