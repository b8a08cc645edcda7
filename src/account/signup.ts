// Sign-up (issue 34, TESSERA_SIGNUP=open): a person chooses a username and a password and gives an
// address (of TESSERA_SIGNUP_DOMAINS, when set); the account exists only once the link sent to the
// address is followed (24 hours), so nobody signs in with an address that is not theirs. Until then
// the account waits in the link's token (its password as an argon2id hash). Asking is throttled per
// source address (ten an hour) and per mailbox asked for (three an hour, silently; a `+tag` reaches
// the same one, ./email.ts); an address that names an account already (../store/users.ts
// addressOwners) gets the same answer and no mail.
import { securityEvent, type Requester } from '../events/index.ts';
import { hashPassword } from '../authn/password/hash.ts';
import { brokenPasswordRule, type PasswordRule } from '../authn/password/rules.ts';
import { composeMail, type MailDeps } from '../mail/compose.ts';
import { LINK_TTL, linkTokenHash, newLinkToken } from '../authn/mail-link/tokens.ts';
import { addressKey, type Refusal, Throttle, type ThrottlePolicy } from '../authn/throttle.ts';
import type { MailStore } from '../store/mails.ts';
import type { ThrottleStore } from '../store/throttles.ts';
import type { UpstreamStore } from '../store/upstream.ts';
import { addressOwners, type User, type UserStore } from '../store/users.ts';
import { newId } from '../tokens/opaque.ts';
import { emailAddress, recipientKey } from './email.ts';

const ADDRESS_POLICY: ThrottlePolicy = { freeFailures: 10, lockAfter: 10, lockSeconds: 3600, window: 3600 };
const EMAIL_POLICY: ThrottlePolicy = { freeFailures: 3, lockAfter: 3, lockSeconds: 3600, window: 3600 };

export interface SignupDeps {
  store: UserStore & MailStore & ThrottleStore & Pick<UpstreamStore, 'findUsersByEmail'>;
  mail: MailDeps;
  minLength: number;
  /** TESSERA_SIGNUP_DOMAINS: empty for any. */
  domains: readonly string[];
}

export type SignupProblem = 'username' | 'email' | 'domain' | 'taken';

export type SignupOutcome =
  | { kind: 'sent' }
  | { kind: 'invalid'; problem: SignupProblem }
  | { kind: 'rejected'; rule: PasswordRule }
  | { kind: 'refused'; refusal: Refusal };

interface PendingAccount {
  id: string;
  username: string;
  passwordHash: string;
}

export async function requestSignup(
  deps: SignupDeps,
  input: { username: string; email: string; password: string; requester: Requester; now: number },
): Promise<SignupOutcome> {
  const { now } = input;
  const username = input.username.trim();
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(username)) return { kind: 'invalid', problem: 'username' };
  const email = emailAddress(input.email);
  if (!email) return { kind: 'invalid', problem: 'email' };
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (deps.domains.length > 0 && !deps.domains.includes(domain)) return { kind: 'invalid', problem: 'domain' };
  const rule = brokenPasswordRule(input.password, { minLength: deps.minLength, username });
  if (rule) return { kind: 'rejected', rule };
  // A quota of mails (onSuccess `keep`): each request counts as it is made (src/authn/throttle.ts).
  const keys = [
    { key: `signup-address:${addressKey(input.requester.ip)}`, subject: 'sign-up', policy: ADDRESS_POLICY },
    recipientKey('signup', email, EMAIL_POLICY),
  ].map((key) => ({ ...key, onSuccess: 'keep' as const }));
  const attempt = await new Throttle(deps.store).begin(keys, now);
  if (attempt.refused) {
    if (attempt.refused.key === keys[1]!.key) return { kind: 'sent' };
    return { kind: 'refused', refusal: attempt.refused };
  }
  if (await deps.store.getUserByUsername(username)) return { kind: 'invalid', problem: 'taken' };
  const account: PendingAccount = { id: newId(), username, passwordHash: await hashPassword(input.password) };
  const { token, hash } = newLinkToken();
  const mail = composeMail(deps.mail, { kind: 'signup', to: email, userId: null, path: signupPath(token) }, now);
  const event = securityEvent('user.registration_requested', now, { requester: input.requester, data: { domain } });
  // An address that names an account already: the same answer, and no mail. One that an account
  // holds unconfirmed (an upstream provider's unverified word) names nobody and takes nothing away.
  if (addressOwners(await deps.store.findUsersByEmail(email)).length > 0) return { kind: 'sent' };
  const stored = {
    hash,
    purpose: 'signup' as const,
    userId: null,
    email,
    stamp: null,
    data: JSON.stringify(account),
    createdAt: now,
    expiresAt: now + LINK_TTL.signup,
    usedAt: null,
  };
  await deps.store.queueMail({ mail, token: stored, event });
  return { kind: 'sent' };
}

export function signupPath(token: string): string {
  return `/signup/confirm?token=${encodeURIComponent(token)}`;
}

/** The link followed: the account made, its address verified, the link used, in one write. */
export async function confirmSignup(
  deps: Pick<SignupDeps, 'store'>,
  input: { token: string | undefined; requester: Requester; now: number },
): Promise<'created' | 'taken' | 'invalid'> {
  const { now } = input;
  const hash = linkTokenHash(input.token);
  const token = hash ? await deps.store.getMailToken(hash) : undefined;
  if (!token || token.purpose !== 'signup' || token.usedAt !== null || token.expiresAt <= now || !token.data) {
    return 'invalid';
  }
  const account = JSON.parse(token.data) as PendingAccount;
  const user: User = {
    id: account.id,
    username: account.username,
    email: token.email,
    emailVerified: true,
    name: null,
    givenName: null,
    familyName: null,
    passwordHash: account.passwordHash,
    disabled: false,
    createdAt: now,
    updatedAt: now,
    roles: [],
  };
  const event = securityEvent('user.registered', now, { userId: user.id, requester: input.requester });
  const redemption = { hash: token.hash, purpose: 'signup' as const, now, nonce: newId() };
  if (await deps.store.redeemMailToken(redemption, { kind: 'account', user }, { event })) return 'created';
  // The username was taken meanwhile (the link is used up), or another use of the link came first.
  const holder = await deps.store.getUserByUsername(user.username);
  return holder && holder.id !== user.id ? 'taken' : 'invalid';
}
