// Why a sign-in was refused, in a few stable, machine-readable words: the `reason` of the operator's
// log line (src/http/sign-in-log.ts) and of the metric tessera_signin_failures_total, what an alert
// is written against (docs/production.md, "Alerts"). Values are added, never renamed.
// It imports nothing: the throttle (./throttle.ts) and the steps name its reasons.

export const SIGN_IN_FAILURE_REASONS = [
  /** A username nobody has. */
  'unknown_user',
  'wrong_password',
  /** The account is disabled (`tessera users disable`), whatever was typed. */
  'disabled',
  /** Refused unchecked: the account (or the address) reached the lock. */
  'locked',
  /** Refused unchecked: a delay after failures is running. */
  'throttled',
  /** A wrong or replayed authenticator or recovery code after the password. */
  'second_factor_failed',
  /** A passkey not accepted (unknown, replayed, suspended, not verified). */
  'passkey_failed',
] as const;

export type SignInFailureReason = (typeof SIGN_IN_FAILURE_REASONS)[number];

/** The reasons of a password that did not sign in (./password/check.ts). */
export type PasswordFailure = Extract<SignInFailureReason, 'unknown_user' | 'wrong_password' | 'disabled'>;

/** The reason of a refusal before anything was checked. */
export function refusalReason(refusal: { locked: boolean }): SignInFailureReason {
  return refusal.locked ? 'locked' : 'throttled';
}

/** The reason of a step of `method` that did not verify (./step.ts StepFailure); its own word is the detail. */
export function failureReason(method: string, failure: { reason: string }): SignInFailureReason {
  if (method === 'password') return failure.reason as PasswordFailure;
  if (method === 'passkey') return failure.reason === 'disabled' ? 'disabled' : 'passkey_failed';
  return 'second_factor_failed';
}
