// Grants (the token families issued from authorization codes, whose state is their refresh tokens'
// state, src/tokens/refresh.ts) and access tokens revoked by themselves (RFC 7009): what the store
// answers about them, the grant (camelCase) and its row (./tables.ts), and their Kysely code. The two
// hot writes, a code's redemption and a refresh, each database does its own way (./sqlite/store.ts,
// ./postgres/store.ts); the reads of every token and userinfo request are written out by hand here
// and taken out of their rows as object literals.
import type { ExpressionBuilder, OnConflictBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { Aggregate, type Connection } from './aggregate.ts';
import { columns, type Placeholder, prefixed, type Prefixed, renamed, someColumns } from './columns.ts';
import type { Database, GrantRow, UserRow } from './tables.ts';
import { JOINED_USER, joinedUser, type User } from './users.ts';

/** A grant: the family of tokens issued from one authorization code, under the code's id. */
export interface Grant {
  id: string;
  userId: string;
  clientId: string;
  /** The scopes granted, space-separated, as the tokens carry them. */
  scope: string;
  authTime: number;
  createdAt: number;
  revokedAt: number | null;
  /** The generation of the family's current refresh token (src/tokens/refresh.ts). */
  refreshGeneration: number;
  /** When the current refresh token expires. */
  refreshExpiresAt: number;
  /** When the current refresh token was issued: the previous one was rotated away then. */
  refreshIssuedAt: number;
  /** The API the grant's access tokens are for (RFC 8707), or null for the default audience. */
  resource: string | null;
  /** How the user signed in (RFC 8176 amr), space-separated as scope is, for refreshed ID tokens; null: none. */
  amr: string | null;
  /** The level the sign-in reached (OIDC Core §2 acr), for refreshed ID tokens; null if not recorded. */
  acr: string | null;
  /**
   * The claims the authorization request's claims parameter asked for (src/oauth/claims-request.ts),
   * JSON, for userinfo and refreshed ID tokens; null or absent when it had none.
   */
  claimsRequest?: string | null;
  /** The sid of the session its code came from (OIDC `sid`), for refreshed ID tokens; null: none. */
  sid: string | null;
  /**
   * The DPoP key its refresh tokens are bound to (RFC 9449 §5, a public client's): a refresh must be
   * proven with it. Null or absent: not bound.
   */
  dpopJkt?: string | null;
}

/** A grant, which holds its refresh tokens' state (src/tokens/refresh.ts), and its user. */
export interface TokenFamily {
  grant: Grant;
  /** Undefined once the user has been deleted. */
  user: User | undefined;
}

export interface AccessTokenState {
  /** Undefined when the user has been deleted. */
  user: User | undefined;
  /** Undefined once housekeeping has removed the grant. */
  grant: Pick<Grant, 'id' | 'revokedAt' | 'claimsRequest'> | undefined;
  /** Whether the token itself was revoked (RFC 7009). */
  revoked: boolean;
}

/** A refresh: the token presented (its grant and generation) and what the next token may be. */
export interface Rotation {
  grantId: string;
  generation: number;
  clientId: string;
  /** The scopes asked for (RFC 6749 §6), space-separated; null to keep the grant's. */
  scope: string | null;
  /** The resource asked for (RFC 8707), which must be the grant's if it has one; null for any. */
  resource: string | null;
  /** The thumbprint of the refresh request's DPoP key, which a bound family must match; null: no proof. */
  jkt?: string | null;
  now: number;
  /** The next token's lifetime; it never outlives the family's `absoluteTtl` from the grant. */
  ttl: number;
  absoluteTtl: number;
}

export type RotationOutcome<T> =
  | { rotated: true; family: TokenFamily; value: T }
  /** Nothing written; the family as it stands (undefined when unknown), which tells why. */
  | { rotated: false; family: TokenFamily | undefined };

/** Grants: the token families issued from authorization codes. */
export interface GrantStore {
  /**
   * Codes are sealed (src/oauth/codes.ts) and the grant issued from one takes the code's id, so the
   * grant's row is the record of the redemption. Inserts the grant with a conditional write, only
   * if no grant has its id and its user exists and is not disabled. Returns false, having written
   * nothing, when the code was redeemed before (or by a concurrent request) or the user is not active.
   */
  redeemAuthorizationCode(input: { grant: Grant }): Promise<boolean>;
  getGrant(id: string): Promise<Grant | undefined>;
  /** Marks the grant revoked, which ends its refresh tokens and access tokens. Idempotent. */
  revokeGrant(id: string, now: number, event?: SecurityEvent): Promise<void>;
  /** The user's live grants (not revoked, refresh token unexpired), newest first; no name for a client not stored. */
  listActiveGrants(userId: string, now: number): Promise<Array<Grant & { clientName: string | null }>>;
  /** Revokes every grant of the user for the client and forgets the consent; returns how many grants. */
  withdrawClient(userId: string, clientId: string, now: number, event?: SecurityEvent): Promise<number>;
  /**
   * Withdraws the client from every user (`tessera grants revoke --client`): each live grant revoked
   * (its refresh tokens stop, its access tokens turn inactive) and each consent forgotten, in one
   * write; the grants revoked.
   */
  withdrawClientFromAll(clientId: string, now: number, event?: SecurityEvent): Promise<number>;
  /** The grant and its user, read together. */
  getTokenFamily(grantId: string): Promise<TokenFamily | undefined>;
  /**
   * A refresh, as one conditional write: moves the family to the next generation, issued `now`, only
   * if it is at the generation presented, issued to the client, not revoked, its current token and
   * the family unexpired, the scope asked for within the grant's, the resource asked for the grant's
   * (when both name one), the DPoP key the grant's (when it is bound to one), and its user active; under
   * concurrent refreshes exactly one wins. `whileCommitting` (signing the new tokens) runs once the
   * rotation is known valid and may overlap its commit; its value is returned only after the commit.
   */
  rotateTokenFamily<T>(
    rotation: Rotation,
    whileCommitting: (family: TokenFamily) => Promise<T>,
  ): Promise<RotationOutcome<T>>;
}

/** Access tokens revoked before they expire (RFC 7009), and what decides whether one is active. */
export interface RevocationStore {
  /** Kept until the token would have expired. */
  revokeAccessToken(jti: string, expiresAt: number, event?: SecurityEvent): Promise<void>;
  /** An access token's user, grant, and whether it was revoked by itself: one read. */
  getAccessTokenState(input: { userId: string; grantId: string; jti: string }): Promise<AccessTokenState>;
}

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

/** The columns a grant only renames; the hot reads' toTokenFamily (below) writes them out by hand. */
const grantRows = renamed(
  someColumns<GrantRow>()(
    'id user_id client_id scope auth_time created_at revoked_at',
    'refresh_generation refresh_expires_at refresh_issued_at resource amr acr',
  ),
);

function toGrant(row: GrantRow): Grant {
  return {
    ...grantRows.to(row),
    // Only when the authorization request had a claims parameter.
    ...(row.claims_request != null ? { claimsRequest: row.claims_request } : {}),
    sid: row.sid ?? null,
    ...(row.dpop_jkt != null ? { dpopJkt: row.dpop_jkt } : {}),
  };
}

/** A grant joined with its user: the grant under the prefix g_, the user's columns under their own names. */
export type FamilyRow = Prefixed<GrantRow, 'g'> & Partial<UserRow>;

export function toTokenFamily(row: FamilyRow | undefined): TokenFamily | undefined {
  if (!row) return undefined;
  const grant = {
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
    ...(row.g_claims_request != null ? { claimsRequest: row.g_claims_request } : {}),
    sid: row.g_sid ?? null,
    ...(row.g_dpop_jkt != null ? { dpopJkt: row.g_dpop_jkt } : {}),
  };
  return { grant, user: joinedUser(row) };
}

type AccessTokenRow = Partial<UserRow> & {
  g_id: string | null;
  g_revoked_at: number | string | null;
  g_claims_request?: string | null;
  revoked: number | string;
};

function toAccessTokenState(row: AccessTokenRow | undefined): AccessTokenState {
  const revokedAt = row?.g_revoked_at == null ? null : Number(row.g_revoked_at);
  const asked = row?.g_claims_request != null ? { claimsRequest: row.g_claims_request } : {};
  const grant = row?.g_id == null ? undefined : { id: row.g_id, revokedAt, ...asked };
  return { user: joinedUser(row), grant, revoked: Number(row?.revoked ?? 0) > 0 };
}

/** The reads of every token, introspection and userinfo request, in a database's parameter style. */
function statements(p: Placeholder) {
  return {
    grant: `select * from grants where id = ${p(1)}`,
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

type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;

/** Everything of GrantStore and RevocationStore but the hot writes, which each database's store does. */
export class Grants
  extends Aggregate
  implements Omit<GrantStore, 'redeemAuthorizationCode' | 'rotateTokenFamily'>, RevocationStore
{
  readonly #statements: ReturnType<typeof statements>;

  constructor(connection: Connection) {
    super(connection);
    this.#statements = statements(connection.placeholder);
  }

  async getGrant(id: string): Promise<Grant | undefined> {
    const [row] = await this.rows<GrantRow>(this.#statements.grant, [id]);
    return row && toGrant(row);
  }

  async getTokenFamily(grantId: string): Promise<TokenFamily | undefined> {
    return toTokenFamily((await this.rows<FamilyRow>(this.#statements.tokenFamily, [grantId]))[0]);
  }

  async revokeGrant(id: string, now: number, event?: SecurityEvent): Promise<void> {
    const live = (eb: Where<'grants'>) => eb.and({ id, revoked_at: null });
    await this.write(this.db.updateTable('grants').set({ revoked_at: now }).where(live), ...this.events(event));
  }

  async listActiveGrants(userId: string, now: number): Promise<Array<Grant & { clientName: string | null }>> {
    const rows = await this.db
      .selectFrom('grants')
      .leftJoin('clients', 'clients.client_id', 'grants.client_id')
      .selectAll('grants')
      .select('clients.name as client_name')
      .where((eb) => eb.and([eb('grants.user_id', '=', userId), eb('grants.revoked_at', 'is', null)]))
      .where('grants.refresh_expires_at', '>', now)
      .orderBy('grants.created_at', 'desc')
      .execute();
    return rows.map((row) => ({ ...toGrant(row), clientName: row.client_name }));
  }

  async withdrawClient(userId: string, clientId: string, now: number, event?: SecurityEvent): Promise<number> {
    const live = (eb: Where<'grants'>) => eb.and({ user_id: userId, client_id: clientId, revoked_at: null });
    const consent = (eb: Where<'consents'>) => eb.and({ user_id: userId, client_id: clientId });
    const revoked = this.db.updateTable('grants').set({ revoked_at: now }).where(live);
    return this.write(revoked, this.db.deleteFrom('consents').where(consent), ...this.events(event));
  }

  async withdrawClientFromAll(clientId: string, now: number, event?: SecurityEvent): Promise<number> {
    const live = (eb: Where<'grants'>) => eb.and({ client_id: clientId, revoked_at: null });
    const revoked = this.db.updateTable('grants').set({ revoked_at: now }).where(live);
    const consents = this.db.deleteFrom('consents').where('client_id', '=', clientId);
    return this.write(revoked, consents, ...this.events(event));
  }

  // access tokens (RFC 7009)
  async revokeAccessToken(jti: string, expiresAt: number, event?: SecurityEvent): Promise<void> {
    const once = (c: OnConflictBuilder<Database, 'revoked_access_tokens'>) => c.doNothing();
    const revoked = this.db.insertInto('revoked_access_tokens').values({ jti, expires_at: expiresAt }).onConflict(once);
    await this.write(revoked, ...this.events(event));
  }

  async getAccessTokenState(input: { userId: string; grantId: string; jti: string }): Promise<AccessTokenState> {
    const parameters = [input.userId, input.grantId, input.jti];
    const [row] = await this.rows<AccessTokenRow>(this.#statements.accessTokenState, parameters);
    return toAccessTokenState(row);
  }
}
