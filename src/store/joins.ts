// Reads that go together, as one statement (a join) each: a refresh request needs the grant (which
// holds its refresh tokens' state) and its user, or for a token of an earlier release the token,
// its grant and its user; a page the session and its user, and an authorization request also the
// scopes the user has consented to for the client; an access token presented to userinfo,
// introspection or revocation its user, its grant, and whether it was revoked by itself. On
// PostgreSQL every statement saved is a round trip.
import type { User } from './store.ts';
import { toUser } from './kysely-store.ts';
import { GRANT_COLUMNS, REFRESH_TOKEN_COLUMNS, SESSION_COLUMNS, USER_COLUMNS } from './columns.ts';
import type { GrantRow, RefreshTokenRow, SessionRow, UserRow } from './types.ts';

export interface AccessTokenState {
  /** Undefined when the user has been deleted. */
  user: User | undefined;
  /** Undefined once housekeeping has removed the grant. */
  grant: Pick<GrantRow, 'id' | 'revoked_at'> | undefined;
  /** Whether the token itself was revoked (RFC 7009). */
  revoked: boolean;
}

/** A grant, which holds its refresh tokens' state, and its user. */
export interface TokenFamily {
  grant: GrantRow;
  /** Undefined once the user has been deleted. */
  user: User | undefined;
}

/** A refresh token of an earlier release (refresh_tokens), its grant and its user. */
export interface RefreshTokenFamily {
  token: RefreshTokenRow;
  /** Undefined once housekeeping has removed the grant. */
  grant: GrantRow | undefined;
  /** Undefined once the user has been deleted. */
  user: User | undefined;
}

/** How a dialect writes the n-th parameter: `?n` on SQLite, `$n` on PostgreSQL. */
export type Placeholder = (n: number) => string;
export const sqliteParameter: Placeholder = (n) => `?${n}`;
export const postgresParameter: Placeholder = (n) => `$${n}`;

const prefixed = (table: string, columns: readonly string[]) => columns.map((c) => `${table}.${c} as ${table}_${c}`).join(', ');

/** A token of an earlier release. Parameter: the token's key. Columns are prefixed t_, g_, u_. */
export function refreshTokenFamilySql(p: Placeholder): string {
  return `select ${prefixed('t', REFRESH_TOKEN_COLUMNS)}, ${prefixed('g', GRANT_COLUMNS)}, ${prefixed('u', USER_COLUMNS)}
    from refresh_tokens t left join grants g on g.id = t.grant_id left join users u on u.id = t.user_id
    where t.token_hash = ${p(1)}`;
}

/** Parameter: the grant's id. Columns are prefixed g_ and u_. */
export function tokenFamilySql(p: Placeholder): string {
  return `select ${prefixed('g', GRANT_COLUMNS)}, ${prefixed('u', USER_COLUMNS)}
    from grants g left join users u on u.id = g.user_id where g.id = ${p(1)}`;
}

/**
 * PostgreSQL only: Store.rotateValidTokenFamily's statement, for a batch of refreshes
 * (./batches.ts). Parameters, one array each with an element per refresh: now, the grant, the
 * generation presented, the client, the absolute lifetime, the lifetime. Returns each grant that
 * was rotated (g_) with its user (u_); a refresh whose conditions do not hold has no row.
 */
export const ROTATE_VALID_TOKEN_FAMILIES_SQL = `with v as (
      select * from unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::bigint[], $6::bigint[])
        as v(now, grant_id, generation, client_id, absolute_ttl, ttl)
    ), g as (
      update grants set refresh_generation = grants.refresh_generation + 1, refresh_issued_at = v.now,
        refresh_expires_at = least(v.now + v.ttl, grants.created_at + v.absolute_ttl)
      from v
      where grants.id = v.grant_id and grants.refresh_generation = v.generation and grants.client_id = v.client_id
        and grants.revoked_at is null and grants.refresh_expires_at > v.now and grants.created_at > v.now - v.absolute_ttl
        and exists (select 1 from users u where u.id = grants.user_id and u.disabled = 0)
      returning grants.*
    )
    select ${prefixed('g', GRANT_COLUMNS)}, ${prefixed('u', USER_COLUMNS)} from g join users u on u.id = g.user_id`;

/**
 * Parameters: the token's `sub`, `grant_id` and `jti`. Always one row (from a one-row source), so
 * that a missing user or grant still reads as absent.
 */
export function accessTokenStateSql(p: Placeholder): string {
  return `select ${prefixed('u', USER_COLUMNS)}, g.id as g_id, g.revoked_at as g_revoked_at,
      (select count(*) from revoked_access_tokens r where r.jti = ${p(3)}) as revoked
    from (select 1 as one) x left join users u on u.id = ${p(1)} left join grants g on g.id = ${p(2)}`;
}

export function toAccessTokenState(row: Record<string, unknown> | undefined): AccessTokenState {
  return {
    user: userOf(row),
    grant: row?.g_id == null ? undefined : { id: row.g_id as string, revoked_at: row.g_revoked_at == null ? null : Number(row.g_revoked_at) },
    revoked: Number(row?.revoked ?? 0) > 0,
  };
}

/** Parameters: the session id, now, and (`withConsent`) the client whose consent is read too. */
export function sessionAndUserSql(p: Placeholder, withConsent: boolean): string {
  return `select ${prefixed('s', SESSION_COLUMNS)}, ${prefixed('u', USER_COLUMNS)}${withConsent ? ', c.scope as c_scope' : ''}
    from sessions s left join users u on u.id = s.user_id
    ${withConsent ? `left join consents c on c.user_id = s.user_id and c.client_id = ${p(3)}` : ''}
    where s.id = ${p(1)} and s.expires_at > ${p(2)}`;
}

/** The user joined in under the prefix u_, or undefined when there was none. */
function userOf(row: Record<string, unknown> | undefined): User | undefined {
  return row?.u_id == null ? undefined : toUser(part<UserRow>(row, 'u_', USER_COLUMNS));
}

function part<T>(row: Record<string, unknown>, prefix: string, columns: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const column of columns) out[column] = row[`${prefix}${column}`];
  return out as T;
}

export function toRefreshTokenFamily(row: Record<string, unknown> | undefined): RefreshTokenFamily | undefined {
  if (!row) return undefined;
  return {
    token: part<RefreshTokenRow>(row, 't_', REFRESH_TOKEN_COLUMNS),
    grant: row.g_id == null ? undefined : part<GrantRow>(row, 'g_', GRANT_COLUMNS),
    user: userOf(row),
  };
}

export function toTokenFamily(row: Record<string, unknown> | undefined): TokenFamily | undefined {
  if (!row) return undefined;
  return { grant: part<GrantRow>(row, 'g_', GRANT_COLUMNS), user: userOf(row) };
}

export interface SessionAndUser {
  session: SessionRow;
  user: User | undefined;
  /** The scopes consented to for the client asked about; undefined when none was. */
  consentedScopes?: string[];
}

export function toSessionAndUser(row: Record<string, unknown> | undefined): SessionAndUser | undefined {
  if (!row) return undefined;
  return {
    session: part<SessionRow>(row, 's_', SESSION_COLUMNS),
    user: userOf(row),
    ...('c_scope' in row ? { consentedScopes: typeof row.c_scope === 'string' ? row.c_scope.split(' ').filter((s) => s !== '') : [] } : {}),
  };
}
