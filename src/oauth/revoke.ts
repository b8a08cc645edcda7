// Token revocation (RFC 7009). The client authenticates as at the token endpoint. Revoking a refresh
// token revokes its family and the access tokens of the same grant; revoking an access token makes it
// inactive until it expires. Unknown, expired or already revoked tokens answer 200 (§2.2).
import { InvalidRequest, UnauthorizedClient } from '../errors/index.ts';
import { type Requester, securityEvent } from '../events/index.ts';
import { authenticateClient } from './client-auth/index.ts';
import { isOriginAllowed } from './origins.ts';
import type { ClientAuthGuard } from './client-auth/throttle.ts';
import { type Params, rejectDuplicates, required } from './params.ts';
import { activeAccessToken, looksLikeJwt, refreshTokenState, type TokenStatusDeps } from './token-status.ts';

export async function revoke(
  deps: TokenStatusDeps,
  authorization: string | undefined,
  body: Params,
  now: number,
  requester?: Requester,
  guard?: ClientAuthGuard,
  origin?: string,
): Promise<void> {
  rejectDuplicates(body);
  const client = await authenticateClient(deps.store, authorization, body, guard);
  if (origin !== undefined && !isOriginAllowed(client, origin)) {
    throw new InvalidRequest('the Origin is not allowed for this client', `origin ${JSON.stringify(origin)}`);
  }
  const token = required(body, 'token');
  // token_type_hint is a hint only (§2.1): the token's own shape tells access from refresh tokens.
  if (looksLikeJwt(token)) {
    let claims;
    try {
      ({ claims } = await activeAccessToken(deps, token, now, true));
    } catch {
      return;
    }
    if (claims.client_id !== client.clientId) throw new UnauthorizedClient('the token was issued to another client');
    const revoked = securityEvent('token.revoked', now, {
      userId: claims.sub,
      clientId: client.clientId,
      requester,
      data: { token: 'access_token', jti: claims.jti, ...(claims.grant_id ? { grant: claims.grant_id } : {}) },
    });
    await deps.store.revokeAccessToken(claims.jti, claims.exp, revoked);
    return;
  }
  const state = await refreshTokenState(deps, token, now);
  if (!state) return;
  if (state.clientId !== client.clientId) throw new UnauthorizedClient('the token was issued to another client');
  const revoked = securityEvent('token.revoked', now, {
    userId: state.userId,
    clientId: client.clientId,
    requester,
    data: { token: 'refresh_token', grant: state.grantId },
  });
  await deps.store.revokeGrant(state.grantId, now, revoked);
}
