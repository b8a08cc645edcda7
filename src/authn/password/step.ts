// The password step: a first factor (RFC 8176 `pwd`), and the account page's change of password.
// The check itself, throttled, is ./check.ts; hashing and the rules for a new password are ./hash.ts
// and ./rules.ts.
import { type Requester, securityEvent } from '../../events/index.ts';
import type { ThrottleObserver, ThrottlePolicy, Refusal } from '../throttle.ts';
import type { EventStore } from '../../store/events.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import type { User, UserStore } from '../../store/users.ts';
import type { Factor } from '../factor.ts';
import { hashPassword } from './hash.ts';
import { brokenPasswordRule, type PasswordRule } from './rules.ts';
import { signIn } from './check.ts';
import type { FormAttempt, Step, Verification } from '../step.ts';

export interface PasswordDeps {
  store: UserStore & EventStore & ThrottleStore;
  throttle: ThrottlePolicy;
  observer?: Pick<ThrottleObserver, 'signInFailed' | 'signInRefused'> | undefined;
}

export const passwordStep = {
  method: 'password',
  first: true,
  second: false,
  factors: 1,
  phishingResistant: false,
  enrolled: (user) => user.passwordHash !== null,
  verify: verifyPassword,
} as const satisfies Step<PasswordDeps, FormAttempt, never>;

/** The factor a password gives (RFC 8176 §2: `pwd`). */
export function passwordFactor(at: number): Factor {
  return { method: 'password', amr: ['pwd'], at };
}

/** The sign-in form's username and password, throttled (./check.ts). */
async function verifyPassword(deps: PasswordDeps, attempt: FormAttempt): Promise<Verification> {
  const username = attempt.field('username') ?? '';
  const password = attempt.field('password') ?? '';
  const { clientId, requester, now } = attempt;
  const knownDevice = attempt.knownDevice(username);
  const checked = await signIn(
    deps.store,
    deps.throttle,
    { username, password, knownDevice, clientId, requester, now },
    deps.observer,
  );
  if (checked.kind === 'signed-in') return { kind: 'verified', user: checked.user, factor: passwordFactor(now) };
  return checked.kind === 'failed' ? { kind: 'failed', reason: checked.reason } : checked;
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
  deps: PasswordDeps & { minLength: number },
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
