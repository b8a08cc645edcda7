// Token introspection (RFC 7662). A confidential client the operator registered may introspect any
// access token: resource servers are registered so to ask. A client that registered itself (RFC 7591)
// only the tokens issued to it: anyone may register, and nobody should learn of other people's tokens
// by registering (§4: the server decides who may ask). A refresh token only by the client it was
// issued to. Whatever is not active, or not the asker's to know, answers {"active": false} and
// nothing else (§2.2).
import { InvalidClient } from '../errors/index.ts';
import { authenticateClient } from './client-auth/index.ts';
import type { ClientAuthGuard } from './client-auth/throttle.ts';
import { type Params, rejectDuplicates, required } from './params.ts';
import { activeAccessToken, looksLikeJwt, refreshTokenState, type TokenStatusDeps } from './token-status.ts';

export type IntrospectionResponse = { active: false } | ({ active: true } & Record<string, unknown>);

export async function introspect(
  deps: TokenStatusDeps,
  authorization: string | undefined,
  body: Params,
  now: number,
  guard?: ClientAuthGuard,
): Promise<IntrospectionResponse> {
  rejectDuplicates(body);
  const client = await authenticateClient(deps.store, authorization, body, guard);
  if (client.tokenEndpointAuthMethod === 'none')
    throw new InvalidClient('introspection requires client authentication');
  const token = required(body, 'token');

  if (looksLikeJwt(token)) {
    try {
      const { claims } = await activeAccessToken(deps, token, now, true);
      if (client.registeredVia !== 'operator' && claims.client_id !== client.clientId) return { active: false };
      return {
        active: true,
        scope: claims.scope,
        client_id: claims.client_id,
        sub: claims.sub,
        exp: claims.exp,
        iat: claims.iat,
        iss: deps.config.issuer,
        aud: claims.aud,
        jti: claims.jti,
        // RFC 9449 §6.2: a DPoP-bound token says so, and names its key.
        token_type: claims.cnf?.jkt !== undefined ? 'DPoP' : 'Bearer',
        ...(claims.cnf?.jkt !== undefined ? { cnf: { jkt: claims.cnf.jkt } } : {}),
      };
    } catch {
      return { active: false };
    }
  }
  const state = await refreshTokenState(deps, token, now);
  if (!state || !state.active || state.clientId !== client.clientId) return { active: false };
  return {
    active: true,
    scope: state.scope,
    client_id: state.clientId,
    sub: state.userId,
    exp: state.expiresAt,
    iat: state.issuedAt,
    iss: deps.config.issuer,
    aud: state.clientId,
    token_type: 'refresh_token',
  };
}
