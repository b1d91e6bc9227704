// Public surface of the local durable runner (see runner.ts for what it reproduces of the host).
export {
  type DurableRunner,
  type OrchestrationRef,
  type OrchestrationStatus,
  type RunnerOptions,
  type RunnerRegistry,
} from './api.js';
export {
  type Clock,
  createSystemClock,
  createVirtualClock,
  type VirtualClock,
  type VirtualClockOptions,
} from './clock.js';
export { createFileStore, type FileStoreOptions } from './file-store.js';
export { type FailureDetails, type HistoryEvent, historyEventName, HistoryEventType } from './history.js';
export { NonDeterminismError } from './non-determinism.js';
export { createDurableRunner } from './runner.js';
export {
  createMemoryStore,
  createReferenceStore,
  type InstanceRecord,
  type InstanceStore,
  type RuntimeStatus,
} from './store.js';
