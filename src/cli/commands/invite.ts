// `tessera users invite --email ADDRESS [--username NAME] [--resend]`: the account made without a
// password and a mail with a link to choose one, or a new link for an invitation not yet accepted
// (src/admin/invitations.ts, which the admin API calls too).
import { invitedAt, inviteNewUser, resendUserInvitation } from '../../admin/invitations.ts';
import type { Config } from '../../config/index.ts';
import { resolveSecret } from '../../config/secret.ts';
import { found } from '../../admin/errors.ts';
import { flags, type Io, parse, requireOption, strings } from './common.ts';
import type { UserStores } from './user-sessions.ts';

export async function inviteCommand(store: UserStores, config: Config, args: string[], io: Io, now: number) {
  const { values } = parse(args, { ...strings('email', 'username', 'name'), ...flags('resend') });
  const email = requireOption(values.email, '--email');
  const deps = { config, secret: await resolveSecret(config) };
  if (values.resend) {
    const invited = values.username
      ? await store.getUserByUsername(values.username)
      : await invitedAt(store, email, now);
    const user = found(invited, `no invitation for ${values.username ?? email}`);
    await resendUserInvitation(store, deps, user, { now });
    io.out(`invitation sent again to ${user.email} for ${user.username}; earlier links no longer work`);
    return 0;
  }
  const user = await inviteNewUser(store, deps, { email, username: values.username, name: values.name }, { now });
  io.out(`invited ${user.username} (${user.id}): a link to choose a password is on its way to ${email} (7 days)`);
  return 0;
}
