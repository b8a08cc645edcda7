// The password step: a first factor (RFC 8176 `pwd`), and the account page's change of password.
// The check itself, throttled, is ../password/sign-in.ts; hashing and the rules for a new password
// are ../password/hash.ts and ../password/rules.ts.
import { type Requester, securityEvent } from '../../events/index.ts';
import type { ThrottleObserver, ThrottlePolicy, Refusal } from '../throttle.ts';
import type { EventStore } from '../../store/events.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import type { User } from '../../store/users.ts';
import { hashPassword } from './hash.ts';
import { brokenPasswordRule, type PasswordRule } from './rules.ts';
import { signIn } from './check.ts';
import type { Requirement } from '../policy.ts';
import { continueSignIn, type SignInDeps, type SignInProgress } from '../flow.ts';
import type { Step } from '../step.ts';

export const passwordStep: Step = {
  method: 'password',
  first: true,
  second: false,
  factors: 1,
  phishingResistant: false,
  enrolled: (user) => user.passwordHash !== null,
};

export interface PasswordDeps extends SignInDeps {
  store: SignInDeps['store'] & EventStore & ThrottleStore;
  throttle: ThrottlePolicy;
  observer?: Pick<ThrottleObserver, 'signInFailed' | 'signInRefused'>;
}

export interface PasswordSignIn {
  username: string;
  password: string;
  /** The browser's device id, when its device cookie says it signed in as this username before. */
  knownDevice: string | undefined;
  /** The client the sign-in is for (the authorization request's), if any. */
  clientId: string | null;
  requester: Requester;
  /** What the request needs of the session (./policy.ts). */
  need: Requirement;
  /** What to go on with once signed in: the sealed authorization request, or null for the account page. */
  resume: string | null;
  /** This browser's binding, asked for only when a next step must be sealed. */
  bind: () => string;
  now: number;
}

export type PasswordSignInOutcome = { kind: 'failed' } | { kind: 'refused'; refusal: Refusal } | SignInProgress;

/** The sign-in form: the password, throttled, then whatever the policy asks next. */
export async function signInWithPassword(deps: PasswordDeps, attempt: PasswordSignIn): Promise<PasswordSignInOutcome> {
  const checked = await signIn(deps.store, deps.throttle, attempt, deps.observer);
  if (checked.kind !== 'signed-in') return checked;
  const { now } = attempt;
  return continueSignIn(deps, {
    user: checked.user,
    factors: [{ method: passwordStep.method, amr: ['pwd'], at: now }],
    authTime: now,
    need: attempt.need,
    resume: attempt.resume,
    clientId: attempt.clientId,
    bind: attempt.bind,
    now,
  });
}

export interface PasswordChange {
  user: User;
  /** The session the change is made from: it stays, every other session of the user ends. */
  sessionId: string;
  current: string;
  next: string;
  knownDevice: string | undefined;
  requester: Requester;
  now: number;
}

export type PasswordChangeOutcome =
  | { kind: 'changed' }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'wrong-password' }
  /** The new password breaks a rule (./password/rules.ts). */
  | { kind: 'rejected'; problem: PasswordRule };

/**
 * NIST SP 800-63B §3.1.1.2: the current password is required (checked as a sign-in is, throttled
 * alike), the new one meets the rules, and every other session of the user ends. Grants (refresh
 * tokens) stay: withdrawing an application is the account page's other form.
 */
export async function changePassword(
  deps: Omit<PasswordDeps, 'pending'> & { minLength: number },
  change: PasswordChange,
): Promise<PasswordChangeOutcome> {
  const { user, now, requester } = change;
  const attempt = { username: user.username, password: change.current, clientId: null, requester, now };
  const checked = await signIn(
    deps.store,
    deps.throttle,
    { ...attempt, knownDevice: change.knownDevice },
    deps.observer,
  );
  if (checked.kind === 'refused') return checked;
  if (checked.kind === 'failed') return { kind: 'wrong-password' };
  const problem = brokenPasswordRule(change.next, { minLength: deps.minLength, username: user.username });
  if (problem) return { kind: 'rejected', problem };
  const changed = securityEvent('user.password_changed', now, { userId: user.id, requester });
  const passwordHash = await hashPassword(change.next);
  await deps.store.changePassword({ userId: user.id, passwordHash, now, keepSession: change.sessionId }, changed);
  return { kind: 'changed' };
}
