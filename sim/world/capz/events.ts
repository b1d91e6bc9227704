/** What the CAPZ-like reconciler did, as `world.capzEvents()` and `GET /_sim/capz` report it. */

export type CapzEventKind =
  | 'model-write'
  /** CAPZ's scale set PUT failed (an image that is not there): nothing was written. */
  | 'model-write-failed'
  | 'revert'
  | 'scale'
  | 'scale-set-create'
  | 'scale-set-delete'
  | 'machine-delete'
  | 'drain-blocked'
  | 'instance-delete'
  | 'token-rotate';

/** What the reconciler did, for tests and `GET /_sim/capz`. */
export interface CapzEvent {
  at: string;
  managementCluster: string;
  namespace: string;
  /** The AzureMachinePool (= scale set) name. */
  pool: string;
  kind: CapzEventKind;
  detail: string;
}
