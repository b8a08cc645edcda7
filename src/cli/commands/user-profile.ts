// `tessera users update USERNAME …`, the page of `users list [--search TEXT] [--limit N] [--cursor C]`
// and `users sign-out USERNAME --session ID`: the arguments read, the work done by src/admin/users.ts,
// the outcome said.
import { changeUserRoles } from '../../admin/roles.ts';
import { listUsers, signOutSession, type UsersPage, updateUser } from '../../admin/users.ts';
import { parseHeldClaims } from '../../tokens/held-claims.ts';
import { UsageError } from '../operations.ts';
import { CLAIM_OPTIONS, claimChanges } from './user-claims.ts';
import { flags, type Io, JSON_OPTION, negations, parse, repeatable, requirePositional, strings } from './common.ts';
import type { UserStores } from './user-sessions.ts';
import { ADMIN_ROLE } from '../../store/users.ts';

/** What `users create` and `users update` both take. */
export const USER_OPTIONS = {
  ...strings('username', 'email', 'name', 'given-name', 'family-name'),
  ...flags('email-verified', 'admin'),
  ...repeatable('role'),
  ...CLAIM_OPTIONS,
};

export async function updateCommand(store: UserStores, args: string[], io: Io, now: number): Promise<number> {
  const options = { ...USER_OPTIONS, ...repeatable('no-role'), ...negations('admin'), ...JSON_OPTION };
  const { values, positionals } = parse(args, options, 1);
  const roles = {
    add: [...(values.role ?? []), ...(values.admin ? [ADMIN_ROLE] : [])],
    remove: [...(values['no-role'] ?? []), ...(values['no-admin'] ? [ADMIN_ROLE] : [])],
  };
  const rolesChange = roles.add.length > 0 || roles.remove.length > 0;
  const username = requirePositional(positionals, 'the username');
  const changes = {
    username: values.username,
    email: values.email,
    emailVerified: values['email-verified'],
    name: values.name,
    givenName: values['given-name'],
    familyName: values['family-name'],
  };
  const claims = claimChanges(values);
  const profileChange = Object.values(changes).some((value) => value !== undefined) || Object.keys(claims).length > 0;
  if (!profileChange && !rolesChange) {
    throw new UsageError('users update needs a change: --username, --email, --email-verified, --name, --role, …');
  }
  const profile = profileChange
    ? await updateUser(store, username, { ...changes, claims }, { now })
    : { user: undefined, changed: [] as string[] };
  // The roles after the profile: a rename in the same command is already made.
  const roleChange = rolesChange
    ? await changeUserRoles(store, profile.user?.username ?? username, roles, { now })
    : { user: undefined, added: [] as string[], removed: [] as string[] };
  const user = roleChange.user ?? profile.user!;
  const { added, removed } = roleChange;
  const changed = [...profile.changed, ...(added.length > 0 || removed.length > 0 ? ['roles'] : [])];
  if (values.json) {
    const { id, email, emailVerified, name, givenName, familyName } = user;
    const described = { id, username: user.username, email, email_verified: emailVerified, name };
    const names = { given_name: givenName, family_name: familyName };
    io.out(
      JSON.stringify(
        { ...described, ...names, roles: user.roles, claims: parseHeldClaims(user.claims), changed },
        null,
        2,
      ),
    );
  } else if (changed.length === 0) io.out(`${username}: nothing to change`);
  else {
    if (profile.changed.length > 0) io.out(`updated ${user.username}: ${profile.changed.join(', ')}`);
    if (added.length > 0) io.out(`${user.username}: roles given: ${added.join(' ')}`);
    if (removed.length > 0) io.out(`${user.username}: roles taken away: ${removed.join(' ')}`);
    if (changed.includes('email') && !user.emailVerified) {
      io.out(`${user.email} is unverified until the user confirms it (or add --email-verified)`);
    }
  }
  return 0;
}

/** The options of `users list` that make it a search or a page. */
export const PAGE_OPTIONS = strings('search', 'limit', 'cursor');

/** The users `users list` shows, and whether it was asked for a page (which then says where the next begins). */
export async function userPage(
  store: UserStores,
  values: { search?: string | undefined; limit?: string | undefined; cursor?: string | undefined },
): Promise<UsersPage & { paged: boolean }> {
  if (values.limit !== undefined && !/^\d+$/.test(values.limit))
    throw new UsageError('--limit: a whole number from 1 to 1000');
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  const page = await listUsers(store, { search: values.search, limit, cursor: values.cursor });
  return { ...page, paged: values.limit !== undefined || values.cursor !== undefined };
}

export async function signOutOneSession(
  store: UserStores,
  positionals: string[],
  values: { session?: string | undefined; grants?: boolean | undefined },
  io: Io,
  now: number,
): Promise<number> {
  if (values.grants) throw new UsageError('--grants is for every session: give --session or --grants, not both');
  const username = requirePositional(positionals, 'the username');
  const ended = await signOutSession(store, username, values.session!, { now });
  io.out(`signed ${ended.user.username} out of session ${ended.session}; applications keep their access`);
  return 0;
}
