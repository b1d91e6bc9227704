/**
 * Loaded with `node --import` by bwrap-gate.test.ts: makes the simulator see no bwrap on this machine
 * (real-shell.ts's seam), so the real-shell tests can be run as on a machine without bubblewrap.
 */
import { useBwrap } from '../../../sim/world/real-shell.js';

useBwrap(null);
