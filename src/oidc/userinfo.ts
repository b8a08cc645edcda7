// OIDC Core §5.3: the claims of the user an access token was issued for.
import type { Config } from '../config/index.ts';
import { InvalidToken, OAuthError } from '../errors/index.ts';
import type { Store } from '../store/store.ts';
import type { KeyStore } from '../tokens/keystore.ts';
import { verifyAccessToken } from '../tokens/jwt.ts';
import { claimsForScopes } from './claims.ts';

export interface UserinfoDeps {
  config: Pick<Config, 'issuer' | 'accessTokenAudience'>;
  store: Store;
  keys: KeyStore;
}

export async function userinfo(deps: UserinfoDeps, accessToken: string, now: number): Promise<Record<string, unknown>> {
  const claims = await verifyAccessToken(deps.keys, accessToken, {
    issuer: deps.config.issuer,
    audience: deps.config.accessTokenAudience,
    now,
  });
  const grant = await deps.store.getGrant(claims.grant_id);
  if (!grant || grant.revoked_at !== null) throw new InvalidToken('the access token has been revoked');
  const user = await deps.store.getUserById(claims.sub);
  if (!user || user.disabled) throw new InvalidToken('the user is no longer active');
  const scopes = claims.scope.split(' ');
  // RFC 6750 §3.1: a valid token without the openid scope lacks the privileges userinfo needs.
  if (!scopes.includes('openid')) throw new OAuthError('insufficient_scope', 'the access token lacks the openid scope', 403);
  return { sub: user.id, ...claimsForScopes(user, scopes) };
}
