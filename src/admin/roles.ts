// A user's roles: names the operator gives (`tessera users create|update --role`, `--admin`), which
// a client asking for the `roles` scope sees in its tokens (src/tokens/claims.ts), limited to the
// roles the client may see (`tessera clients update --roles`). The role `admin` is also who may be
// granted the `admin` scope at the authorization endpoint (src/oauth/scopes.ts).
import { CLI, type Requester, securityEvent } from '../events/index.ts';
import type { User, UserStore } from '../store/users.ts';
import { AdminError, NotFoundError } from './errors.ts';
import { findUser } from './users.ts';

/** 1 to 64 lowercase letters, digits and `- _ : .`: a role's name, as it goes into tokens. */
export function roleProblem(role: string): string | undefined {
  return /^[a-z0-9_:.-]{1,64}$/.test(role)
    ? undefined
    : `"${role}" is not a role name (1 to 64 lowercase letters, digits and - _ : .)`;
}

/** The names, each checked (an AdminError naming `option` for the first bad one), without repeats. */
export function checkRoles(roles: readonly string[], option: string): string[] {
  for (const role of roles) {
    const problem = roleProblem(role);
    if (problem) throw new AdminError(`${option}: ${problem}`);
  }
  return [...new Set(roles)];
}

export interface RoleChanges {
  /** Roles given (`--role`, `--admin`). */
  add?: readonly string[] | undefined;
  /** Roles taken away (`--no-role`, `--no-admin`). */
  remove?: readonly string[] | undefined;
}

/**
 * Gives and takes away a user's roles. A role both given and taken away is refused; giving one the
 * user has, or taking away one they lack, changes nothing. Records `user.roles_changed` with the
 * roles `added` and `removed` and the user's `roles` after, when anything changed. Tokens issued
 * before keep what they say until they expire; the next refresh, userinfo and ID token say the new.
 */
export async function changeUserRoles(
  store: UserStore,
  username: string,
  changes: RoleChanges,
  options: { now: number; requester?: Requester },
): Promise<{ user: User; added: string[]; removed: string[] }> {
  const { now, requester = CLI } = options;
  const add = checkRoles(changes.add ?? [], '--role');
  const remove = checkRoles(changes.remove ?? [], '--no-role');
  const both = add.filter((role) => remove.includes(role));
  if (both.length > 0) throw new AdminError(`${both.join(', ')}: given and taken away at once`);
  const user = await findUser(store, username);
  const added = add.filter((role) => !user.roles.includes(role));
  const removed = remove.filter((role) => user.roles.includes(role));
  if (added.length === 0 && removed.length === 0) return { user, added, removed };
  const roles = [...user.roles.filter((role) => !removed.includes(role)), ...added];
  const data = { added, removed, roles };
  const event = securityEvent('user.roles_changed', now, { userId: user.id, requester, data });
  if (!(await store.setUserRoles(user.id, roles, now, [event]))) throw new NotFoundError(`no user ${username}`);
  return { user: { ...user, roles, updatedAt: now }, added, removed };
}
