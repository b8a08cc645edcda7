// Signing the tokens of a token response. The grants sign while their writes commit and return the
// tokens only after the commit, so a client is never handed a token the database does not know.
import type { Client } from '../../store/clients.ts';
import type { SigningAlg } from '../../tokens/keystore.ts';
import { signAccessToken, signIdToken } from '../../tokens/jwt.ts';
import type { Target } from '../resources.ts';
import { accessTokenTtl, type GrantContext, idTokenTtl, type TokenResponse } from './types.ts';

export interface IssueInput {
  client: Client;
  /** The user's id. */
  subject: string;
  /** The user's claims the scopes release (claimsForScopes), for the ID token. */
  claims: Record<string, unknown>;
  /** The grant's scopes: they decide the ID token and its claims. */
  scopes: string[];
  /** The access token's audience and scopes (./resources.ts: the grant's, or those a resource accepts). */
  target: Target;
  grantId: string;
  authTime: number;
  /** The sign-in's methods and level (RFC 8176 amr, OIDC Core §2 acr), for the ID token. */
  amr: readonly string[];
  acr: string | null;
  /** The browser session's id (OIDC `sid`, Back-Channel Logout 1.0 §2.1), for the ID token; null: none. */
  sid: string | null;
  nonce: string | null;
  refreshToken: string;
}

export async function signTokens(ctx: GrantContext, input: IssueInput): Promise<TokenResponse> {
  const { config, keys, now } = ctx;
  const alg = (input.client.idTokenSignedResponseAlg ?? config.signingAlg) as SigningAlg;
  const scope = input.target.scopes.join(' ');
  const ttl = accessTokenTtl(config, input.client);
  const accessToken = await signAccessToken(keys, {
    issuer: config.issuer,
    audience: input.target.audience,
    subject: input.subject,
    clientId: input.client.clientId,
    scope,
    grantId: input.grantId,
    authTime: input.authTime,
    // With the roles scope, the user's roles the client may see (claimsForScopes), for the APIs too.
    ...(Array.isArray(input.claims.roles) ? { roles: input.claims.roles as string[] } : {}),
    ...(ctx.dpopJkt !== undefined ? { jkt: ctx.dpopJkt } : {}),
    now,
    ttl,
    alg,
  });
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: ctx.dpopJkt !== undefined ? 'DPoP' : 'Bearer',
    expires_in: ttl,
    refresh_token: input.refreshToken,
    scope,
  };
  if (input.scopes.includes('openid')) {
    response.id_token = await signIdToken(keys, {
      issuer: config.issuer,
      subject: input.subject,
      clientId: input.client.clientId,
      authTime: input.authTime,
      amr: input.amr,
      acr: input.acr,
      sid: input.sid,
      nonce: input.nonce,
      accessToken,
      claims: input.claims,
      now,
      ttl: idTokenTtl(config, input.client),
      alg,
    });
  }
  return response;
}
