// The token endpoint (RFC 6749 §3.2): authenticate the client, then hand over to the grant.
import { InvalidDpopProof, InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../errors/index.ts';
import { authenticateClient } from './client-auth/index.ts';
import { isOriginAllowed } from './origins.ts';
import type { ClientAuthGuard } from './client-auth/throttle.ts';
import { authorizationCodeGrant } from './grants/authorization-code.ts';
import { clientCredentialsGrant } from './grants/client-credentials.ts';
import { deviceCodeGrant } from './grants/device-code.ts';
import { refreshTokenGrant } from './grants/refresh-token.ts';
import { tokenExchangeGrant } from './grants/token-exchange.ts';
import { jwtBearerGrant } from './grants/jwt-bearer.ts';
import type { GrantContext, GrantHandler, TokenResponse } from './grants/types.ts';
import { type Params, rejectDuplicates, required } from './params.ts';
import { resourceParam } from './resources.ts';

const GRANTS: ReadonlyMap<string, GrantHandler> = new Map(
  [
    authorizationCodeGrant,
    refreshTokenGrant,
    clientCredentialsGrant,
    deviceCodeGrant,
    tokenExchangeGrant,
    jwtBearerGrant,
  ].map((grant) => [grant.grantType, grant]),
);
export const SUPPORTED_GRANT_TYPES = [...GRANTS.keys()];
const SUPPORTED_GRANT_TYPES_TEXT = SUPPORTED_GRANT_TYPES.join(', ');

export async function tokenEndpoint(
  ctx: GrantContext,
  authorization: string | undefined,
  body: Params,
  guard?: ClientAuthGuard,
  origin?: string,
): Promise<TokenResponse> {
  // Before the duplicates: a repeated resource is invalid_target (RFC 8707 §2), one per request here.
  resourceParam(body);
  rejectDuplicates(body);
  const client = await authenticateClient(ctx.store, authorization, body, guard);
  // A browser's request from an origin the client does not allow redeems nothing (CORS would only
  // have kept the answer from being read).
  if (origin !== undefined && !isOriginAllowed(client, origin)) {
    throw new InvalidRequest('the Origin is not allowed for this client', `origin ${JSON.stringify(origin)}`);
  }
  // RFC 9449 §5.2 dpop_bound_access_tokens: such a client's token requests all carry a proof.
  if (client.requireDpop === true && ctx.dpopJkt === undefined) {
    throw new InvalidDpopProof('this client must send a DPoP proof');
  }
  const grantType = required(body, 'grant_type');
  const grant = GRANTS.get(grantType);
  if (!grant) {
    throw new UnsupportedGrantType(
      `grant_type may be ${SUPPORTED_GRANT_TYPES_TEXT}`,
      `grant_type ${JSON.stringify(grantType)}`,
    );
  }
  if (!client.grantTypes.includes(grantType)) {
    throw new UnauthorizedClient(`the client is not allowed to use the ${grantType} grant`);
  }
  return grant.handle(ctx, client, body);
}
