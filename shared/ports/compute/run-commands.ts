/** The port to Azure Run Command on scale set members (contract: index.ts). */
import type { RunCommandState, ScaleSetInstance } from '../../domain/compute.js';
import type { ScaleSetRef } from '../../domain/resource-id.js';

export interface RunCommandsPort {
  /**
   * Azure Run Command (`RunShellScript`, run as root by the VM agent) on a running instance. Returns once
   * ARM accepted it, with an opaque handle (no secret: operation URLs) that `get` reads, also from another
   * process after a crash. A run command still executing on the instance (ours, whose handle was lost) is
   * `TransientError` code `RunCommandInProgress`; a VM that is not running is refused by ARM
   * (`TerminalError`).
   */
  request(instance: ScaleSetInstance, script: readonly string[]): Promise<string>;
  /** Where the run command of `handle` is; polls ARM once. */
  get(scaleSet: ScaleSetRef, handle: string): Promise<RunCommandState>;
}
