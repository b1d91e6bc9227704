/**
 * Live progress of runs on stderr: on a terminal one line per instance is rewritten in place; in a
 * pipe or a CI log each step change is one line. Never prints orchestration inputs (no secrets there
 * anyway, but they can be long).
 */
import type { OrchestrationStatus } from './runner/index.js';

export function createProgressPrinter(stream: NodeJS.WriteStream): (status: OrchestrationStatus) => void {
  const lastStep = new Map<string, string>();
  const interactive = stream.isTTY === true;
  return (status) => {
    const custom = status.customStatus as
      { step?: unknown; detail?: unknown; node?: unknown; pool?: unknown } | undefined;
    const step = typeof custom?.step === 'string' ? custom.step : status.runtimeStatus.toLowerCase();
    const detail = typeof custom?.detail === 'string' ? ` (${custom.detail})` : '';
    const node = typeof custom?.node === 'string' ? ` node ${custom.node}` : '';
    const key = `${step}${detail}${node}|${status.runtimeStatus}`;
    if (lastStep.get(status.instanceId) === key) return;
    lastStep.set(status.instanceId, key);
    const text = `${status.instanceId}: ${step}${node}${detail}`;
    if (interactive) {
      stream.write(`\r\u001b[2K${text.slice(0, (stream.columns || 120) - 1)}`);
      if (status.runtimeStatus !== 'Running' && status.runtimeStatus !== 'Pending') stream.write('\n');
    } else {
      stream.write(`${text}\n`);
    }
  };
}
