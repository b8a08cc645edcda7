// Grants (the token families issued from authorization codes, ./grant.ts) and access tokens revoked
// by themselves (RFC 7009): what the store answers about them, and their Kysely code. The two hot
// writes, a code's redemption and a refresh, each database does its own way (./sqlite/store.ts,
// ./postgres/store.ts); the reads of every token and userinfo request are written out by hand in
// ./grant-rows.ts.
import type { ExpressionBuilder, OnConflictBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import type { AccessTokenState, Grant, Rotation, RotationOutcome, TokenFamily } from './grant.ts';
import {
  type AccessTokenRow,
  type FamilyRow,
  type PrefixedGrantRow,
  grantReads,
  toAccessTokenState,
  toGrant,
  toTokenFamily,
} from './grant-rows.ts';
import type { Database } from './tables.ts';

export type { AccessTokenState, Grant, Rotation, RotationOutcome, TokenFamily } from './grant.ts';

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

type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;

/** Everything of GrantStore and RevocationStore but the hot writes (each database's store), on top of `Base`. */
export function withGrants<Base extends AggregateClass>(Base: Base) {
  abstract class Grants
    extends Base
    implements Omit<GrantStore, 'redeemAuthorizationCode' | 'rotateTokenFamily'>, RevocationStore
  {
    readonly #statements = grantReads(this.placeholder);

    async getGrant(id: string): Promise<Grant | undefined> {
      const [row] = await this.rows<PrefixedGrantRow>(this.#statements.grant, [id]);
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
      type Row = PrefixedGrantRow & { client_name: string | null };
      const rows = await this.rows<Row>(this.#statements.activeGrants, [userId, now]);
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
      const revoked = this.db
        .insertInto('revoked_access_tokens')
        .values({ jti, expires_at: expiresAt })
        .onConflict(once);
      await this.write(revoked, ...this.events(event));
    }

    async getAccessTokenState(input: { userId: string; grantId: string; jti: string }): Promise<AccessTokenState> {
      const parameters = [input.userId, input.grantId, input.jti];
      const [row] = await this.rows<AccessTokenRow>(this.#statements.accessTokenState, parameters);
      return toAccessTokenState(row);
    }
  }
  return Grants;
}
