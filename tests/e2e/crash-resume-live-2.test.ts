// Shard 2 of the live-capture crash-and-resume sweep (fixtures/crash-sweep.ts, liveKillPoints): killed at
// every boundary up to the image version's request and at each of live capture's own activities after it,
// split by the killed activity's name as drain-and-stop's is.
import { CRASH_SHARDS, describeCrashSweep } from './fixtures/crash-sweep.js';

describeCrashSweep('live', 2, CRASH_SHARDS);
