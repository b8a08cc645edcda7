// Users: what the store answers about them, the user (camelCase) and its row (./tables.ts) both ways,
// and their Kysely code. A user is read on every refresh, userinfo and authorization request, with
// their session or grant (./sessions.ts, ./grants.ts): those reads join the user's columns under their
// own names (JOINED_USER; the other tables' under a prefix), so the row is read as a user's row as it
// is, with nothing copied on the way.
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { Aggregate, type Connection } from './aggregate.ts';
import { insertEvents } from './outbox.ts';
import { endSessions } from './session-ends.ts';
import { columns, splitScope } from './columns.ts';
import type { Database, UserRow } from './tables.ts';

/** The role that may administer Tessera (`--admin`): who may be granted the `admin` scope. */
export const ADMIN_ROLE = 'admin';

export interface User {
  id: string;
  username: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  passwordHash: string | null;
  disabled: boolean;
  createdAt: number;
  updatedAt: number;
  /** The roles the operator gave (src/admin/roles.ts), in the order given; none: []. */
  roles: string[];
  /**
   * The standard claims held beyond the fields above, users.claims as it is read (a JSON object,
   * src/tokens/held-claims.ts, parsed only when a request asks for one of them); null or absent: none.
   */
  claims?: string | null;
}

export interface UserStore {
  createUser(user: User, event?: SecurityEvent): Promise<void>;
  getUserById(id: string): Promise<User | undefined>;
  getUserByUsername(username: string): Promise<User | undefined>;
  listUsers(): Promise<User[]>;
  /** Ends every session of the user too; returns false when no such user exists. */
  setUserPassword(id: string, passwordHash: string, now: number, event?: SecurityEvent): Promise<boolean>;
  /**
   * Disabling ends every session of the user too, stops their apps and webhooks while disabled and
   * revokes the grants issued to their apps; returns false when no such user exists.
   */
  setUserDisabled(id: string, disabled: boolean, now: number, event?: SecurityEvent): Promise<boolean>;
  /**
   * Deletes the user, ends their sessions, revokes their grants and forgets their consents, and deletes
   * their passkeys, their links to upstream providers, the apps they registered (revoking what was
   * issued to them) and their webhooks; false when none.
   */
  deleteUser(id: string, now: number, event?: SecurityEvent): Promise<boolean>;
  /** A new password, and every session of the user but `keepSession` ended, in one transaction. */
  changePassword(
    input: { userId: string; passwordHash: string; now: number; keepSession: string },
    event: SecurityEvent,
  ): Promise<void>;
  countUsers(): Promise<number>;
  /**
   * Writes the user's username, email, its verification, names and held claims (`tessera users update`,
   * the account page's profile); false when none.
   */
  updateUserProfile(user: User, events: SecurityEvent[]): Promise<boolean>;
  /**
   * Users in username order after `after` (a cursor: the last username of the page before), those
   * whose username, email or name contain `search` (any letter case), at most `limit` (all when none).
   */
  searchUsers(query: { search?: string; after?: string; limit?: number }): Promise<User[]>;
  /** Writes the user's roles (`tessera users update --role`), with their events; false when none. */
  setUserRoles(id: string, roles: readonly string[], now: number, events: SecurityEvent[]): Promise<boolean>;
}

export const USER_COLUMNS = columns<UserRow>()(
  'id username email email_verified name given_name family_name password_hash',
  'disabled created_at updated_at roles claims',
);

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    emailVerified: row.email_verified === 1,
    name: row.name,
    givenName: row.given_name,
    familyName: row.family_name,
    passwordHash: row.password_hash,
    disabled: row.disabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    roles: splitScope(row.roles),
    // Only when the user holds some: most users read as they did before migration 019.
    ...(row.claims != null ? { claims: row.claims } : {}),
  };
}

/** `u.id as id, …`: the user's columns in a join, from the table aliased `u`, under their own names. */
export const JOINED_USER = USER_COLUMNS.map((c) => `u.${c} as ${c}`).join(', ');

/** The user joined in (JOINED_USER), or undefined when there was none (a left join's nulls). */
export function joinedUser(row: Partial<UserRow> | undefined): User | undefined {
  if (row?.id == null) return undefined;
  return toUser(row as UserRow);
}

export function fromUser(user: User): UserRow {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    email_verified: user.emailVerified ? 1 : 0,
    name: user.name,
    given_name: user.givenName,
    family_name: user.familyName,
    password_hash: user.passwordHash,
    disabled: user.disabled ? 1 : 0,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    roles: user.roles.join(' '),
    claims: user.claims ?? null,
  };
}

/**
 * Of the users that have an address (UpstreamStore.findUsersByEmail), those it names: whoever has it
 * verified; when nobody has, whoever has a password (an address the operator gave). An address nobody
 * confirmed on an account without a password is an upstream provider's unverified word, or an
 * invitation not yet accepted: it names nobody, so it never stands in the way of the address's owner
 * (docs/upstream-providers.md, "Whose address it is").
 */
export function addressOwners(holders: readonly User[]): User[] {
  const verified = holders.filter((u) => u.emailVerified);
  return verified.length > 0 ? verified : holders.filter((u) => u.passwordHash !== null);
}

type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;

export class Users extends Aggregate implements UserStore {
  /** Read on every refresh and userinfo request: written out by hand (SQLite prepares it once). */
  readonly #byId: string;

  constructor(connection: Connection) {
    super(connection);
    this.#byId = `select * from users where id = ${connection.placeholder(1)}`;
  }

  async createUser(user: User, event?: SecurityEvent): Promise<void> {
    await this.write(this.db.insertInto('users').values(fromUser(user)), ...this.events(event));
  }

  async getUserById(id: string): Promise<User | undefined> {
    const [row] = await this.rows<UserRow>(this.#byId, [id]);
    return row && toUser(row);
  }

  async getUserByUsername(username: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return row && toUser(row);
  }

  async listUsers(): Promise<User[]> {
    return (await this.db.selectFrom('users').selectAll().orderBy('username').execute()).map(toUser);
  }

  async setUserPassword(id: string, passwordHash: string, now: number, event?: SecurityEvent): Promise<boolean> {
    const set = { password_hash: passwordHash, updated_at: now };
    const updated = this.db.updateTable('users').set(set).where('id', '=', id);
    // Whoever signed in with the old password is signed out, and the clients they signed in to are told
    // (Back-Channel Logout 1.0); grants (refresh tokens) stay.
    const ended = endSessions(this.db, { userId: id }, { now });
    return this.changeOne(event, updated, ...ended);
  }

  /**
   * Disabling signs the user out everywhere (the clients told, Back-Channel Logout 1.0). Their own
   * grants are refused while they are disabled (the refresh, userinfo and introspection read the user
   * anyway), not revoked. What acts for them stops
   * too, for as long: their apps are no clients (./clients.ts getClient) and their webhooks deliver
   * nothing (./outbox.ts, ./webhook-turns.ts); but the grants issued to their apps, whose tokens are
   * checked without reading the app's owner, are revoked in the same write, as deleting does.
   */
  async setUserDisabled(id: string, disabled: boolean, now: number, event?: SecurityEvent): Promise<boolean> {
    const set = { disabled: disabled ? 1 : 0, updated_at: now };
    const updated = this.db.updateTable('users').set(set).where('id', '=', id);
    const stopped = disabled ? [...endSessions(this.db, { userId: id }, { now }), this.#revokeAppGrants(id, now)] : [];
    return this.changeOne(event, updated, ...stopped);
  }

  /** The grants issued to the apps `id` registered (RFC 7591), revoked at `now`. */
  #revokeAppGrants(id: string, now: number) {
    const apps = this.db.selectFrom('clients').select('client_id').where('owner_id', '=', id);
    const appGrants = (eb: Where<'grants'>) => eb.and([eb('client_id', 'in', apps), eb('revoked_at', 'is', null)]);
    return this.db.updateTable('grants').set({ revoked_at: now }).where(appGrants);
  }

  /**
   * The user and what is theirs, in one write: sessions (the clients told, Back-Channel Logout 1.0, from
   * the sessions and grants as they were), consents, and grants revoked; the apps they
   * registered (RFC 7591) deleted, with their registration tokens, the grants issued to them revoked
   * and the consents to them forgotten; their webhooks deleted with the deliveries not yet made.
   * Nothing a deleted user set up keeps working, or keeps hearing of others.
   */
  async deleteUser(id: string, now: number, event?: SecurityEvent): Promise<boolean> {
    const live = (eb: Where<'grants'>) => eb.and({ user_id: id, revoked_at: null });
    const apps = this.db.selectFrom('clients').select('client_id').where('owner_id', '=', id);
    const webhooks = this.db.selectFrom('webhooks').select('id').where('owner_id', '=', id);
    const undelivered = (eb: Where<'webhook_deliveries'>) =>
      eb.and([eb('webhook_id', 'in', webhooks), eb('status', '=', 'pending')]);
    return (
      (await this.write(
        this.db.deleteFrom('users').where('id', '=', id),
        ...endSessions(this.db, { userId: id }, { now }),
        this.db.deleteFrom('consents').where('user_id', '=', id),
        this.db.deleteFrom('passkeys').where('user_id', '=', id),
        this.db.deleteFrom('totp_credentials').where('user_id', '=', id),
        this.db.deleteFrom('recovery_codes').where('user_id', '=', id),
        // The person's accounts at upstream providers no longer lead here (src/upstream).
        this.db.deleteFrom('upstream_links').where('user_id', '=', id),
        this.db.updateTable('grants').set({ revoked_at: now }).where(live),
        this.#revokeAppGrants(id, now),
        this.db.deleteFrom('consents').where('client_id', 'in', apps),
        this.db.deleteFrom('clients').where('owner_id', '=', id),
        this.db.deleteFrom('webhook_deliveries').where(undelivered),
        this.db.deleteFrom('webhooks').where('owner_id', '=', id),
        ...this.events(event),
      )) === 1
    );
  }

  async changePassword(
    input: { userId: string; passwordHash: string; now: number; keepSession: string },
    event: SecurityEvent,
  ): Promise<void> {
    const set = { password_hash: input.passwordHash, updated_at: input.now };
    await this.write(
      this.db.updateTable('users').set(set).where('id', '=', input.userId),
      ...this.endOtherSessions(input.userId, input.keepSession, input.now),
      ...this.events(event),
    );
  }

  async updateUserProfile(user: User, events: SecurityEvent[]): Promise<boolean> {
    const { username, email, email_verified, name, given_name, family_name, updated_at, claims } = fromUser(user);
    const set = { username, email, email_verified, name, given_name, family_name, updated_at, claims };
    const updated = this.db.updateTable('users').set(set).where('id', '=', user.id);
    return (await this.write(updated, ...insertEvents(this.db, events))) === 1;
  }

  async setUserRoles(id: string, roles: readonly string[], now: number, events: SecurityEvent[]): Promise<boolean> {
    const set = { roles: roles.join(' '), updated_at: now };
    const updated = this.db.updateTable('users').set(set).where('id', '=', id);
    return (await this.write(updated, ...insertEvents(this.db, events))) === 1;
  }

  async searchUsers(query: { search?: string; after?: string; limit?: number }): Promise<User[]> {
    let select = this.db.selectFrom('users').selectAll();
    if (query.after !== undefined) select = select.where('username', '>', query.after);
    if (query.search) {
      // LIKE's own characters are matched as themselves; lower() on both sides: PostgreSQL's LIKE minds case.
      const pattern = `%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const like = (column: 'username' | 'email' | 'name') =>
        sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
      select = select.where((eb) => eb.or([like('username'), like('email'), like('name')]));
    }
    if (query.limit !== undefined) select = select.limit(query.limit);
    return (await select.orderBy('username').execute()).map(toUser);
  }

  async countUsers(): Promise<number> {
    const count = (eb: { fn: Kysely<Database>['fn'] }) => eb.fn.countAll<number | string>().as('n');
    return Number((await this.db.selectFrom('users').select(count).executeTakeFirstOrThrow()).n);
  }
}
