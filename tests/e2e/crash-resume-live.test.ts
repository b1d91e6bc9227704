// Crash and resume with live capture (fixtures/crash-sweep.ts, liveKillPoints): killed at every boundary
// up to the image version's request and at each of live capture's own activities after it.
import { describeCrashSweep } from './fixtures/crash-sweep.js';

describeCrashSweep('live', 1, 1);
