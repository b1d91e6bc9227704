/**
 * A failed step of a run, structured: which step, what kind of failure, its code, cause and advice.
 * Thrown inside an orchestration (`StepFailure`); carried across an orchestration's edge as a value
 * (`FailedStep`): a parent reads its child's failure as that value (children.ts), never from a message.
 */
import type { ActivityFailure, FailureKind } from '../../shared/application/activities/activity.js';
import { REFRESH_STEPS } from '../../shared/application/refresh-contracts.js';
import { messageOf } from '../../shared/domain/errors.js';
import { definedOnly } from '../../shared/domain/optional.js';

/**
 * Every step an orchestration names in its custom status and its failures: a refresh's steps
 * (refresh-contracts.ts) and those of the cluster, status, debounce and input-checking edges.
 */
export const STEP_NAMES = [
  ...REFRESH_STEPS,
  'validating-input',
  'listing-pools',
  'reading-status',
  'refreshing',
  'waiting-quiet-period',
  'waiting-for-running-refresh',
  'waiting-for-ready-time',
  'reading-pool-policies',
  'acting-on-policy',
  'unknown',
] as const;

export type StepName = (typeof STEP_NAMES)[number];

export function isStepName(value: unknown): value is StepName {
  return STEP_NAMES.some((step) => step === value);
}

/** A failed step as a value: what a child orchestration reports to its parent (plain JSON). */
export interface FailedStep {
  readonly step: StepName;
  readonly kind: FailureKind;
  readonly code: string;
  /** The cause without the step: `<cause> — <advice>; <follow-up>` (StepFailure.reason). */
  readonly message: string;
  readonly advice?: string;
}

export interface StepFailureInit {
  readonly step: StepName;
  readonly kind: FailureKind;
  readonly code: string;
  /** The cause in words, without the step. */
  readonly detail: string;
  /** What the operator can do. */
  readonly advice?: string;
  /** What else went wrong afterwards (restoring the node), shown last. */
  readonly followUp?: string;
}

/**
 * Thrown by the orchestrators to fail a run. Its message is what operators see in the status and the
 * CLI: `<step>: <cause> — <advice>; <follow-up>`.
 */
export class StepFailure extends Error {
  readonly step: StepName;
  readonly kind: FailureKind;
  readonly code: string;
  readonly detail: string;
  readonly advice: string | undefined;
  readonly followUp: string | undefined;
  /** The message without the leading step: `<cause> — <advice>; <follow-up>`. */
  readonly reason: string;

  constructor(init: StepFailureInit) {
    const step = init.step;
    super(`${step}: ${render(init)}`);
    this.reason = render(init);
    this.name = 'StepFailure';
    this.step = step;
    this.kind = init.kind;
    this.code = init.code;
    this.detail = init.detail;
    this.advice = init.advice;
    this.followUp = init.followUp;
  }

  /** A failure of the orchestrator's own making (a timeout, a refusal it decided), terminal. */
  static terminal(step: StepName, code: string, detail: string, advice?: string): StepFailure {
    return new StepFailure({
      step,
      kind: 'terminal',
      code,
      detail,
      ...definedOnly({ advice }),
    });
  }

  /** An activity's failure as the failure of `step`; the caller's advice follows the activity's own. */
  static ofActivity(step: StepName, failure: ActivityFailure, advice?: string, note?: string): StepFailure {
    return new StepFailure({
      step,
      kind: failure.kind,
      code: failure.code,
      detail: note === undefined ? failure.message : `${failure.message} ${note}`,
      ...joinAdvice(failure.advice, advice),
    });
  }

  /** The failure as the value an orchestration reports across its edge. */
  toValue(): FailedStep {
    return {
      step: this.step,
      kind: this.kind,
      code: this.code,
      message: this.reason,
      ...definedOnly({ advice: this.advice }),
    };
  }

  /** The same failure with what else went wrong afterwards. */
  withFollowUp(followUp: string): StepFailure {
    return new StepFailure({
      step: this.step,
      kind: this.kind,
      code: this.code,
      detail: this.detail,
      ...definedOnly({ advice: this.advice }),
      followUp: this.followUp === undefined ? followUp : `${this.followUp}; ${followUp}`,
    });
  }
}

/** Any thrown value as the failure of `step`: a StepFailure as it is, anything else terminal and unexpected. */
export function asStepFailure(step: StepName, error: unknown): StepFailure {
  if (error instanceof StepFailure) return error;
  return new StepFailure({ step, kind: 'terminal', code: 'UnexpectedError', detail: messageOf(error) });
}

function joinAdvice(first: string | undefined, second: string | undefined): { advice?: string } {
  const parts = [first, second].filter((part): part is string => part !== undefined && part !== '');
  return parts.length === 0 ? {} : { advice: [...new Set(parts)].join('; ') };
}

function render(init: Omit<StepFailureInit, 'step'>): string {
  const advice = init.advice === undefined || init.detail.includes(init.advice) ? '' : ` — ${init.advice}`;
  const followUp = init.followUp === undefined ? '' : `; ${init.followUp}`;
  return `${init.detail}${advice}${followUp}`;
}

/**
 * Anything an orchestration threw, as a failure value: a StepFailure as it is; anything else (a bug, the
 * host) as a terminal failure of `step`, its message only.
 */
export function failedStepOf(error: unknown, step: StepName): FailedStep {
  if (error instanceof StepFailure) return error.toValue();
  const message = messageOf(error);
  return {
    step,
    kind: 'terminal',
    code: 'OrchestrationFailed',
    message: message === '' ? 'failed' : message,
  };
}
