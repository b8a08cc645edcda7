// Verified email (issue 34): `email_verified` is true only once the user followed a link sent to the
// address (or the operator said so). A change of address on the account page (which needs a recent
// sign-in, src/authn/recent.ts) sends the link to the new address and takes effect only when it is
// followed; the old address (if verified) and the new one are then told (src/mail/security.ts).
// Asking is throttled per account (five an hour), and per recipient across accounts (five an hour):
// many accounts asking for one address do not flood it.
import { securityEvent, type Requester } from '../events/index.ts';
import { composeMail, type MailDeps } from '../mail/compose.ts';
import { noticeMail } from '../mail/security.ts';
import { LINK_TTL, linkTokenHash, newLinkToken } from '../authn/mail-link/tokens.ts';
import { type Refusal, Throttle, type ThrottleKey, type ThrottlePolicy } from '../authn/throttle.ts';
import type { MailStore } from '../store/mails.ts';
import type { ThrottleStore } from '../store/throttles.ts';
import type { User, UserStore } from '../store/users.ts';
import { newId } from '../tokens/opaque.ts';
import { recentSignIn } from '../authn/recent.ts';
import type { BrowserSession } from '../authn/session.ts';
import { shortfall } from '../authn/sufficiency.ts';

const VERIFY_POLICY: ThrottlePolicy = { freeFailures: 5, lockAfter: 5, lockSeconds: 3600, window: 3600 };

/** Mails with a link to one recipient, of one kind, whoever asks for them: five an hour. */
export const RECIPIENT_POLICY: ThrottlePolicy = { freeFailures: 5, lockAfter: 5, lockSeconds: 3600, window: 3600 };

/**
 * The throttle key of the mails of `kind` sent to `address`, whichever account or source address asks
 * (mail bombing: many accounts naming one victim). Kinds count apart, so that mails someone else asks
 * for (an address change to the victim's) never use up the victim's own (their reset). Counted
 * whatever becomes of the request, as every mail key is.
 */
export function recipientKey(
  kind: 'verify' | 'reset' | 'signup',
  address: string,
  policy: ThrottlePolicy = RECIPIENT_POLICY,
): ThrottleKey {
  const mailbox = mailboxOf(address);
  return { key: `mail-to:${kind}:${mailbox}`, subject: `mail-to:${mailbox}`, policy, onSuccess: 'keep' };
}

/**
 * The mailbox an address reaches, as far as Tessera can tell: case-insensitively, and without a
 * subaddress (`ada+anything@example.com`, RFC 5233), which most mail servers deliver to `ada`.
 */
export function mailboxOf(address: string): string {
  const email = address.trim().toLowerCase().slice(0, 320);
  const at = email.lastIndexOf('@');
  return at < 0 ? email : `${email.slice(0, at).replace(/\+.*$/, '')}${email.slice(at)}`;
}

export interface EmailDeps {
  store: UserStore & MailStore & ThrottleStore;
  mail: MailDeps;
}

/** A plausible address (the mail server is the judge of the rest), normalised. */
export function emailAddress(value: string | undefined): string | undefined {
  const email = (value ?? '').trim();
  return email.length <= 320 && /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(email) ? email : undefined;
}

export function verificationPath(token: string): string {
  return `/verify?token=${encodeURIComponent(token)}`;
}

/** Sends the link that confirms `email` as the user's address (their current one, or a new one). */
export async function requestEmailVerification(
  deps: EmailDeps,
  input: { user: User; email: string; requester: Requester; now: number },
): Promise<{ kind: 'sent' } | { kind: 'refused'; refusal: Refusal }> {
  const { user, email, now } = input;
  // Quotas of mails (onSuccess `keep`): each request counts as it is made (src/authn/throttle.ts).
  const keys = [
    { key: `verify-account:${user.id}`, subject: user.username, policy: VERIFY_POLICY, onSuccess: 'keep' as const },
    recipientKey('verify', email),
  ];
  const attempt = await new Throttle(deps.store).begin(keys, now);
  if (attempt.refused) return { kind: 'refused', refusal: attempt.refused };
  const { token, hash } = newLinkToken();
  const mail = composeMail(
    deps.mail,
    { kind: 'verify', to: email, userId: user.id, path: verificationPath(token) },
    now,
  );
  const changing = email.toLowerCase() !== user.email.toLowerCase();
  const event = securityEvent(changing ? 'user.email_change_requested' : 'user.email_verified', now, {
    userId: user.id,
    requester: input.requester,
    data: { sent: true },
  });
  const stored = {
    hash,
    purpose: 'verify' as const,
    userId: user.id,
    email,
    stamp: null,
    data: null,
    createdAt: now,
    expiresAt: now + LINK_TTL.verify,
    usedAt: null,
  };
  await deps.store.queueMail({ mail, token: stored, event, replaces: { userId: user.id, purpose: 'verify', now } });
  return { kind: 'sent' };
}

/**
 * The account page's form: a new address (or the current one, unconfirmed, again), which needs a
 * recent sign-in; the change waits for the link sent to it.
 */
export async function changeEmail(
  deps: EmailDeps,
  input: { session: BrowserSession; user: User; email: string | undefined; requester: Requester; now: number },
): Promise<{ kind: 'sent' } | { kind: 'refused'; refusal: Refusal } | { kind: 'invalid' } | { kind: 'reauth' }> {
  const email = emailAddress(input.email);
  if (!email) return { kind: 'invalid' };
  if (shortfall(input.session, input.user, recentSignIn(input.now))) return { kind: 'reauth' };
  return requestEmailVerification(deps, { user: input.user, email, requester: input.requester, now: input.now });
}

/** The link followed: the address becomes the user's, verified; the old address is told of a change. */
export async function confirmEmail(
  deps: EmailDeps,
  input: { token: string | undefined; requester: Requester; now: number },
): Promise<'confirmed' | 'invalid'> {
  const { now } = input;
  const hash = linkTokenHash(input.token);
  const token = hash ? await deps.store.getMailToken(hash) : undefined;
  if (!token || token.purpose !== 'verify' || token.usedAt !== null || token.expiresAt <= now) return 'invalid';
  const user = token.userId ? await deps.store.getUserById(token.userId) : undefined;
  if (!user || user.disabled) return 'invalid';
  const changed = user.email !== '' && user.email.toLowerCase() !== token.email.toLowerCase();
  const event = securityEvent('user.email_verified', now, {
    userId: user.id,
    requester: input.requester,
    data: { changed },
  });
  // The old address is told here, in the same write (the new one by the notifications' consumer,
  // src/mail/security.ts), if it was verified: an unverified one may be someone else's.
  const notice =
    changed && user.emailVerified && deps.mail.mail.securityNotices
      ? noticeMail(deps.mail, { event, kind: 'email', to: user.email }, now)
      : undefined;
  const done = await deps.store.redeemMailToken(
    { hash: token.hash, purpose: 'verify', now, nonce: newId() },
    { kind: 'email', userId: user.id, email: token.email },
    { event, ...(notice ? { mail: notice } : {}) },
  );
  return done ? 'confirmed' : 'invalid';
}
