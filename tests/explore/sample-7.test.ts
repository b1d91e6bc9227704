// Shard 7 of the explorer's sample (sample.ts says how the sample is split).
import { describeSampleShard } from './sample.js';

describeSampleShard(7);
