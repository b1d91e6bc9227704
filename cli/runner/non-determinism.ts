// Non-determinism detection: the JS SDK matches history by sequence number only, so the runner
// compares every replay's actions with the ones recorded in earlier episodes (as DTFx does in the
// host, but stricter: inputs and timer fire times are compared too).
import { type SdkAction } from './durable-internals.js';
import { actionInputToPayload } from './history.js';
import { type RecordedAction } from './store.js';

/** ActionType numbering of lib/src/actions/ActionType.js. */
const ACTION_TYPES: Record<number, string> = {
  0: 'CallActivity',
  1: 'CallActivityWithRetry',
  2: 'CallSubOrchestrator',
  3: 'CallSubOrchestratorWithRetry',
  4: 'ContinueAsNew',
  5: 'CreateTimer',
  6: 'WaitForExternalEvent',
  7: 'CallEntity',
  8: 'CallHttp',
  9: 'SignalEntity',
  11: 'WhenAny',
  12: 'WhenAll',
  13: 'LockEntities',
  14: 'ReleaseEntities',
};

/** Action kinds the local runner cannot execute (no entity or HTTP host here). */
export const UNSUPPORTED_ACTIONS: ReadonlySet<string> = new Set([
  'CallEntity',
  'CallHttp',
  'SignalEntity',
  'LockEntities',
  'ReleaseEntities',
]);

export function actionTypeName(actionType: number): string {
  return ACTION_TYPES[actionType] ?? `ActionType(${actionType})`;
}

/** Flattens the SDK's `actions` (V1 per-yield arrays or V2+ compound WhenAll/WhenAny trees). */
export function flattenActions(actions: readonly (readonly SdkAction[])[]): SdkAction[] {
  const flat: SdkAction[] = [];
  function visit(action: SdkAction): void {
    if (action.compoundActions !== undefined) {
      for (const child of action.compoundActions) visit(child);
    } else {
      flat.push(action);
    }
  }
  for (const group of actions) for (const action of group) visit(action);
  return flat;
}

/** The comparable part of an action (timer cancellation is state, not identity: it is left out). */
export function recordAction(action: SdkAction): RecordedAction {
  const type = actionTypeName(action.actionType);
  const recorded: RecordedAction = { type };
  if (action.functionName !== undefined) recorded.name = action.functionName;
  if (action.externalEventName !== undefined) recorded.name = action.externalEventName;
  if (action.instanceId !== undefined) recorded.instanceId = action.instanceId;
  if (action.fireAt !== undefined) recorded.fireAt = new Date(action.fireAt).toISOString();
  if (type !== 'CreateTimer' && type !== 'WaitForExternalEvent') {
    const input = actionInputToPayload(action.input);
    if (input !== undefined) recorded.input = input;
  }
  return recorded;
}

function describeAction(action: RecordedAction): string {
  const parts = [action.type];
  if (action.name !== undefined) parts.push(`'${action.name}'`);
  if (action.instanceId !== undefined) parts.push(`instance '${action.instanceId}'`);
  if (action.fireAt !== undefined) parts.push(`firing at ${action.fireAt}`);
  if (action.input !== undefined) parts.push(`with input ${truncate(action.input)}`);
  return parts.join(' ');
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Thrown when a replay does not reproduce what earlier episodes recorded. */
export class NonDeterminismError extends Error {
  override readonly name = 'NonDeterminismError';
  constructor(
    readonly instanceId: string,
    readonly orchestration: string,
    /** Index into the flattened action list where replay and history part. */
    readonly actionIndex: number,
    readonly difference: string,
  ) {
    super(
      `replaying orchestration ${orchestration} (instance ${instanceId}): non-deterministic orchestrator: ` +
        `action #${actionIndex} ${difference}. Orchestrator code must take the same path on every replay ` +
        '(no Date.now(), Math.random(), module-level state, I/O or environment reads in orchestrators)',
    );
  }
}

/** The first difference between the recorded actions and a replay's actions, or undefined. */
export function findDivergence(
  recorded: readonly RecordedAction[],
  replayed: readonly RecordedAction[],
): { index: number; difference: string } | undefined {
  for (let index = 0; index < recorded.length; index += 1) {
    const before = recorded[index];
    const now = replayed[index];
    if (before === undefined) break;
    if (now === undefined) {
      return {
        index,
        difference: `is missing: history recorded ${describeAction(before)}, the replay stopped after ${replayed.length} action(s)`,
      };
    }
    const fields: (keyof RecordedAction)[] = ['type', 'name', 'instanceId', 'fireAt', 'input'];
    const changed = fields.filter((field) => before[field] !== now[field]);
    if (changed.length > 0) {
      return {
        index,
        difference: `differs in ${changed.join(', ')}: history recorded ${describeAction(before)}, the replay produced ${describeAction(now)}`,
      };
    }
  }
  return undefined;
}
