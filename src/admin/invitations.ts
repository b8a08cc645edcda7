// The mails an operator sends for people: an invitation (`tessera users invite`, POST
// /admin/api/v1/invitations): the account made without a password and a mail with a link to choose
// one (src/account/invitations.ts); a new link for an invitation not yet accepted, ending the earlier
// ones; and a password reset's mail (POST /admin/api/v1/users/{id}/password-reset). The running
// server's mail outbox sends them.
import { emailAddress } from '../account/email.ts';
import { inviteUser, resendInvitation } from '../account/invitations.ts';
import { queueResetMail } from '../account/reset.ts';
import type { Config } from '../config/index.ts';
import { CLI, type Requester } from '../events/index.ts';
import { translator } from '../i18n/index.ts';
import { mailAvailable } from '../mail/compose.ts';
import type { MailStore } from '../store/mails.ts';
import type { UpstreamStore } from '../store/upstream.ts';
import type { User, UserStore } from '../store/users.ts';
import type { Secrets } from '../tokens/secrets.ts';
import { newId } from '../tokens/opaque.ts';
import { AdminError, ConflictError } from './errors.ts';
import { usernameProblem } from './users.ts';

type Store = UserStore & MailStore & Pick<UpstreamStore, 'findUsersByEmail' | 'listLinks'>;

interface Options {
  now: number;
  requester?: Requester | undefined;
}

/** The mail's dependencies, in the deployment's language (the person has not chosen one yet). */
function mailDeps(store: Store, config: Config, secret: Secrets) {
  if (!mailAvailable(config)) throw new AdminError('this is sent by mail: set TESSERA_SMTP_URL (docs/mail.md)');
  const t = translator(config.defaultLocale);
  return { store, mail: { secret, mail: config.mail, issuer: config.issuer, t } };
}

/**
 * The account invited at `email` and not yet accepted: without a password, its invitation's link
 * still pending or else no upstream provider linked. Not any account holding the address without a
 * password: one a provider made holds it on the provider's word, maybe unverified, and an invitation
 * sent for it would give the address's owner an account that the provider's person signs in to.
 */
export async function invitedAt(store: Store, email: string, now: number): Promise<User | undefined> {
  const waiting = (await store.findUsersByEmail(email)).filter((u) => u.passwordHash === null);
  for (const user of waiting) if (await store.liveMailToken(user.id, 'invite', now)) return user;
  for (const user of waiting) if ((await store.listLinks(user.id)).length === 0) return user;
  return undefined;
}

/** Invites a person at `email` (`user.invited`): the account, named `username` or the address. */
export async function inviteNewUser(
  store: Store,
  deps: { config: Config; secret: Secrets },
  input: { email: string; username?: string | undefined; name?: string | undefined },
  options: Options,
): Promise<User> {
  const mail = mailDeps(store, deps.config, deps.secret);
  const email = emailAddress(input.email);
  if (!email) throw new AdminError(`--email: "${input.email}" is not an email address`);
  const username = input.username ?? email.toLowerCase();
  const problem = usernameProblem(username);
  if (problem) throw new AdminError(`--username: ${problem}`);
  if (await store.getUserByUsername(username)) throw new ConflictError(`a user named ${username} exists already`);
  const { now, requester = CLI } = options;
  const user: User = {
    id: newId(),
    username,
    email,
    emailVerified: false,
    name: input.name ?? null,
    givenName: null,
    familyName: null,
    passwordHash: null,
    disabled: false,
    createdAt: now,
    updatedAt: now,
    roles: [],
  };
  await inviteUser(mail, { user, requester, now });
  return user;
}

/**
 * A new link for the user's invitation (`user.invited`, resent), the earlier ones ended; a
 * ConflictError once accepted.
 */
export async function resendUserInvitation(
  store: Store,
  deps: { config: Config; secret: Secrets },
  user: User,
  options: Options,
): Promise<void> {
  const { now, requester = CLI } = options;
  const sent = await resendInvitation(mailDeps(store, deps.config, deps.secret), { user, requester, now });
  if (sent === 'accepted') throw new ConflictError(`${user.username} has accepted the invitation already`);
}

/**
 * A password reset's mail to the user (`user.password_reset_requested`, `by: operator`): a link to
 * choose a new password (30 minutes, single use), as "Forgot your password?" sends. Not to a disabled
 * user, who could not sign in after.
 */
export async function sendPasswordReset(
  store: Store,
  deps: { config: Config; secret: Secrets },
  user: User,
  options: Options,
): Promise<void> {
  const mail = mailDeps(store, deps.config, deps.secret);
  if (user.disabled) throw new ConflictError(`${user.username} is disabled: enable them first`);
  const { now, requester = CLI } = options;
  await queueResetMail(mail, user, { requester, now, by: 'operator' });
}
