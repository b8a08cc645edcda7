// The operator's line of a sign-in that failed or was refused: one per attempt, at info, enough to
// alert on from the log alone (docs/production.md, "Alerts"):
//
//   {"level":30,…,"reqId":"9b1c…","event":"sign_in_failed","reason":"wrong_password","method":"password",
//    "username":"alice","client_id":"Jf2X…","msg":"sign-in failed"}
//
// `reason` is one of a few stable words (src/authn/failures.ts), the same as the metric's label;
// `reqId` is the request's, which the audit trail's event of the attempt carries too (`tessera events
// list --request`). The username is as typed, its control and bidirectional characters written as
// escapes and its length bounded, so that no line can be forged or reordered on a terminal by it.
import type { FastifyRequest } from 'fastify';
import { failureReason, refusalReason } from '../authn/failures.ts';
import type { StepFailure } from '../authn/step.ts';
import type { Refusal } from '../authn/throttle.ts';

/** The longest username written, in code points: more says nothing an alert needs. */
export const LOGGED_USERNAME_LENGTH = 128;

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A typed value for a log line: bounded, its controls written as `\uXXXX`; with its length when cut. */
export function typedForLog(value: string): { value: string; length?: number } {
  const points = [...value];
  const kept = points.length > LOGGED_USERNAME_LENGTH ? points.slice(0, LOGGED_USERNAME_LENGTH).join('') : value;
  const escaped = kept.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return points.length > LOGGED_USERNAME_LENGTH ? { value: escaped, length: points.length } : { value: escaped };
}

export interface SignInFailureLog {
  /** The step's method: password, passkey, totp, recovery-code. */
  method: string;
  outcome: StepFailure | { kind: 'refused'; refusal: Refusal };
  /** As typed on the first step; the user's own on a later one; null when none was given (a passkey). */
  username: string | null;
  clientId: string | null;
}

export function logSignInFailure(request: FastifyRequest, entry: SignInFailureLog): void {
  const { outcome, method } = entry;
  const refused = outcome.kind === 'refused';
  const reason = refused ? refusalReason(outcome.refusal) : failureReason(method, outcome);
  const username = entry.username === null ? null : typedForLog(entry.username);
  // The step's own word where it says more than the reason (a replayed code, an unknown passkey).
  const detail = refused
    ? undefined
    : [outcome.reason === reason ? undefined : outcome.reason, outcome.detail].filter(Boolean).join(': ');
  request.log.info(
    {
      event: 'sign_in_failed',
      reason,
      method,
      username: username?.value ?? null,
      ...(username?.length === undefined ? {} : { username_length: username.length }),
      client_id: entry.clientId,
      ...(detail ? { detail } : {}),
      ...(refused ? { retry_after: outcome.refusal.retryAfter } : {}),
    },
    'sign-in failed',
  );
}
