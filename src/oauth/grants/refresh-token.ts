// RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every use returns the family's next refresh token;
// presenting one rotated away revokes the whole family. The family's state is in its grant
// (src/tokens/refresh.ts): a token names its grant and generation, and only the current generation
// is good for a refresh.
import type { Config } from '../../config/index.ts';
import { InvalidGrant, InvalidRequest, InvalidScope } from '../../errors/index.ts';
import { claimsForScopes } from '../../oidc/claims.ts';
import type { Client, User } from '../../store/store.ts';
import type { GrantRow } from '../../store/types.ts';
import { refreshTokenKey } from '../../tokens/opaque.ts';
import { RefreshTokens } from '../../tokens/refresh.ts';
import { type Params, single } from '../params.ts';
import { parseScope } from '../scopes.ts';
import { signTokens } from './issue.ts';
import type { GrantContext, GrantHandler, TokenResponse } from './types.ts';

export const refreshTokenGrant: GrantHandler = {
  grantType: 'refresh_token',
  async handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse> {
    const { store, now, config } = ctx;
    const presented = single(body, 'refresh_token');
    if (!presented) throw new InvalidRequest('refresh_token is required');
    const scopeParam = single(body, 'scope');
    if (!RefreshTokens.isCurrentFormat(presented)) return refreshLegacy(ctx, client, presented, scopeParam);
    const id = ctx.refreshTokens.parse(presented);
    if (!id) throw new InvalidGrant('the refresh token is invalid');

    if (scopeParam === undefined && store.rotateValidTokenFamily) {
      // Where a statement is a round trip, the usual refresh (the whole scope, the current token) is
      // one statement, and the tokens are signed once it has committed.
      const rotated = await store.rotateValidTokenFamily({
        grantId: id.grantId, generation: id.generation, clientId: client.clientId, now, ttl: config.refreshTokenTtl, absoluteTtl: config.refreshTokenAbsoluteTtl,
      });
      if (rotated) return refreshed(ctx, client, rotated.user!, rotated.grant, scopesOf(rotated.grant), rotated.grant.refresh_generation!);
      // Nothing was written: the path below finds out what is wrong with the token (or that a
      // concurrent refresh used it) and answers as it would have.
    }

    // Two passes at most: a rotation lost to a concurrent refresh (or revocation) reads the grant
    // again and answers for the token as it now stands, a generation behind (or revoked).
    for (let pass = 0; pass < 2; pass++) {
      const family = await store.getTokenFamily(id.grantId);
      if (!family || family.grant.client_id !== client.clientId || family.grant.refresh_generation === null) throw new InvalidGrant('the refresh token is invalid');
      const { grant, user } = family;
      const current = family.grant.refresh_generation;
      if (grant.revoked_at !== null) throw new InvalidGrant('the refresh token has been revoked');
      if (id.generation > current) throw new InvalidGrant('the refresh token is invalid');
      if (id.generation < current) {
        // A token rotated away presented again is a replay — unless it is the one just before the
        // current token and comes within the reuse interval, which lets a client's concurrent
        // refreshes all succeed: they are answered with the current token, and nothing is written.
        if (id.generation !== current - 1 || !withinReuseInterval(config, grant.refresh_issued_at, now)) return replayed(ctx, grant.id);
        return refreshed(ctx, client, user!, grant, liveScopes(ctx, grant, grant.refresh_expires_at!, user, scopeParam), current);
      }
      const scopes = liveScopes(ctx, grant, grant.refresh_expires_at!, user, scopeParam);
      // The tokens are signed while the rotation commits, and handed out only once it has.
      const signing = refreshed(ctx, client, user!, grant, scopes, current + 1);
      signing.catch(() => {});
      const expiresAt = Math.min(now + config.refreshTokenTtl, familyEnd(config, grant));
      if (await store.rotateTokenFamily({ grantId: grant.id, generation: current, now, expiresAt })) return signing;
    }
    return replayed(ctx, id.grantId);
  },
};

/**
 * A refresh token of an earlier release (a row of refresh_tokens). Its first rotation consumes it
 * and moves its family into the grant, whose next generation is the token handed out.
 */
async function refreshLegacy(ctx: GrantContext, client: Client, presented: string, scopeParam: string | undefined): Promise<TokenResponse> {
  const { store, now, config } = ctx;
  const tokenHash = refreshTokenKey(presented);
  let grantId: string | undefined;
  for (let pass = 0; pass < 2; pass++) {
    const family = await store.getRefreshTokenFamily(tokenHash);
    if (!family || family.token.client_id !== client.clientId) throw new InvalidGrant('the refresh token is invalid');
    const { token: row, grant, user } = family;
    if (!grant || grant.revoked_at !== null) throw new InvalidGrant('the refresh token has been revoked');
    grantId = grant.id;
    if (row.consumed_at !== null) {
      // Rotated away: within the reuse interval, answered with the family's current token.
      if (grant.refresh_generation === null || !withinReuseInterval(config, row.consumed_at, now)) return replayed(ctx, grant.id);
      return refreshed(ctx, client, user!, grant, liveScopes(ctx, grant, grant.refresh_expires_at!, user, scopeParam), grant.refresh_generation);
    }
    const scopes = liveScopes(ctx, grant, row.expires_at, user, scopeParam);
    const expiresAt = Math.min(now + config.refreshTokenTtl, familyEnd(config, grant));
    const generation = await store.rotateLegacyRefreshToken({ tokenHash, grantId: grant.id, now, expiresAt });
    if (generation !== undefined) return refreshed(ctx, client, user!, grant, scopes, generation);
  }
  return replayed(ctx, grantId);
}

function withinReuseInterval(config: Pick<Config, 'refreshTokenReuseInterval'>, rotatedAt: number | null, now: number): boolean {
  return config.refreshTokenReuseInterval > 0 && rotatedAt !== null && now - rotatedAt <= config.refreshTokenReuseInterval;
}

function familyEnd(config: Pick<Config, 'refreshTokenAbsoluteTtl'>, grant: GrantRow): number {
  return grant.created_at + config.refreshTokenAbsoluteTtl;
}

/** Revokes the family of a token presented again after its rotation. */
async function replayed(ctx: GrantContext, grantId: string | undefined): Promise<never> {
  if (grantId !== undefined) await ctx.store.revokeGrant(grantId, ctx.now);
  throw new InvalidGrant('the refresh token has already been used');
}

/**
 * The scopes of a refresh from a token expiring at `expiresAt`, once the token, its family and its
 * user are found live. RFC 6749 §6: the scope may be narrowed, never widened.
 */
function liveScopes(ctx: GrantContext, grant: GrantRow, expiresAt: number, user: User | undefined, scopeParam: string | undefined): string[] {
  const { now, config } = ctx;
  if (expiresAt <= now || familyEnd(config, grant) <= now) throw new InvalidGrant('the refresh token has expired');
  const granted = scopesOf(grant);
  let scopes = granted;
  if (scopeParam !== undefined) {
    scopes = parseScope(scopeParam);
    const widened = scopes.filter((s) => !granted.includes(s));
    if (widened.length > 0) throw new InvalidScope(`scope exceeds the original grant: ${widened.join(' ')}`);
  }
  if (!user || user.disabled) throw new InvalidGrant('the user is no longer active');
  return scopes;
}

function scopesOf(grant: GrantRow): string[] {
  return grant.scope.split(' ').filter((s) => s !== '');
}

/** OIDC Core §12.2: the refreshed ID token keeps sub and auth_time and carries no nonce. */
function refreshed(ctx: GrantContext, client: Client, user: User, grant: GrantRow, scopes: string[], generation: number): Promise<TokenResponse> {
  return signTokens(ctx, {
    client, subject: user.id, claims: claimsForScopes(user, scopes), scopes, grantId: grant.id, authTime: grant.auth_time, nonce: null,
    refreshToken: ctx.refreshTokens.issue(grant.id, generation),
  });
}
