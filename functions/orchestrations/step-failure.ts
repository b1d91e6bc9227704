/** A failed step of a run, structured: which step, what kind of failure, its code, cause and advice. */
import type { ActivityFailure, FailureKind } from '../../shared/application/activities/activity.js';
import { messageOf } from '../../shared/domain/errors.js';
import { definedOnly } from '../../shared/domain/optional.js';

export interface StepFailureInit {
  readonly step: string;
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
  readonly step: string;
  readonly kind: FailureKind;
  readonly code: string;
  readonly detail: string;
  readonly advice: string | undefined;
  readonly followUp: string | undefined;
  /** The message without the leading step: `<cause> — <advice>; <follow-up>`. */
  readonly reason: string;

  constructor(init: StepFailureInit) {
    super(`${init.step}: ${render(init)}`);
    this.reason = render(init);
    this.name = 'StepFailure';
    this.step = init.step;
    this.kind = init.kind;
    this.code = init.code;
    this.detail = init.detail;
    this.advice = init.advice;
    this.followUp = init.followUp;
  }

  /** A failure of the orchestrator's own making (a timeout, a refusal it decided), terminal. */
  static terminal(step: string, code: string, detail: string, advice?: string): StepFailure {
    return new StepFailure({
      step,
      kind: 'terminal',
      code,
      detail,
      ...definedOnly({ advice }),
    });
  }

  /** An activity's failure as the failure of `step`; the caller's advice follows the activity's own. */
  static ofActivity(step: string, failure: ActivityFailure, advice?: string, note?: string): StepFailure {
    return new StepFailure({
      step,
      kind: failure.kind,
      code: failure.code,
      detail: note === undefined ? failure.message : `${failure.message} ${note}`,
      ...joinAdvice(failure.advice, advice),
    });
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
export function asStepFailure(step: string, error: unknown): StepFailure {
  if (error instanceof StepFailure) return error;
  return new StepFailure({ step, kind: 'terminal', code: 'UnexpectedError', detail: messageOf(error) });
}

function joinAdvice(first: string | undefined, second: string | undefined): { advice?: string } {
  const parts = [first, second].filter((part): part is string => part !== undefined && part !== '');
  return parts.length === 0 ? {} : { advice: [...new Set(parts)].join('; ') };
}

function render(init: StepFailureInit): string {
  const advice = init.advice === undefined || init.detail.includes(init.advice) ? '' : ` — ${init.advice}`;
  const followUp = init.followUp === undefined ? '' : `; ${init.followUp}`;
  return `${init.detail}${advice}${followUp}`;
}
