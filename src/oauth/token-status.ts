// Is a token active? One answer for userinfo, introspection (RFC 7662) and revocation (RFC 7009):
// a JWT access token is active while its signature, issuer, audience and expiry hold, its grant is
// not revoked, it was not revoked by itself, and its user is not disabled; a refresh token while it
// is unrotated, unexpired, and its grant and user are live.
import type { Config } from '../config/index.ts';
import { InvalidToken } from '../errors/index.ts';
import type { Store, User } from '../store/store.ts';
import type { GrantRow, RefreshTokenRow } from '../store/types.ts';
import type { KeyStore } from '../tokens/keystore.ts';
import { type AccessTokenClaims, verifyAccessToken } from '../tokens/jwt.ts';
import { refreshTokenKey } from '../tokens/opaque.ts';

export interface TokenStatusDeps {
  config: Pick<Config, 'issuer' | 'accessTokenAudience' | 'refreshTokenAbsoluteTtl'>;
  store: Store;
  keys: KeyStore;
}

export interface ActiveAccessToken {
  claims: AccessTokenClaims;
  user: User;
}

/** The access token's claims and user, or InvalidToken saying why it is not active. */
export async function activeAccessToken(deps: TokenStatusDeps, token: string, now: number): Promise<ActiveAccessToken> {
  const claims = await verifyAccessToken(deps.keys, token, { issuer: deps.config.issuer, audience: deps.config.accessTokenAudience, now });
  const { grant, revoked, user } = await deps.store.getAccessTokenState({ userId: claims.sub, grantId: claims.grant_id, jti: claims.jti });
  if (!grant || grant.revoked_at !== null || revoked) throw new InvalidToken('the access token has been revoked');
  if (!user || user.disabled) throw new InvalidToken('the user is no longer active');
  return { claims, user };
}

export interface RefreshTokenState {
  row: RefreshTokenRow;
  grant: GrantRow | undefined;
  active: boolean;
}

/** The stored refresh token and whether it is active, or undefined when unknown. */
export async function refreshTokenState(deps: TokenStatusDeps, token: string, now: number): Promise<RefreshTokenState | undefined> {
  const family = await deps.store.getRefreshTokenFamily(refreshTokenKey(token));
  if (!family) return undefined;
  const { token: row, grant, user } = family;
  const active =
    row.consumed_at === null &&
    row.expires_at > now &&
    grant !== undefined &&
    grant.revoked_at === null &&
    grant.created_at + deps.config.refreshTokenAbsoluteTtl > now &&
    user !== undefined &&
    !user.disabled;
  return { row, grant, active };
}

/** JWTs have three dot-separated parts; refresh tokens are opaque base64url without dots. */
export function looksLikeJwt(token: string): boolean {
  return token.split('.').length === 3;
}
