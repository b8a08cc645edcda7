// Tessera as the identity provider of the Identity Assertion JWT Authorization Grant
// (draft-ietf-oauth-identity-assertion-authz-grant §4): a client holding a person's ID token asks,
// by token exchange, for an ID-JAG for another authorization server (`audience`, its issuer), which
// it then redeems there (RFC 7523) for an access token without a consent screen. Tessera answers
// only under the operator's connection policy for that client and audience (`tessera connections`):
// the ID-JAG's `client_id` is the client's id there, its scopes those asked for within the policy's,
// its resource the policy's (or the one asked for, when the policy names none). Each mint is an event.
import { InvalidRequest, InvalidScope, InvalidTarget } from '../../errors/index.ts';
import { securityEvent } from '../../events/index.ts';
import type { Client } from '../../store/clients.ts';
import type { SigningAlg } from '../../tokens/keystore.ts';
import { signJws } from '../../tokens/jwt.ts';
import { newId } from '../../tokens/opaque.ts';
import { type Params, single } from '../params.ts';
import { resourceParam } from '../resources.ts';
import { parseScope } from '../scopes.ts';
import { TOKEN_TYPES, type TokenSubject } from './subject-token.ts';
import type { GrantContext, TokenResponse } from './types.ts';

/** §3: the JWT's `typ`. */
export const ID_JAG_TYP = 'oauth-id-jag+jwt';
/** How long an ID-JAG lives, seconds: long enough to be redeemed at once, no longer. */
export const ID_JAG_TTL = 300;

export async function mintIdJag(
  ctx: GrantContext,
  client: Client,
  body: Params,
  subject: TokenSubject,
): Promise<TokenResponse> {
  const { config, keys, now } = ctx;
  // §4.3: the audience is the issuer of the authorization server the assertion is for.
  const audience = single(body, 'audience');
  if (audience === undefined) throw new InvalidRequest('audience (the issuer the ID-JAG is for) is required');
  const connection = await ctx.store.findConnection(client.clientId, audience);
  if (!connection) {
    throw new InvalidTarget('no connection lets this client ask for an ID-JAG for this audience', audience);
  }
  const asked = resourceParam(body);
  if (asked !== undefined && connection.resource !== null && asked !== connection.resource) {
    throw new InvalidTarget('the connection is for another resource', `resource ${asked}`);
  }
  const resource = asked ?? connection.resource;
  const requested = single(body, 'scope');
  const scopes =
    requested === undefined ? connection.scopes : parseScope(requested).filter((s) => connection.scopes.includes(s));
  if (scopes.length === 0) throw new InvalidScope('none of the scopes asked for is allowed by the connection');
  const scope = scopes.join(' ');
  const jti = newId();
  const alg = (client.idTokenSignedResponseAlg ?? config.signingAlg) as SigningAlg;
  const assertion = await signJws(keys.signingKey(alg), ID_JAG_TYP, {
    iss: config.issuer,
    sub: subject.user.id,
    aud: audience,
    client_id: connection.remoteClientId,
    jti,
    iat: now,
    exp: now + ID_JAG_TTL,
    scope,
    ...(resource !== null ? { resource } : {}),
    auth_time: subject.authTime,
    ...(subject.amr.length > 0 ? { amr: subject.amr } : {}),
    ...(subject.acr !== null ? { acr: subject.acr } : {}),
  });
  const data = {
    connection: connection.id,
    audience,
    remote_client_id: connection.remoteClientId,
    scopes,
    jti,
    ...(resource !== null ? { resource } : {}),
  };
  const requester = ctx.requester?.();
  await ctx.store.recordEvent(
    securityEvent('id_jag.issued', now, { userId: subject.user.id, clientId: client.clientId, requester, data }),
  );
  // §4.3.2: not an access token, so token_type N_A (RFC 8693 §2.2.1).
  return {
    access_token: assertion,
    issued_token_type: TOKEN_TYPES.idJag,
    token_type: 'N_A',
    expires_in: ID_JAG_TTL,
    scope,
  };
}
