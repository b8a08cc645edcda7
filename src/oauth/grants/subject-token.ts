// The tokens a token exchange is given (RFC 8693 §2.1): the subject's and the actor's, each one of
// Tessera's own, an access token or an ID token. An access token is checked as userinfo checks it
// (../token-status.ts: signature, expiry, its grant and user live, not revoked); an ID token by its
// signature, issuer and expiry, issued to the client that presents it, and with its user's grant of
// that client from the same sign-in still live. §2.2.2: a token that fails is invalid_request.
import { jwtVerify } from 'jose';
import { InvalidRequest, OAuthError } from '../../errors/index.ts';
import type { Client } from '../../store/clients.ts';
import type { Grant } from '../../store/grants.ts';
import type { User } from '../../store/users.ts';
import type { Actor } from '../../tokens/jwt.ts';
import { activeAccessToken } from '../token-status.ts';
import type { GrantContext } from './types.ts';

/** RFC 8693 §3: the token type identifiers. */
export const TOKEN_TYPES = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  /** draft-ietf-oauth-identity-assertion-authz-grant §3. */
  idJag: 'urn:ietf:params:oauth:token-type:id-jag',
} as const;

/** Someone a token speaks for, as the exchange needs them. */
export interface TokenSubject {
  user: User;
  /** The grant the token came from (the user's consent to its client): an exchanged token keeps it. */
  grant: Pick<Grant, 'id' | 'resource'>;
  /** The scopes the token holds. */
  scopes: string[];
  /** Whom the token is for: an access token's `aud`; for an ID token, its grant's resource or null (the default). */
  audience: string | null;
  exp: number;
  authTime: number;
  /** RFC 8176 methods of the sign-in, from an ID token; empty for an access token. */
  amr: string[];
  acr: string | null;
  /** An exchanged token's actors (RFC 8693 §4.1). */
  act: Actor | undefined;
}

/** The token `token` of type `type`, checked as the header says; invalid_request when it cannot be used. */
export async function tokenSubject(
  ctx: GrantContext,
  client: Client,
  token: string,
  type: string,
  name: 'subject_token' | 'actor_token',
): Promise<TokenSubject> {
  try {
    if (type === TOKEN_TYPES.accessToken) return await fromAccessToken(ctx, token);
    if (type === TOKEN_TYPES.idToken) return await fromIdToken(ctx, client, token);
  } catch (err) {
    if (err instanceof OAuthError) throw new InvalidRequest(`the ${name} is invalid`, `${name}: ${err.message}`);
    throw err;
  }
  throw new InvalidRequest(`${name}_type must be an access_token or id_token token type of RFC 8693`);
}

/**
 * The `sub` of the actor token (§2.1): a person's token as a subject token is checked, or a client's
 * own access token (client_credentials: an agent acting as itself), whose `sub` is the client.
 */
export async function tokenActor(ctx: GrantContext, client: Client, token: string, type: string): Promise<string> {
  if (type !== TOKEN_TYPES.accessToken) return (await tokenSubject(ctx, client, token, type, 'actor_token')).user.id;
  const { config, store, keys, refreshTokens, now } = ctx;
  try {
    return (await activeAccessToken({ config, store, keys, refreshTokens }, token, now, true)).claims.sub;
  } catch (err) {
    if (err instanceof OAuthError)
      throw new InvalidRequest('the actor_token is invalid', `actor_token: ${err.message}`);
    throw err;
  }
}

async function fromAccessToken(ctx: GrantContext, token: string): Promise<TokenSubject> {
  const { config, store, keys, refreshTokens, now } = ctx;
  // Any audience: an API exchanges the token it was sent, whose audience is itself.
  const active = await activeAccessToken({ config, store, keys, refreshTokens }, token, now, true);
  const { claims, user } = active;
  // A client's own token (client_credentials) speaks for no person.
  if (!user || claims.grant_id === undefined) throw new InvalidRequest('the token speaks for no user');
  return {
    user,
    grant: { id: claims.grant_id, resource: null },
    scopes: claims.scope.split(' ').filter((s) => s !== ''),
    audience: claims.aud,
    exp: claims.exp,
    authTime: claims.auth_time ?? claims.iat,
    amr: [],
    acr: null,
    act: claims.act,
  };
}

interface IdTokenClaims {
  sub: string;
  aud: string | string[];
  exp: number;
  auth_time: number;
  amr?: string[];
  acr?: string;
}

async function fromIdToken(ctx: GrantContext, client: Client, token: string): Promise<TokenSubject> {
  const { config, keys, now } = ctx;
  const signer = keys.signerOf(token);
  if (signer === 'malformed') throw new InvalidRequest('the ID token is malformed');
  if (!signer) throw new InvalidRequest('the ID token is not signed by a known key');
  const { key } = signer;
  let claims: IdTokenClaims;
  try {
    const { payload } = await jwtVerify(token, key, {
      issuer: config.issuer,
      audience: client.clientId,
      typ: 'JWT',
      algorithms: ['RS256', 'ES256'],
      currentDate: new Date(now * 1000),
      requiredClaims: ['sub', 'aud', 'exp', 'iat', 'auth_time'],
    });
    claims = payload as unknown as IdTokenClaims;
  } catch (err) {
    throw new InvalidRequest('the ID token is not valid for this client', (err as Error).message);
  }
  // The sign-in's grant of this client: a person who withdrew the app, or was signed out of it, is
  // no longer theirs to speak for.
  const grants = await ctx.store.listActiveGrants(claims.sub, now);
  const grant = grants.find((g) => g.clientId === client.clientId && g.authTime === claims.auth_time);
  const family = grant && (await ctx.store.getTokenFamily(grant.id));
  if (!grant || !family?.user || family.user.disabled) throw new InvalidRequest('the sign-in is no longer active');
  return {
    user: family.user,
    grant: { id: grant.id, resource: grant.resource },
    scopes: grant.scope.split(' ').filter((s) => s !== ''),
    audience: grant.resource,
    exp: claims.exp,
    authTime: claims.auth_time,
    amr: Array.isArray(claims.amr) ? claims.amr.filter((m) => typeof m === 'string') : [],
    acr: typeof claims.acr === 'string' ? claims.acr : null,
    act: undefined,
  };
}
