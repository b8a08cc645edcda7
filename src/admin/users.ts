// The operator's day-2 operations on users, as plain functions over the store: what `tessera users
// update|list|sign-out --session` call, and what an admin API would call alike. Arguments are parsed
// by the caller; a bad value or a conflict is an AdminError with a message for the operator; each
// change records the events the account page would (src/events).
import { CLI, type Requester, securityEvent, type SecurityEvent } from '../events/index.ts';
import type { SessionStore } from '../store/sessions.ts';
import type { User, UserStore } from '../store/users.ts';
import type { UpstreamStore } from '../store/upstream.ts';
import { applyClaimChanges, ClaimError, type HeldClaimChanges } from '../tokens/held-claims.ts';
import { AdminError, ConflictError, found, NotFoundError } from './errors.ts';

/** 1 to 64 letters, digits and `. _ @ + -`: a username. */
export function usernameProblem(username: string): string | undefined {
  return /^[A-Za-z0-9._@+-]{1,64}$/.test(username) ? undefined : '1 to 64 characters of letters, digits and . _ @ + -';
}

/** Something, an @, something, no spaces: an address (the mail server is the judge of the rest). */
export function emailProblem(email: string): string | undefined {
  return /^[^\s@]+@[^\s@]+$/.test(email) && email.length <= 320 ? undefined : `"${email}" is not an email address`;
}

export async function findUserById(store: Pick<UserStore, 'getUserById'>, id: string): Promise<User> {
  return found(await store.getUserById(id), `no user ${id}`);
}

export async function findUser(store: Pick<UserStore, 'getUserByUsername'>, username: string): Promise<User> {
  return found(await store.getUserByUsername(username), `no user ${username}`);
}

export interface ProfileChanges {
  username?: string | undefined;
  email?: string | undefined;
  /** The operator's word that the address (the new one, or the current) is the user's. */
  emailVerified?: boolean | undefined;
  /** An empty string clears it. */
  name?: string | undefined;
  givenName?: string | undefined;
  familyName?: string | undefined;
  /** The standard claims held beyond these (src/tokens/held-claims.ts): a value sets one, null clears it. */
  claims?: HeldClaimChanges | undefined;
}

/** The users.claims value after `changes`, an AdminError naming the option of a bad value. */
export function heldClaimsAfter(raw: string | null | undefined, changes: HeldClaimChanges | undefined) {
  try {
    return applyClaimChanges(raw, changes ?? {});
  } catch (err) {
    if (err instanceof ClaimError)
      throw new AdminError(`--${err.claim.replaceAll('_', '-')}: ${err.message.slice(err.claim.length + 2)}`);
    throw err;
  }
}

/**
 * Changes a user's username, email and names. A new address is unverified unless the operator says
 * it is the user's (`emailVerified`): until a link confirms it, it does not name the user to upstream
 * providers nor receive security notices. A username or an address another account holds is refused.
 * Records `user.updated` (the fields changed) and, when the operator vouches for an address,
 * `user.email_verified` (as the link would; a changed one tells the new address, src/mail/security.ts).
 */
export async function updateUser(
  store: UserStore & Pick<UpstreamStore, 'findUsersByEmail'>,
  username: string,
  changes: ProfileChanges,
  options: { now: number; requester?: Requester },
): Promise<{ user: User; changed: string[] }> {
  const { now, requester = CLI } = options;
  const user = await findUser(store, username);
  const next: User = { ...user };
  if (changes.username !== undefined && changes.username !== user.username) {
    const problem = usernameProblem(changes.username);
    if (problem) throw new AdminError(`--username: ${problem}`);
    if (await store.getUserByUsername(changes.username))
      throw new ConflictError(`--username: a user named ${changes.username} exists already`);
    next.username = changes.username;
  }
  const emailChanged = changes.email !== undefined && changes.email.toLowerCase() !== user.email.toLowerCase();
  if (changes.email !== undefined && changes.email !== user.email) {
    const problem = emailProblem(changes.email);
    if (problem) throw new AdminError(`--email: ${problem}`);
    const holders = (await store.findUsersByEmail(changes.email)).filter((u) => u.id !== user.id);
    if (holders.length > 0)
      throw new ConflictError(`--email: ${changes.email} is the address of another user (${holders[0]!.username})`);
    next.email = changes.email;
    // Another letter case is the same mailbox: its verification stays.
    if (emailChanged) next.emailVerified = false;
  }
  if (changes.emailVerified) next.emailVerified = true;
  const name = (value: string | undefined, current: string | null) =>
    value === undefined ? current : value.trim() === '' ? null : value.trim();
  next.name = name(changes.name, user.name);
  next.givenName = name(changes.givenName, user.givenName);
  next.familyName = name(changes.familyName, user.familyName);
  const held = heldClaimsAfter(user.claims, changes.claims);
  next.claims = held.claims;

  const fields: Array<[string, keyof User]> = [
    ['username', 'username'],
    ['email', 'email'],
    ['email_verified', 'emailVerified'],
    ['name', 'name'],
    ['given_name', 'givenName'],
    ['family_name', 'familyName'],
  ];
  const changed: string[] = [
    ...fields.filter(([, key]) => next[key] !== user[key]).map(([field]) => field),
    ...held.changed,
  ];
  if (changed.length === 0) return { user, changed };
  next.updatedAt = now;
  const renamed: Record<string, string> =
    next.username === user.username ? {} : { previous_username: user.username, username: next.username };
  const events: SecurityEvent[] = [
    securityEvent('user.updated', now, { userId: user.id, requester, data: { changed, ...renamed } }),
  ];
  if (changes.emailVerified && (emailChanged || !user.emailVerified)) {
    const data = { changed: emailChanged, by: 'operator' };
    events.push(securityEvent('user.email_verified', now, { userId: user.id, requester, data }));
  }
  if (!(await store.updateUserProfile(next, events))) throw new NotFoundError(`no user ${username}`);
  return { user: next, changed };
}

/** A page of users: the page, and the cursor of the next when there are more. */
export interface UsersPage {
  users: User[];
  nextCursor: string | null;
}

/** The cursor after `user`: opaque to the operator, the username in the store's order underneath. */
const cursorAfter = (user: User) => Buffer.from(user.username, 'utf8').toString('base64url');

function openCursor(cursor: string): string {
  const username = Buffer.from(cursor, 'base64url').toString('utf8');
  if (username === '' || cursorAfter({ username } as User) !== cursor)
    throw new AdminError('cursor: not the cursor of a page of users');
  return username;
}

/**
 * Users in username order, those matching `search` (username, email or name, any letter case), from
 * `cursor` on, `limit` of them (every one when none). The cursor is the last username shown, so a
 * page is the same whatever users are added or removed before it: no one is shown twice or skipped
 * for someone else's insertion.
 */
export async function listUsers(
  store: Pick<UserStore, 'searchUsers'>,
  query: { search?: string | undefined; limit?: number | undefined; cursor?: string | undefined },
): Promise<UsersPage> {
  const { search, limit, cursor } = query;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 1000))
    throw new AdminError('--limit: a whole number from 1 to 1000');
  const after = cursor === undefined ? undefined : openCursor(cursor);
  const found = await store.searchUsers({
    ...(search ? { search } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(limit !== undefined ? { limit: limit + 1 } : {}),
  });
  if (limit === undefined || found.length <= limit) return { users: found, nextCursor: null };
  const users = found.slice(0, limit);
  return { users, nextCursor: cursorAfter(users.at(-1)!) };
}

/**
 * Ends one session of the user, named by its id or the prefix `users sessions` shows, as a sign-out
 * from that browser would (`user.signed_out`). Grants stay.
 */
export async function signOutSession(
  store: UserStore & SessionStore,
  username: string,
  session: string,
  options: { now: number; requester?: Requester },
): Promise<{ user: User; session: string }> {
  const { now, requester = CLI } = options;
  const user = await findUser(store, username);
  if (!/^[0-9a-f]{6,64}$/.test(session))
    throw new AdminError('--session: the session as "users sessions" shows it (hexadecimal)');
  const matches = (await store.listSessionsOf(user.id, now)).filter((s) => s.id.startsWith(session));
  if (matches.length === 0) throw new NotFoundError(`${user.username} has no session ${session}`);
  if (matches.length > 1)
    throw new AdminError(`--session: ${session} names ${matches.length} sessions; give more of it`);
  const { id } = matches[0]!;
  const data = { session: id.slice(0, 12) };
  const signedOut = securityEvent('user.signed_out', now, { userId: user.id, requester, data });
  await store.deleteSession(id, signedOut, { now });
  return { user, session: id.slice(0, 12) };
}
