// Shard 4 of the crash-and-resume sweep inside the canary phase (fixtures/canary-crash.ts says how it is split).
import { describeCanaryCrash } from './fixtures/canary-crash.js';

describeCanaryCrash(4);
