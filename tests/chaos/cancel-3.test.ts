// Shard 3 of the cancel-at-every-step sweep (cancel-sweep.ts says how it is split).
import { describeCancelShard } from './cancel-sweep.js';

describeCancelShard(3);
