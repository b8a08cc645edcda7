// A grant's row (./tables.ts) as a grant (./grant.ts), and the reads of every token, introspection and
// userinfo request, written out by hand in a database's parameter style and taken out of their rows
// as object literals (the hot writes, ./sqlite/store.ts and ./postgres/store.ts, pass a grant's
// values in GRANT_COLUMNS' order).
import type { AccessTokenState, Grant, TokenFamily } from './grant.ts';
import { columns, type Placeholder, prefixed, type Prefixed } from './columns.ts';
import type { GrantRow, UserRow } from './tables.ts';
import { JOINED_USER, joinedUser } from './users.ts';

export const GRANT_COLUMNS = columns<GrantRow>()(
  'id user_id client_id scope auth_time created_at revoked_at',
  'refresh_generation refresh_expires_at refresh_issued_at resource amr acr claims_request sid dpop_jkt',
);

/** The grant's field of each column: the hot writes pass a grant's values in GRANT_COLUMNS' order. */
export const GRANT_FIELDS = {
  id: 'id',
  user_id: 'userId',
  client_id: 'clientId',
  scope: 'scope',
  auth_time: 'authTime',
  created_at: 'createdAt',
  revoked_at: 'revokedAt',
  refresh_generation: 'refreshGeneration',
  refresh_expires_at: 'refreshExpiresAt',
  refresh_issued_at: 'refreshIssuedAt',
  resource: 'resource',
  amr: 'amr',
  acr: 'acr',
  claims_request: 'claimsRequest',
  sid: 'sid',
  dpop_jkt: 'dpopJkt',
} as const satisfies Record<(typeof GRANT_COLUMNS)[number], keyof Grant>;

/** A grant's row as the reads here take it: its columns under the prefix g_ (GRANT_COLUMNS). */
export type PrefixedGrantRow = Prefixed<GrantRow, 'g'>;

export function toGrant(row: PrefixedGrantRow): Grant {
  return {
    id: row.g_id,
    userId: row.g_user_id,
    clientId: row.g_client_id,
    scope: row.g_scope,
    authTime: row.g_auth_time,
    createdAt: row.g_created_at,
    revokedAt: row.g_revoked_at,
    refreshGeneration: row.g_refresh_generation,
    refreshExpiresAt: row.g_refresh_expires_at,
    refreshIssuedAt: row.g_refresh_issued_at,
    resource: row.g_resource,
    amr: row.g_amr,
    acr: row.g_acr,
    // Only when the authorization request had a claims parameter.
    ...(row.g_claims_request != null ? { claimsRequest: row.g_claims_request } : {}),
    sid: row.g_sid ?? null,
    ...(row.g_dpop_jkt != null ? { dpopJkt: row.g_dpop_jkt } : {}),
  };
}

/** A grant joined with its user: the grant under the prefix g_, the user's columns under their own names. */
export type FamilyRow = PrefixedGrantRow & Partial<UserRow>;

export function toTokenFamily(row: FamilyRow | undefined): TokenFamily | undefined {
  if (!row) return undefined;
  return { grant: toGrant(row), user: joinedUser(row) };
}

export type AccessTokenRow = Partial<UserRow> & {
  g_id: string | null;
  g_revoked_at: number | string | null;
  g_claims_request?: string | null;
  revoked: number | string;
};

export function toAccessTokenState(row: AccessTokenRow | undefined): AccessTokenState {
  const revokedAt = row?.g_revoked_at == null ? null : Number(row.g_revoked_at);
  const asked = row?.g_claims_request != null ? { claimsRequest: row.g_claims_request } : {};
  const grant = row?.g_id == null ? undefined : { id: row.g_id, revokedAt, ...asked };
  return { user: joinedUser(row), grant, revoked: Number(row?.revoked ?? 0) > 0 };
}

/** The reads of every token, introspection and userinfo request, in a database's parameter style. */
export function grantReads(p: Placeholder) {
  return {
    grant: `select ${prefixed('g', GRANT_COLUMNS)} from grants g where g.id = ${p(1)}`,
    /** A user's live grants, newest first, with their clients' names. Parameters: the user's id, now. */
    activeGrants: `select ${prefixed('g', GRANT_COLUMNS)}, c.name as client_name
      from grants g left join clients c on c.client_id = g.client_id
      where g.user_id = ${p(1)} and g.revoked_at is null and g.refresh_expires_at > ${p(2)}
      order by g.created_at desc`,
    /** A refresh: the grant and its user. Parameter: the grant's id. */
    tokenFamily: `select ${prefixed('g', GRANT_COLUMNS)}, ${JOINED_USER}
      from grants g left join users u on u.id = g.user_id where g.id = ${p(1)}`,
    /**
     * An access token's user, grant and own revocation. Parameters: `sub`, `grant_id`, `jti`. Always
     * one row (from a one-row source), so that a missing user or grant still reads as absent.
     */
    accessTokenState: `select ${JOINED_USER}, g.id as g_id, g.revoked_at as g_revoked_at,
        g.claims_request as g_claims_request,
        (select count(*) from revoked_access_tokens r where r.jti = ${p(3)}) as revoked
      from (select 1 as one) x left join users u on u.id = ${p(1)} left join grants g on g.id = ${p(2)}`,
  };
}
