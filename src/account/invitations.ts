// Invitations (issue 34): the operator invites a person by address (`tessera users invite`); the
// account is made at once, without a password, and a mail carries a link (7 days, single use) where
// the person chooses one, which also confirms the address. The sign-in policy then asks for whatever
// else it requires (a second factor) at the first sign-in. A resend ends the earlier links.
import { securityEvent, type Requester } from '../events/index.ts';
import { hashPassword } from '../authn/password/hash.ts';
import { brokenPasswordRule, type PasswordRule } from '../authn/password/rules.ts';
import { composeMail, type MailDeps } from '../mail/compose.ts';
import { LINK_TTL, linkTokenHash, newLinkToken, passwordStamp } from '../authn/mail-link/tokens.ts';
import type { MailStore, MailToken } from '../store/mails.ts';
import type { User, UserStore } from '../store/users.ts';
import { newId } from '../tokens/opaque.ts';

export interface InvitationDeps {
  store: UserStore & MailStore;
  mail: MailDeps;
}

export function invitationPath(token: string): string {
  return `/invite?token=${encodeURIComponent(token)}`;
}

function inviteToken(user: User, hash: string, now: number): MailToken {
  return {
    hash,
    purpose: 'invite',
    userId: user.id,
    email: user.email,
    stamp: passwordStamp(null),
    data: null,
    createdAt: now,
    expiresAt: now + LINK_TTL.invite,
    usedAt: null,
  };
}

/** Makes the account (no password yet) and writes its invitation, in one write. */
export async function inviteUser(
  deps: InvitationDeps,
  input: { user: User; requester: Requester; now: number },
): Promise<void> {
  const { user, now } = input;
  const { token, hash } = newLinkToken();
  const mail = composeMail(
    deps.mail,
    { kind: 'invite', to: user.email, userId: user.id, path: invitationPath(token) },
    now,
  );
  const event = securityEvent('user.invited', now, { userId: user.id, requester: input.requester });
  await deps.store.queueMail({ newUser: user, mail, token: inviteToken(user, hash, now), event });
}

/** A new link for an invitation not yet accepted (the account has no password), ending the earlier ones. */
export async function resendInvitation(
  deps: InvitationDeps,
  input: { user: User; requester: Requester; now: number },
): Promise<'sent' | 'accepted'> {
  const { user, now } = input;
  if (user.passwordHash !== null) return 'accepted';
  const { token, hash } = newLinkToken();
  const mail = composeMail(
    deps.mail,
    { kind: 'invite', to: user.email, userId: user.id, path: invitationPath(token) },
    now,
  );
  const event = securityEvent('user.invited', now, {
    userId: user.id,
    requester: input.requester,
    data: { resent: true },
  });
  const replaces = { userId: user.id, purpose: 'invite' as const, now };
  await deps.store.queueMail({ mail, token: inviteToken(user, hash, now), event, replaces });
  return 'sent';
}

/** An invitation's link that still works, and its user (still without a password). */
export async function openInvitation(
  store: InvitationDeps['store'],
  token: string | undefined,
  now: number,
): Promise<{ token: MailToken; user: User } | undefined> {
  const hash = linkTokenHash(token);
  const found = hash ? await store.getMailToken(hash) : undefined;
  if (!found || found.purpose !== 'invite' || found.usedAt !== null || found.expiresAt <= now) return undefined;
  const user = found.userId ? await store.getUserById(found.userId) : undefined;
  if (!user || user.disabled || user.passwordHash !== null) return undefined;
  return { token: found, user };
}

/** The password chosen from the link: set, the address confirmed and the link used, in one write. */
export async function acceptInvitation(
  deps: InvitationDeps & { minLength: number },
  input: { token: string; password: string; requester: Requester; now: number },
): Promise<{ kind: 'accepted'; user: User } | { kind: 'invalid' } | { kind: 'rejected'; rule: PasswordRule }> {
  const { now } = input;
  const opened = await openInvitation(deps.store, input.token, now);
  if (!opened) return { kind: 'invalid' };
  const { user, token } = opened;
  const rule = brokenPasswordRule(input.password, { minLength: deps.minLength, username: user.username });
  if (rule) return { kind: 'rejected', rule };
  const passwordHash = await hashPassword(input.password);
  const event = securityEvent('user.invitation_accepted', now, { userId: user.id, requester: input.requester });
  const effect = { kind: 'password', userId: user.id, previous: null, passwordHash, verifyEmail: token.email } as const;
  const redemption = { hash: token.hash, purpose: 'invite' as const, now, nonce: newId() };
  const done = await deps.store.redeemMailToken(redemption, effect, { event });
  return done ? { kind: 'accepted', user } : { kind: 'invalid' };
}
