// `tessera users invite --email ADDRESS [--username NAME] [--resend]`: the account made without a
// password and a mail with a link to choose one (src/account/invitations.ts), sent by the running
// server's mail outbox; or a new link for an invitation not yet accepted.
import { inviteUser, resendInvitation } from '../../account/invitations.ts';
import { emailAddress } from '../../account/email.ts';
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import { CLI } from '../../events/index.ts';
import { translator } from '../../i18n/index.ts';
import { mailAvailable } from '../../mail/compose.ts';
import type { User } from '../../store/users.ts';
import { newId } from '../../tokens/opaque.ts';
import { UsageError } from '../operations.ts';
import { type Io, NotFound, parse, requireOption } from './common.ts';
import type { UserStores } from './user-sessions.ts';

/**
 * The account invited at `email` and not yet accepted: without a password, its invitation's link
 * still pending or else no upstream provider linked. Not any account holding the address without a
 * password: one a provider made holds it on the provider's word, maybe unverified, and an invitation
 * sent for it would give the address's owner an account that the provider's person signs in to.
 */
async function invitedAt(store: UserStores, email: string, now: number): Promise<User | undefined> {
  const waiting = (await store.findUsersByEmail(email)).filter((u) => u.passwordHash === null);
  for (const user of waiting) if (await store.liveMailToken(user.id, 'invite', now)) return user;
  for (const user of waiting) if ((await store.listLinks(user.id)).length === 0) return user;
  return undefined;
}

export async function inviteCommand(store: UserStores, config: Config, args: string[], io: Io, now: number) {
  const { values } = parse(args, {
    email: { type: 'string' },
    username: { type: 'string' },
    name: { type: 'string' },
    resend: { type: 'boolean' },
  });
  if (!mailAvailable(config)) {
    throw new UsageError('invitations are sent by mail: set TESSERA_SMTP_URL (docs/mail.md)');
  }
  const email = emailAddress(requireOption(values.email, '--email'));
  if (!email) throw new UsageError(`--email: "${values.email}" is not an email address`);
  // The mail in the deployment's language: the person has not chosen one yet.
  const t = translator(config.defaultLocale);
  const deps = { store, mail: { secret: await resolveSecret(config), mail: config.mail, issuer: config.issuer, t } };
  if (values.resend) {
    const user = values.username ? await store.getUserByUsername(values.username) : await invitedAt(store, email, now);
    if (!user) throw new NotFound(`no invitation for ${values.username ?? email}`);
    const sent = await resendInvitation(deps, { user, requester: CLI, now });
    if (sent === 'accepted') throw new UsageError(`${user.username} has accepted the invitation already`);
    io.out(`invitation sent again to ${user.email} for ${user.username}; earlier links no longer work`);
    return 0;
  }
  const username = values.username ?? email.toLowerCase();
  if (!/^[A-Za-z0-9._@+-]{1,64}$/.test(username)) {
    throw new UsageError('--username: 1 to 64 characters of letters, digits and . _ @ + -');
  }
  if (await store.getUserByUsername(username)) throw new UsageError(`a user named ${username} exists already`);
  const user: User = {
    id: newId(),
    username,
    email,
    emailVerified: false,
    name: values.name ?? null,
    givenName: null,
    familyName: null,
    passwordHash: null,
    disabled: false,
    createdAt: now,
    updatedAt: now,
    roles: [],
  };
  await inviteUser(deps, { user, requester: CLI, now });
  io.out(`invited ${username} (${user.id}): a link to choose a password is on its way to ${email} (7 days)`);
  return 0;
}
