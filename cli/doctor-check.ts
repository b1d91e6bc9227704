/** One check of `vmss-prototype doctor` (cli/doctor.ts) and how a check that could not be made is reported. */
import { messageOf } from '../shared/domain/errors.js';
import { definedOnly } from '../shared/domain/optional.js';

export type CheckKind =
  | 'settings'
  | 'azure-credential'
  | 'cluster-secrets'
  | 'kubernetes'
  | 'pool-policies'
  | 'azure-role'
  | 'management-cluster';

export interface DoctorCheck {
  readonly check: CheckKind;
  readonly cluster?: string;
  /** What was checked: the API server, a resource group, … */
  readonly target: string;
  /** ok: nothing missing; missing: permissions are missing; error: the check could not be made. */
  readonly result: 'ok' | 'missing' | 'error';
  readonly detail: string;
  /** The permissions (Azure actions, Kubernetes verbs) that are missing. */
  readonly missing?: readonly string[];
  /** What to do about it. */
  readonly fix?: string;
}

function adviceOf(error: unknown): string | undefined {
  const advice = (error as { advice?: unknown } | null)?.advice;
  return typeof advice === 'string' ? advice : undefined;
}

/** A check that could not be made: the error's message, and its advice as the fix. */
export function failed(base: Omit<DoctorCheck, 'result' | 'detail' | 'fix'>, error: unknown): DoctorCheck {
  const fix = adviceOf(error);
  return { ...base, result: 'error', detail: messageOf(error), ...definedOnly({ fix }) };
}
