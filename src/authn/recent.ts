// The rule for changes to how a user signs in (adding or removing a passkey or another factor): the
// session's last sign-in step must be recent (issue 33: within 5 minutes), else the user signs in
// again first, so that a browser left signed in cannot be given a factor of someone else's.
import { ANY_SIGN_IN, type Requirement } from './requirement.ts';

/** How recent, in seconds, a sign-in a change to the user's sign-in methods needs. */
export const RECENT_SIGN_IN = 5 * 60;

/**
 * The requirement of such a change made at `at` (src/authn/sufficiency.ts `shortfall` answers
 * 'max-age' when the session's last factor is older).
 */
export function recentSignIn(at: number): Requirement {
  return { ...ANY_SIGN_IN, freshSince: at - RECENT_SIGN_IN };
}
