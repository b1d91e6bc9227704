// Sub-orchestrations: starting (or re-attaching to) the children an instance waits for, and handing a
// finished child's outcome to its parent.
//
// A start over an instance id that is still running is NOT refused: the Azure Storage backend writes
// the new ExecutionStarted over it and the instance begins a second execution (seen on the real Functions
// host); the first execution's pending work and its parent are forgotten. The runner does the same,
// so an orchestrator that relies on the backend refusing a running id fails its tests here.
import { completedTaskId, type FailureDetails, type HistoryEvent, historyEvent } from './history.js';
import { type InstanceHost, isTerminal, type Live, type PendingWork } from './instance.js';
import type { InstanceRecord } from './store.js';

/** Starts (or re-attaches to) the sub-orchestrations the last replay waits for. */
export async function startChildren(host: InstanceHost, live: Live): Promise<void> {
  for (const work of live.pending.values()) {
    if (work.kind !== 'sub-orchestration' || live.dispatched.has(work.id)) continue;
    live.dispatched.add(work.id);
    await startChild(host, live, work);
  }
}

async function startChild(
  host: InstanceHost,
  parent: Live,
  work: Extract<PendingWork, { kind: 'sub-orchestration' }>,
): Promise<void> {
  const parentRecord = parent.record;
  const mine = (record: InstanceRecord): boolean =>
    record.parentInstanceId === parentRecord.instanceId &&
    record.parentTaskId === work.id &&
    record.parentExecutionId === parentRecord.executionId;
  const known = host.live.get(work.childId);
  const existing = known?.record ?? (await host.store.load(work.childId));
  if (existing !== undefined && mine(existing)) {
    await host.ensureLive(work.childId);
    return;
  }
  const now = host.clock.now();
  const fn = host.options.orchestrators[work.name];
  if (fn === undefined) {
    const message = `no orchestrator named '${work.name}' is registered`;
    const details: FailureDetails = { ErrorType: 'Error', ErrorMessage: message, IsNonRetriable: true };
    const failed = historyEvent('SubOrchestrationInstanceFailed', now, {
      TaskScheduledId: work.id,
      Reason: message,
      Details: message,
      FailureDetails: details,
    });
    await host.deliver(parent, parentRecord.executionId, failed);
    return;
  }
  if (known !== undefined) known.superseded = true;
  host.live.delete(work.childId);
  const child = host.createInstance({
    instanceId: work.childId,
    name: work.name,
    fn,
    input: work.input,
    parent: { instanceId: parentRecord.instanceId, taskId: work.id, executionId: parentRecord.executionId },
  });
  await host.persist(child);
  host.emitStatus(child);
  host.signal();
}

/** Hands a terminal child's outcome to its parent, unless the parent no longer waits for it. */
export async function notifyParent(host: InstanceHost, child: Live): Promise<void> {
  const record = child.record;
  if (record.parentInstanceId === undefined || record.parentTaskId === undefined) return;
  const parent = await host.ensureLive(record.parentInstanceId);
  const work = parent.pending.get(record.parentTaskId);
  if (
    isTerminal(parent.record) ||
    parent.record.executionId !== record.parentExecutionId ||
    work?.kind !== 'sub-orchestration' ||
    work.childId !== record.instanceId ||
    parent.record.inbox.some((event) => completedTaskId(event) === record.parentTaskId)
  ) {
    return;
  }
  const now = host.clock.now();
  let event: HistoryEvent;
  if (record.runtimeStatus === 'Completed') {
    event = historyEvent('SubOrchestrationInstanceCompleted', now, {
      TaskScheduledId: record.parentTaskId,
      Result: record.output ?? 'null',
    });
  } else {
    const details: FailureDetails = record.failure ?? {
      ErrorType: 'Error',
      ErrorMessage: `sub-orchestration ${record.instanceId} was ${record.runtimeStatus}`,
    };
    event = historyEvent('SubOrchestrationInstanceFailed', now, {
      TaskScheduledId: record.parentTaskId,
      Reason: details.ErrorMessage,
      Details: details.StackTrace ?? details.ErrorMessage,
      FailureDetails: details,
    });
  }
  await host.deliver(parent, parent.record.executionId, event);
}
