// Column lists for the statements written out by hand (./sqlite-writes.ts, ./joins.ts), checked
// against the row types: a column added to a row type must be added here.
import type { GrantRow, RefreshTokenRow, SessionRow, UserRow } from './types.ts';

export const GRANT_COLUMNS = ['id', 'user_id', 'client_id', 'scope', 'auth_time', 'created_at', 'revoked_at', 'refresh_generation', 'refresh_expires_at', 'refresh_issued_at'] as const satisfies ReadonlyArray<keyof GrantRow>;
export const REFRESH_TOKEN_COLUMNS = ['token_hash', 'grant_id', 'client_id', 'user_id', 'scope', 'auth_time', 'created_at', 'expires_at', 'consumed_at'] as const satisfies ReadonlyArray<keyof RefreshTokenRow>;
export const SESSION_COLUMNS = ['id', 'user_id', 'auth_time', 'created_at', 'expires_at'] as const satisfies ReadonlyArray<keyof SessionRow>;
export const USER_COLUMNS = ['id', 'username', 'email', 'email_verified', 'name', 'given_name', 'family_name', 'password_hash', 'disabled', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof UserRow>;

// Each list must name every column of its row type, too.
type Missing<Row, List extends ReadonlyArray<keyof Row>> = Exclude<keyof Row, List[number]>;
const complete: [
  Missing<GrantRow, typeof GRANT_COLUMNS>, Missing<RefreshTokenRow, typeof REFRESH_TOKEN_COLUMNS>,
  Missing<SessionRow, typeof SESSION_COLUMNS>, Missing<UserRow, typeof USER_COLUMNS>,
] extends [never, never, never, never] ? true : false = true;
void complete;
