// Password reset by mail (issue 34). Asking answers the same whether or not an account exists, and
// does the same work either way (a token made, a message composed and encrypted, one write of the
// same statements); the mail and its token are written only for an account that exists. Asking is
// throttled before anything is sent: per account (a few an hour: nobody's inbox is bombed), per
// recipient across accounts (accounts that share an address), and per source address (more: an office
// shares one), each counted in one conditional write (src/authn/throttle.ts), so parallel requests get
// no more than patient ones. A request has no right answer to hold back for: it is a mail asked for,
// whether the account exists or not (to count only those for accounts would tell which exist), so
// every request counts as it is made, a quota rather than a count of failures; none waits for another,
// and a request is refused only by requests already made. The link's token is single use, stored
// hashed, lives 30 minutes, and is bound to the password it was issued under: any change of password,
// by any route, kills it. Following it is a factor (`mail-link`, its step src/authn/mail-link/step.ts);
// a user with a second factor is asked for it (the sign-in policy, src/authn/policy.ts) before the new
// password is set. Until the password is set that sign-in is no session (src/http/sign-in.ts holds it
// sealed for the reset's page), so no client can take it. Setting it ends every session; then the
// sign-in becomes this browser's session, with the factors given: the link, and the second factor if
// asked. The new password is not one of them: choosing it proves nothing the link did not.
import { securityEvent, type Requester } from '../events/index.ts';
import type { Factor } from '../authn/factor.ts';
import { hashPassword } from '../authn/password/hash.ts';
import { brokenPasswordRule, type PasswordRule } from '../authn/password/rules.ts';
import { nextStep } from '../authn/policy.ts';
import { ANY_SIGN_IN } from '../authn/requirement.ts';
import { openReset } from '../authn/mail-link/step.ts';
import { enrolledMethods } from '../authn/registry.ts';
import type { EnrolmentStore } from '../authn/step.ts';
import { recipientKey } from './email.ts';
import { composeMail, type MailDeps } from '../mail/compose.ts';
import { LINK_TTL, newLinkToken, passwordStamp } from '../authn/mail-link/tokens.ts';
import { addressKey, type Refusal, Throttle, type ThrottleKey, type ThrottlePolicy } from '../authn/throttle.ts';
import type { EventStore } from '../store/events.ts';
import type { MailStore, MailToken } from '../store/mails.ts';
import type { ThrottleStore } from '../store/throttles.ts';
import type { UpstreamStore } from '../store/upstream.ts';
import { addressOwners, type User } from '../store/users.ts';
import { newId } from '../tokens/opaque.ts';

/** Resets asked per account: three an hour. */
export const RESET_ACCOUNT_POLICY: ThrottlePolicy = { freeFailures: 3, lockAfter: 3, lockSeconds: 3600, window: 3600 };
/** Resets asked per source address: thirty an hour. */
export const RESET_ADDRESS_POLICY: ThrottlePolicy = {
  freeFailures: 30,
  lockAfter: 30,
  lockSeconds: 3600,
  window: 3600,
};

export interface ResetDeps {
  store: EnrolmentStore &
    MailStore &
    ThrottleStore &
    EventStore &
    Pick<UpstreamStore, 'findUsersByEmail' | 'listLinks' | 'getProvider'>;
  mail: MailDeps;
  minLength: number;
}

/** The account a username or an address names (addressOwners), if exactly one does. */
export async function findAccount(store: ResetDeps['store'], identifier: string): Promise<User | undefined> {
  const named = identifier.trim();
  if (named === '') return undefined;
  const user = await store.getUserByUsername(named);
  if (user) return user;
  if (!named.includes('@')) return undefined;
  const owners = addressOwners(await store.findUsersByEmail(named));
  return owners.length === 1 ? owners[0] : undefined;
}

/**
 * "Forgot your password?": the same answer whatever the account (`answered`), unless the address
 * asked too often (`refused`, which says nothing of any account).
 */
export async function requestPasswordReset(
  deps: ResetDeps,
  input: { identifier: string; requester: Requester; now: number },
): Promise<{ kind: 'answered' } | { kind: 'refused'; refusal: Refusal }> {
  const { now, requester } = input;
  const user = await findAccount(deps.store, input.identifier.slice(0, 320));
  const account = user ? `user:${user.id}` : `name:${input.identifier.trim().toLowerCase().slice(0, 320)}`;
  // Where the mail would go; for no account, what was typed, so that its count behaves as one would.
  const recipient = user && user.email !== '' ? user.email : input.identifier;
  // Quotas (onSuccess `keep`, see above).
  const keys: ThrottleKey[] = [
    { key: `reset-address:${addressKey(requester.ip)}`, subject: 'password-reset', policy: RESET_ADDRESS_POLICY },
    { key: `reset-account:${account}`, subject: user?.username ?? 'password-reset', policy: RESET_ACCOUNT_POLICY },
    recipientKey('reset', recipient),
  ].map((key) => ({ ...key, onSuccess: 'keep' }));
  const attempt = await new Throttle(deps.store).begin(keys, now);
  if (attempt.refused) {
    // Too many for the account or its address: answered as usual, and nothing sent.
    if (attempt.refused.key !== keys[0]!.key) return { kind: 'answered' };
    return { kind: 'refused', refusal: attempt.refused };
  }
  await queueResetMail(deps, user, { requester, now });
  return { kind: 'answered' };
}

/**
 * The reset mail to `user` and its link's token, with `user.password_reset_requested`, in one write;
 * for no account (or one that cannot sign in), the event alone in a write of the same shape (a decoy),
 * so that the work done says nothing of which accounts exist. Also what an operator sends for a user
 * (src/admin/invitations.ts), with `by` in the event's data.
 */
export async function queueResetMail(
  deps: { store: MailStore; mail: MailDeps },
  user: User | undefined,
  input: { requester: Requester; now: number; by?: 'operator' },
): Promise<{ sent: boolean }> {
  const { requester, now } = input;
  // The same work whether or not the account exists: a token, a message, an encryption, one write.
  const { token, hash } = newLinkToken();
  const to = user?.email ?? 'nobody@invalid';
  const mail = composeMail(deps.mail, { kind: 'reset', to, userId: user?.id ?? null, path: resetPath(token) }, now);
  const deliverable = user !== undefined && !user.disabled && user.email !== '';
  const event = securityEvent('user.password_reset_requested', now, {
    userId: deliverable ? user.id : null,
    requester,
    data: { sent: deliverable, ...(input.by ? { by: input.by } : {}) },
  });
  const stored: MailToken = {
    hash,
    purpose: 'reset',
    userId: user?.id ?? null,
    email: to,
    stamp: passwordStamp(user?.passwordHash ?? null),
    data: null,
    createdAt: now,
    expiresAt: now + LINK_TTL.reset,
    usedAt: null,
  };
  // No account (or none that can sign in): the event alone, in a write of the same shape.
  await deps.store.queueMail({ mail, token: stored, event, decoy: !deliverable });
  return { sent: deliverable };
}

export function resetPath(token: string): string {
  return `/reset?token=${encodeURIComponent(token)}`;
}

/**
 * What the link's follower must still do before choosing a password: nothing (`ready`), or the
 * steps the policy asks of a user with a second factor, after the link's factor.
 */
export async function resetNeeds(
  store: EnrolmentStore,
  opened: { user: User },
  factors: readonly Factor[],
): Promise<{ kind: 'ready' } | { kind: 'steps'; methods: string[] }> {
  const enrolled = await enrolledMethods(store, opened.user);
  const next = nextStep(factors, ANY_SIGN_IN, enrolled);
  if (next.kind === 'step') return { kind: 'steps', methods: next.methods };
  return { kind: 'ready' };
}

export type ResetOutcome =
  /**
   * The password set and every session ended: the user, whose sign-in may now become a session, and
   * `linked`, the names of the upstream providers that still sign the user in without a password.
   */
  | { kind: 'reset'; user: User; linked: string[] }
  | { kind: 'invalid' }
  /** The user has a second factor not yet given. */
  | { kind: 'second-factor' }
  | { kind: 'rejected'; rule: PasswordRule };

/**
 * The new password, under the password rules; the token used, the password set and every session
 * ended in one write, only while the password is still the one the link was issued under.
 * `factors`: what the follower has done (the link's factor, and a second one when the user has one).
 */
export async function completePasswordReset(
  deps: ResetDeps,
  input: {
    token?: string;
    hash?: string;
    factors: readonly Factor[];
    password: string;
    requester: Requester;
    now: number;
  },
): Promise<ResetOutcome> {
  const { now } = input;
  const opened = await openReset(deps.store, input);
  if (!opened) return { kind: 'invalid' };
  const { user, token } = opened;
  if ((await resetNeeds(deps.store, opened, input.factors)).kind !== 'ready') return { kind: 'second-factor' };
  const rule = brokenPasswordRule(input.password, { minLength: deps.minLength, username: user.username });
  if (rule) return { kind: 'rejected', rule };
  const passwordHash = await hashPassword(input.password);
  // A link made by whoever had the account stays: the person is told of each, and so is the audit trail.
  const links = await deps.store.listLinks(user.id);
  const data = links.length === 0 ? undefined : { linked_providers: links.map((l) => l.providerId) };
  const event = securityEvent('user.password_reset', now, {
    userId: user.id,
    requester: input.requester,
    ...(data ? { data } : {}),
  });
  const effect = {
    kind: 'password',
    userId: user.id,
    previous: user.passwordHash,
    passwordHash,
    // The link reached the address: it is the user's.
    verifyEmail: token.email,
  } as const;
  const redemption = { hash: token.hash, purpose: 'reset' as const, now, nonce: newId() };
  const done = await deps.store.redeemMailToken(redemption, effect, { event });
  if (!done) return { kind: 'invalid' };
  const names = await Promise.all(links.map(async (l) => (await deps.store.getProvider(l.providerId))?.name));
  return { kind: 'reset', user, linked: names.filter((name) => name !== undefined) };
}
