// RFC 6749 §6 with rotation (OAuth 2.0 Security BCP §4.14.2): every use returns a new refresh token;
// presenting a rotated one revokes the whole family.
import { InvalidGrant, InvalidRequest, InvalidScope } from '../../errors/index.ts';
import { claimsForScopes } from '../../oidc/claims.ts';
import type { Client, User } from '../../store/store.ts';
import type { RefreshTokenRow } from '../../store/types.ts';
import { newRefreshToken, refreshTokenKey } from '../../tokens/opaque.ts';
import { type Params, single } from '../params.ts';
import { parseScope } from '../scopes.ts';
import { signTokens } from './issue.ts';
import type { GrantContext, GrantHandler, TokenResponse } from './types.ts';

export const refreshTokenGrant: GrantHandler = {
  grantType: 'refresh_token',
  async handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse> {
    const { store, now } = ctx;
    const presented = single(body, 'refresh_token');
    if (!presented) throw new InvalidRequest('refresh_token is required');
    const tokenHash = refreshTokenKey(presented);
    const scopeParam = single(body, 'scope');
    if (scopeParam === undefined && store.rotateValidRefreshToken) {
      // Where a statement is a round trip, the usual refresh (the whole scope, a valid token) is one
      // statement, and the tokens are signed once it has committed.
      const next = newRefreshToken();
      const rotated = await store.rotateValidRefreshToken({
        tokenHash, clientId: client.clientId, now, nextTokenHash: refreshTokenKey(next),
        ttl: ctx.config.refreshTokenTtl, absoluteTtl: ctx.config.refreshTokenAbsoluteTtl,
      });
      if (rotated) {
        return refreshed(ctx, client, rotated.user, rotated.token.scope.split(' ').filter((s) => s !== ''), rotated.token, next);
      }
      // Nothing was written: the path below finds out what is wrong with the token (or that a
      // concurrent refresh used it) and answers as it would have.
    }
    // The token, its grant and its user in one read.
    const family = await store.getRefreshTokenFamily(tokenHash);
    if (!family || family.token.client_id !== client.clientId) throw new InvalidGrant('the refresh token is invalid');
    const { token: row, grant, user } = family;
    if (!grant || grant.revoked_at !== null) throw new InvalidGrant('the refresh token has been revoked');
    // A rotated token presented again is a replay — unless it comes within the reuse interval, which
    // lets a client's concurrent refreshes all succeed.
    const reuse = row.consumed_at !== null && ctx.config.refreshTokenReuseInterval > 0 && now - row.consumed_at <= ctx.config.refreshTokenReuseInterval;
    if (row.consumed_at !== null && !reuse) {
      await store.revokeGrant(row.grant_id, now);
      throw new InvalidGrant('the refresh token has already been used');
    }
    if (row.expires_at <= now) throw new InvalidGrant('the refresh token has expired');
    const familyEnd = grant.created_at + ctx.config.refreshTokenAbsoluteTtl;
    if (familyEnd <= now) throw new InvalidGrant('the refresh token has expired');

    const granted = row.scope.split(' ').filter((s) => s !== '');
    let scopes = granted;
    if (scopeParam !== undefined) {
      // RFC 6749 §6: the scope may be narrowed, never widened.
      scopes = parseScope(scopeParam);
      const widened = scopes.filter((s) => !granted.includes(s));
      if (widened.length > 0) throw new InvalidScope(`scope exceeds the original grant: ${widened.join(' ')}`);
    }

    if (!user || user.disabled) throw new InvalidGrant('the user is no longer active');

    const next = newRefreshToken();
    const nextRow = { ...row, token_hash: refreshTokenKey(next), created_at: now, expires_at: Math.min(now + ctx.config.refreshTokenTtl, familyEnd), consumed_at: null };
    // The tokens are signed while the rotation commits, and handed out only once it has.
    const signing = refreshed(ctx, client, user, scopes, row, next);
    signing.catch(() => {});
    let won = reuse ? await store.addRefreshToken(nextRow) : await store.rotateRefreshToken({ tokenHash, now, next: nextRow });
    if (!won && !reuse && ctx.config.refreshTokenReuseInterval > 0) {
      // A concurrent refresh rotated it an instant ago: that is the case the reuse interval is for.
      won = await store.addRefreshToken(nextRow);
    }
    if (!won) {
      await store.revokeGrant(row.grant_id, now);
      throw new InvalidGrant('the refresh token has already been used');
    }
    return signing;
  },
};

/** OIDC Core §12.2: the refreshed ID token keeps sub and auth_time and carries no nonce. */
function refreshed(ctx: GrantContext, client: Client, user: User, scopes: string[], token: RefreshTokenRow, next: string): Promise<TokenResponse> {
  return signTokens(ctx, { client, subject: user.id, claims: claimsForScopes(user, scopes), scopes, grantId: token.grant_id, authTime: token.auth_time, nonce: null, refreshToken: next });
}
