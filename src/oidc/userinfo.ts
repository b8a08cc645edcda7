// OIDC Core §5.3: the claims of the user an access token was issued for.
import { OAuthError } from '../errors/index.ts';
import { activeAccessToken, type TokenStatusDeps } from '../oauth/token-status.ts';
import { claimsForScopes } from '../tokens/claims.ts';
import { parseClaimsRequest } from '../oauth/claims-request.ts';

/** The claims, and the client the token was issued to (whose allowed origins may read them). */
export async function userinfo(
  deps: TokenStatusDeps,
  accessToken: string,
  now: number,
): Promise<{ body: Record<string, unknown>; clientId: string }> {
  const { claims, user, grant } = await activeAccessToken(deps, accessToken, now);
  const scopes = claims.scope.split(' ');
  // RFC 6750 §3.1: a valid token without the openid scope (a client's own token never has it) lacks
  // the privileges userinfo needs.
  if (!scopes.includes('openid') || !user)
    throw new OAuthError('insufficient_scope', 'the access token lacks the openid scope', 403);
  // The claims parameter's userinfo member (OIDC Core §5.5), kept with the grant when there was one.
  const requested = parseClaimsRequest(grant?.claimsRequest)?.userinfo;
  return { body: { sub: user.id, ...claimsForScopes(user, scopes, requested) }, clientId: claims.client_id };
}
