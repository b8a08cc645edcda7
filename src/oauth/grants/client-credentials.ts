// RFC 6749 §4.4: a confidential client gets an access token for itself, with no user: an RFC 9068
// JWT whose `sub` is the client id, with no refresh token (§4.4.3) and no ID token. The scopes are
// the API scopes the client is registered for; openid, profile, email and roles speak of a user, so
// a client acting for itself cannot have them; admin only a client the operator marked.
import { InvalidScope, UnauthorizedClient } from '../../errors/index.ts';
import type { SigningAlg } from '../../tokens/keystore.ts';
import { signAccessToken } from '../../tokens/jwt.ts';
import { type Params, single } from '../params.ts';
import { ADMIN_SCOPE, checkAdminClient, checkAllowedScopes, parseScope, USER_SCOPES } from '../scopes.ts';
import { resourceParam, tokenTarget } from '../resources.ts';
import { accessTokenTtl, type GrantHandler, type TokenResponse } from './types.ts';

export const clientCredentialsGrant: GrantHandler = {
  grantType: 'client_credentials',
  async handle(ctx, client, body: Params): Promise<TokenResponse> {
    // §4.4: only a confidential client; registration refuses the grant to public ones, this makes sure.
    if (client.tokenEndpointAuthMethod === 'none') {
      throw new UnauthorizedClient('a public client cannot use the client_credentials grant');
    }
    const requested = single(body, 'scope');
    // §3.3: without a scope, the client's registered API scopes (admin only for a client marked admin).
    const held = (s: string) => !USER_SCOPES.includes(s) && (s !== ADMIN_SCOPE || client.admin === true);
    const scopes = requested === undefined ? client.scopes.filter(held) : parseScope(requested);
    const userScopes = scopes.filter((s) => USER_SCOPES.includes(s));
    if (userScopes.length > 0) {
      throw new InvalidScope(`${userScopes.join(' ')}: a client acting for itself has no user to ask about`);
    }
    checkAllowedScopes(scopes, client.scopes);
    checkAdminClient(scopes, client);
    const { config, keys, now } = ctx;
    const grant = { resource: null, scopes };
    const target = await tokenTarget(ctx.store, config.accessTokenAudience, grant, resourceParam(body));
    const scope = target.scopes.join(' ');
    const ttl = accessTokenTtl(config, client);
    const accessToken = await signAccessToken(keys, {
      issuer: config.issuer,
      audience: target.audience,
      subject: client.clientId,
      clientId: client.clientId,
      scope,
      ...(ctx.dpopJkt !== undefined ? { jkt: ctx.dpopJkt } : {}),
      now,
      ttl,
      alg: (client.idTokenSignedResponseAlg ?? config.signingAlg) as SigningAlg,
    });
    const tokenType = ctx.dpopJkt !== undefined ? 'DPoP' : 'Bearer';
    return { access_token: accessToken, token_type: tokenType, expires_in: ttl, scope };
  },
};
