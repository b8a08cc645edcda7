// Reads that go together, as one statement (a join) each: a refresh request needs the token, its
// grant and its user; a page the session and its user, and an authorization request also the
// scopes the user has consented to for the client. On PostgreSQL every statement saved is a round
// trip.
import type { User } from './store.ts';
import { toUser } from './kysely-store.ts';
import { GRANT_COLUMNS, REFRESH_TOKEN_COLUMNS, SESSION_COLUMNS, USER_COLUMNS } from './columns.ts';
import type { GrantRow, RefreshTokenRow, SessionRow, UserRow } from './types.ts';

export interface RefreshTokenFamily {
  token: RefreshTokenRow;
  /** Undefined once housekeeping has removed the grant. */
  grant: GrantRow | undefined;
  /** Undefined once the user has been deleted. */
  user: User | undefined;
}

/** `select … from …`, every column prefixed by its table's letter: t_, g_, u_. */
export const REFRESH_TOKEN_FAMILY_SELECT = [
  ...REFRESH_TOKEN_COLUMNS.map((c) => `t.${c} as t_${c}`),
  ...GRANT_COLUMNS.map((c) => `g.${c} as g_${c}`),
  ...USER_COLUMNS.map((c) => `u.${c} as u_${c}`),
].join(', ');
export const REFRESH_TOKEN_FAMILY_FROM = 'refresh_tokens t left join grants g on g.id = t.grant_id left join users u on u.id = t.user_id';

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
    user: row.u_id == null ? undefined : toUser(part<UserRow>(row, 'u_', USER_COLUMNS)),
  };
}

export interface SessionAndUser {
  session: SessionRow;
  user: User | undefined;
  /** The scopes consented to for the client asked about; undefined when none was. */
  consentedScopes?: string[];
}

export const SESSION_AND_USER_SELECT = [...SESSION_COLUMNS.map((c) => `s.${c} as s_${c}`), ...USER_COLUMNS.map((c) => `u.${c} as u_${c}`)].join(', ');
export const SESSION_AND_USER_FROM = 'sessions s left join users u on u.id = s.user_id';
/** With the consent too: its one parameter, the client id, comes before the WHERE clause's. */
export const SESSION_USER_AND_CONSENT_SELECT = `${SESSION_AND_USER_SELECT}, c.scope as c_scope`;
export const SESSION_USER_AND_CONSENT_FROM = `${SESSION_AND_USER_FROM} left join consents c on c.user_id = s.user_id and c.client_id =`;

export function toSessionAndUser(row: Record<string, unknown> | undefined): SessionAndUser | undefined {
  if (!row) return undefined;
  return {
    session: part<SessionRow>(row, 's_', SESSION_COLUMNS),
    user: row.u_id == null ? undefined : toUser(part<UserRow>(row, 'u_', USER_COLUMNS)),
    ...('c_scope' in row ? { consentedScopes: typeof row.c_scope === 'string' ? row.c_scope.split(' ').filter((s) => s !== '') : [] } : {}),
  };
}
