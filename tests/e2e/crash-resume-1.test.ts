// Shard 1 of the drain-and-stop crash-and-resume sweep (fixtures/crash-sweep.ts says how it is split).
import { CRASH_SHARDS, describeCrashSweep } from './fixtures/crash-sweep.js';

describeCrashSweep('drain-and-stop', 1, CRASH_SHARDS);
