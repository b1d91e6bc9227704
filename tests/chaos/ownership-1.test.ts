// Shard 1 of the ownership-across-processes cases (ownership-cases.ts says how they are split).
import { describeOwnership } from './ownership-cases.js';

describeOwnership(1);
