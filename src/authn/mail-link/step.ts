// The mail-link step: following a password reset's link (src/account/reset.ts sends it) proves
// control of the account's address. A first step, of one factor, never a second: a user with a second
// factor gives it after the link (the policy asks for it) before choosing a password. RFC 8176 names
// no method for a link by mail, so the factor adds no amr value. The link's token is single use,
// stored hashed, and bound to the password it was issued under: any change of password kills it.
import type { MailStore, MailToken } from '../../store/mails.ts';
import type { User, UserStore } from '../../store/users.ts';
import { linkTokenHash, passwordStamp } from './tokens.ts';
import type { Factor } from '../factor.ts';
import { ARRIVING_STEP, type Step, type Verification } from '../step.ts';

/** The factor following a mail's link proves: control of the account's address. */
export const MAIL_LINK = 'mail-link';

export type MailLinkStore = UserStore & Pick<MailStore, 'getMailToken'>;

/** A reset link as its page brings it: the token of the mail, or the hash a later page carries. */
export interface MailLinkAttempt {
  token?: string | undefined;
  hash?: string | undefined;
  now: number;
}

// Whether a user can follow a link is whether they have an address, which is not a step they enrol:
// the policy asks `enrolled` only of steps that may follow another.
export const mailLinkStep = { method: MAIL_LINK, ...ARRIVING_STEP, verify: verifyMailLink } as const satisfies Step<
  MailLinkStore,
  MailLinkAttempt,
  never
>;

/** The link's factor, followed at `now`. */
export function mailLinkFactor(now: number): Factor {
  return { method: MAIL_LINK, amr: [], at: now };
}

/** A reset link that still works: unused, unexpired, of a user who can sign in, under the same password. */
export async function openReset(
  store: MailLinkStore,
  input: MailLinkAttempt,
): Promise<{ token: MailToken; user: User } | undefined> {
  const hash = input.hash ?? linkTokenHash(input.token);
  const token = hash ? await store.getMailToken(hash) : undefined;
  if (!token || token.purpose !== 'reset' || token.usedAt !== null || token.expiresAt <= input.now) return undefined;
  const user = token.userId ? await store.getUserById(token.userId) : undefined;
  if (!user || user.disabled || passwordStamp(user.passwordHash) !== token.stamp) return undefined;
  return { token, user };
}

/**
 * Following the link: its user and factor, for a sign-in that goes back to the reset's password page
 * (/reset/password, which accepts only a session begun by this link).
 */
async function verifyMailLink(store: MailLinkStore, attempt: MailLinkAttempt): Promise<Verification> {
  const opened = await openReset(store, attempt);
  if (!opened) return { kind: 'failed', reason: 'link_dead' };
  const resume = `/reset/password?reset=${opened.token.hash}`;
  const carried = { resume, clientId: null };
  return { kind: 'verified', user: opened.user, factor: mailLinkFactor(attempt.now), carried };
}
