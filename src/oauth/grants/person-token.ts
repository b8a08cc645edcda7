// The access token a grant without a browser issues for a person (a token exchange, an ID-JAG
// redeemed): an RFC 9068 JWT for the target, naming the person's grant, with their roles under the
// `roles` scope and the actors (`act`) when there are some; no refresh token and no ID token.
import type { Client } from '../../store/clients.ts';
import type { User } from '../../store/users.ts';
import { visibleRoles } from '../../tokens/claims.ts';
import { type Actor, signAccessToken } from '../../tokens/jwt.ts';
import type { SigningAlg } from '../../tokens/keystore.ts';
import type { Target } from '../resources.ts';
import type { GrantContext, TokenResponse } from './types.ts';

export interface PersonToken {
  user: User;
  target: Target;
  grantId: string;
  authTime: number;
  ttl: number;
  act?: Actor;
}

export async function signPersonToken(ctx: GrantContext, client: Client, input: PersonToken): Promise<TokenResponse> {
  const { config, keys, now } = ctx;
  const { user, target, ttl } = input;
  const scope = target.scopes.join(' ');
  const accessToken = await signAccessToken(keys, {
    issuer: config.issuer,
    audience: target.audience,
    subject: user.id,
    clientId: client.clientId,
    scope,
    grantId: input.grantId,
    authTime: input.authTime,
    ...(target.scopes.includes('roles') ? { roles: visibleRoles(user, client) } : {}),
    ...(input.act ? { act: input.act } : {}),
    now,
    ttl,
    alg: (client.idTokenSignedResponseAlg ?? config.signingAlg) as SigningAlg,
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope };
}
