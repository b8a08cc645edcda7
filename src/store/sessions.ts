// Browser sessions and the consent remembered per user and client: what the store answers about
// them, the session (camelCase) and its row (./tables.ts), and their Kysely code. Every page and
// authorization request reads the session with its user (and the consent to the client asked about)
// in one statement written out by hand, taken out of the row as object literals.
import type { ExpressionBuilder, OnConflictBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { insertEvents } from './outbox.ts';
import { endSessions } from './session-ends.ts';
import { columns, prefixed, type Prefixed, splitScope } from './columns.ts';
import type { Database, SessionRow, UserRow } from './tables.ts';
import { JOINED_USER, joinedUser, type User } from './users.ts';

/**
 * A factor of the session's sign-in as the store keeps it: the shape of ../authn/factor.ts `Factor`,
 * named here so that the store imports nothing of the sign-in's.
 */
interface Factor {
  method: string;
  amr: string[];
  at: number;
}

/** A browser session: `id` is the SHA-256 of the cookie's value. */
export interface Session {
  id: string;
  userId: string;
  /** When the sign-in began (OIDC `auth_time`: its first factor), epoch seconds; a step-up keeps it. */
  authTime: number;
  /** Each factor of the sign-in, with its time (src/authn/factors.ts). */
  factors: Factor[];
  createdAt: number;
  expiresAt: number;
  /**
   * The session's public id (OIDC `sid`, Back-Channel Logout 1.0 §2.4): random, neither the cookie
   * nor its hash; null for a session from before migration 020.
   */
  sid?: string | null;
}

export interface SessionAndUser {
  session: Session;
  user: User | undefined;
  /** The scopes consented to for the client asked about; undefined when none was asked about. */
  consentedScopes?: string[];
}

/** Browser sessions (id = SHA-256 of the cookie value) and the consent remembered per user and client. */
export interface SessionStore {
  createSession(session: Session, event?: SecurityEvent): Promise<void>;
  /**
   * The live session with its user (undefined when the user no longer exists), read together; with
   * `clientId`, also the scopes the user has consented to for that client.
   */
  getSessionAndUser(id: string, now: number, clientId?: string): Promise<SessionAndUser | undefined>;
  /**
   * Deletes the session; with `logout` (a sign-out, not a session replaced by the same person's next
   * sign-in), also queues a logout token for each client signed in from it (./session-ends.ts), in the
   * same write.
   */
  deleteSession(id: string, event?: SecurityEvent, logout?: { now: number }): Promise<void>;
  /** The user's live sessions, the newest first (`tessera users sessions`). */
  listSessionsOf(userId: string, now: number): Promise<Session[]>;
  /**
   * Ends every session of the user and, with `revokeGrants`, revokes every live grant of the user
   * (its refresh tokens stop, its access tokens turn inactive), with `events`, in one transaction:
   * how many sessions it deleted (expired ones too), and the logout tokens of their clients queued
   * (./logout-deliveries.ts). Consents are kept (`grants revoke --user
   * --client` forgets one).
   */
  signOutEverywhere(
    input: { userId: string; now: number; revokeGrants: boolean },
    events: SecurityEvent[],
  ): Promise<number>;
  getConsentedScopes(userId: string, clientId: string): Promise<string[]>;
  /** Replaces the remembered scopes with `scopes` (callers pass the union). */
  saveConsent(userId: string, clientId: string, scopes: string[], now: number, event?: SecurityEvent): Promise<void>;
}

const SESSION_COLUMNS = columns<SessionRow>()('id user_id auth_time factors created_at expires_at sid');

/** Distinct factors columns kept parsed: beyond, the oldest are forgotten (and parsed again when read). */
const PARSED_KEPT = 10_000;
const parsed = new Map<string, Factor[]>();

/**
 * The factors column: a JSON array. A session from before migration 002 has none recorded: a
 * password at its auth_time was then the only way in. A column's text is parsed once: a session is
 * read by every authorization request of its browser, and its factors change only with a new row
 * (a step-up starts a new session), so the same text always gives the same factors. They are frozen,
 * being shared by every request that reads the row.
 */
export function parseFactors(text: string | null, authTime: number): Factor[] {
  if (text === null) return [{ method: 'password', amr: ['pwd'], at: authTime }];
  let factors = parsed.get(text);
  if (factors === undefined) {
    factors = Object.freeze(parseFactorsText(text).map(freezeFactor)) as Factor[];
    if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
    parsed.set(text, factors);
  }
  return factors;
}

function parseFactorsText(text: string): Factor[] {
  const value = JSON.parse(text) as unknown;
  if (!Array.isArray(value)) return [];
  return value.filter(
    (f): f is Factor =>
      typeof f === 'object' &&
      f !== null &&
      typeof f.method === 'string' &&
      Array.isArray(f.amr) &&
      typeof f.at === 'number',
  );
}

function freezeFactor({ method, amr, at }: Factor): Factor {
  return Object.freeze({ method, amr: Object.freeze([...amr]) as string[], at });
}

function formatFactors(factors: readonly Factor[]): string {
  return JSON.stringify(factors.map(({ method, amr, at }) => ({ method, amr, at })));
}

type SessionUserAndConsent = Prefixed<SessionRow, 's'> & Partial<UserRow> & { c_scope?: string | null };

function toSessionAndUser(row: SessionUserAndConsent | undefined): SessionAndUser | undefined {
  if (!row) return undefined;
  const session = {
    id: row.s_id,
    userId: row.s_user_id,
    authTime: row.s_auth_time,
    factors: parseFactors(row.s_factors, row.s_auth_time),
    createdAt: row.s_created_at,
    expiresAt: row.s_expires_at,
    sid: row.s_sid,
  };
  const user = joinedUser(row);
  return 'c_scope' in row ? { session, user, consentedScopes: splitScope(row.c_scope) } : { session, user };
}

export function fromSession(session: Session): SessionRow {
  return {
    id: session.id,
    user_id: session.userId,
    auth_time: session.authTime,
    factors: formatFactors(session.factors),
    created_at: session.createdAt,
    expires_at: session.expiresAt,
    sid: session.sid ?? null,
  };
}

/** The reads of every page and authorization request, in a database's parameter style. */
function statements(p: (n: number) => string) {
  return {
    consent: `select scope from consents where user_id = ${p(1)} and client_id = ${p(2)}`,
    /** A page: the session and its user. Parameters: the session id, now. */
    sessionAndUser: `select ${prefixed('s', SESSION_COLUMNS)}, ${JOINED_USER}
      from sessions s left join users u on u.id = s.user_id where s.id = ${p(1)} and s.expires_at > ${p(2)}`,
    /** An authorization request: the same and the scopes consented to for the client (third parameter). */
    sessionUserAndConsent: `select ${prefixed('s', SESSION_COLUMNS)}, ${JOINED_USER}, c.scope as c_scope
      from sessions s left join users u on u.id = s.user_id
      left join consents c on c.user_id = s.user_id and c.client_id = ${p(3)}
      where s.id = ${p(1)} and s.expires_at > ${p(2)}`,
  };
}

/** Sessions and consent: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withSessions<Base extends AggregateClass>(Base: Base) {
  abstract class Sessions extends Base implements SessionStore {
    readonly #statements = statements(this.placeholder);

    async createSession(session: Session, event?: SecurityEvent): Promise<void> {
      await this.write(this.db.insertInto('sessions').values(fromSession(session)), ...this.events(event));
    }

    async getSessionAndUser(id: string, now: number, clientId?: string): Promise<SessionAndUser | undefined> {
      if (clientId === undefined)
        return toSessionAndUser(
          (await this.rows<SessionUserAndConsent>(this.#statements.sessionAndUser, [id, now]))[0],
        );
      const text = this.#statements.sessionUserAndConsent;
      return toSessionAndUser((await this.rows<SessionUserAndConsent>(text, [id, now, clientId]))[0]);
    }

    async deleteSession(id: string, event?: SecurityEvent, logout?: { now: number }): Promise<void> {
      const ended = endSessions(this.db, { sessionId: id }, logout ?? { replaced: true });
      await this.write(...ended, ...this.events(event));
    }

    async listSessionsOf(userId: string, now: number): Promise<Session[]> {
      const rows = await this.db
        .selectFrom('sessions')
        .select(SESSION_COLUMNS)
        .where('user_id', '=', userId)
        .where('expires_at', '>', now)
        .orderBy('created_at', 'desc')
        .execute();
      return rows.map((row) => ({
        id: row.id,
        userId: row.user_id,
        authTime: Number(row.auth_time),
        factors: parseFactors(row.factors, Number(row.auth_time)),
        createdAt: Number(row.created_at),
        expiresAt: Number(row.expires_at),
        sid: row.sid,
      }));
    }

    async signOutEverywhere(
      input: { userId: string; now: number; revokeGrants: boolean },
      events: SecurityEvent[],
    ): Promise<number> {
      const live = (eb: ExpressionBuilder<Database, 'grants'>) => eb.and({ user_id: input.userId, revoked_at: null });
      const revoked = input.revokeGrants
        ? [this.db.updateTable('grants').set({ revoked_at: input.now }).where(live)]
        : [];
      // The logout tokens are queued from the sessions and grants before they are deleted and revoked.
      const ended = endSessions(this.db, { userId: input.userId }, { now: input.now });
      const counts = await this.writeCounts(...ended, ...revoked, ...insertEvents(this.db, events));
      return counts[ended.length - 1]!;
    }

    async getConsentedScopes(userId: string, clientId: string): Promise<string[]> {
      const [row] = await this.rows<{ scope: string }>(this.#statements.consent, [userId, clientId]);
      return splitScope(row?.scope);
    }

    async saveConsent(
      userId: string,
      clientId: string,
      scopes: string[],
      now: number,
      event?: SecurityEvent,
    ): Promise<void> {
      const values = { user_id: userId, client_id: clientId, scope: scopes.join(' '), updated_at: now };
      const replace = (c: OnConflictBuilder<Database, 'consents'>) =>
        c.columns(['user_id', 'client_id']).doUpdateSet(values);
      await this.write(this.db.insertInto('consents').values(values).onConflict(replace), ...this.events(event));
    }
  }
  return Sessions;
}
