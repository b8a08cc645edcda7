// A refresh request needs the token, its grant and its user: one statement (a join) instead of
// three, which on PostgreSQL is two round trips fewer per refresh.
import type { User } from './store.ts';
import { toUser } from './kysely-store.ts';
import { GRANT_COLUMNS, REFRESH_TOKEN_COLUMNS, USER_COLUMNS } from './columns.ts';
import type { GrantRow, RefreshTokenRow, UserRow } from './types.ts';

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
