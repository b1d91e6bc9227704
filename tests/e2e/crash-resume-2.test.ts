// Shard 2 of the drain-and-stop crash-and-resume sweep (fixtures/crash-sweep.ts says how it is split).
import { CRASH_SHARDS, describeCrashSweep } from './fixtures/crash-sweep.js';

describeCrashSweep('drain-and-stop', 2, CRASH_SHARDS);
