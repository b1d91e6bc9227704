/** The cluster's DaemonSets (shared/ports/kubernetes/index.ts has the contract every port keeps). */
import type { DaemonSetTarget } from '../../domain/canary.js';

export interface DaemonSetsPort {
  exists(namespace: string, name: string): Promise<boolean>;
  /** Every DaemonSet, with what decides which nodes it runs on (paged). */
  list(): Promise<DaemonSetTarget[]>;
}
