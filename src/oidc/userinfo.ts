// OIDC Core §5.3: the claims of the user an access token was issued for.
import { InvalidToken, OAuthError } from '../errors/index.ts';
import { activeAccessToken, type TokenStatusDeps } from '../oauth/token-status.ts';
import { claimsForScopes } from '../tokens/claims.ts';
import { parseClaimsRequest } from '../oauth/claims-request.ts';
import { checkTokenBinding } from '../oauth/dpop.ts';

/**
 * The claims, and the client the token was issued to (whose allowed origins may read them).
 * `dpopJkt`: the key of the request's DPoP proof, checked by the route; undefined for a Bearer token.
 */
export async function userinfo(
  deps: TokenStatusDeps,
  accessToken: string,
  now: number,
  dpopJkt?: string,
): Promise<{ body: Record<string, unknown>; clientId: string }> {
  const { claims, user, grant } = await activeAccessToken(deps, accessToken, now);
  // RFC 9449 §7.1: a bound token with a proof of its key (the thumbprint checked by the route), only.
  checkTokenBinding(claims.cnf, dpopJkt);
  const scopes = claims.scope.split(' ');
  // RFC 6750 §3.1: a valid token without the openid scope (a client's own token never has it) lacks
  // the privileges userinfo needs.
  if (!scopes.includes('openid') || !user)
    throw new OAuthError('insufficient_scope', 'the access token lacks the openid scope', 403);
  // The roles the client may see come with the client (cached); nothing is read without the roles scope.
  const client = scopes.includes('roles') ? await deps.store.getClient(claims.client_id) : undefined;
  if (scopes.includes('roles') && !client) throw new InvalidToken('the client no longer exists');
  // The claims parameter's userinfo member (OIDC Core §5.5), kept with the grant when there was one.
  const requested = parseClaimsRequest(grant?.claimsRequest)?.userinfo;
  const body = { sub: user.id, ...claimsForScopes(user, scopes, client ?? {}, requested) };
  return { body, clientId: claims.client_id };
}
