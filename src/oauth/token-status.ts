// Is a token active? One answer for userinfo, introspection (RFC 7662) and revocation (RFC 7009):
// a JWT access token is active while its signature, issuer, audience and expiry hold, its grant is
// not revoked, it was not revoked by itself, and its user is not disabled; a refresh token while it
// is unrotated, unexpired, and its grant and user are live.
import type { Config } from '../config/index.ts';
import { InsufficientScope, InvalidToken } from '../errors/index.ts';
import type { ClientStore } from '../store/clients.ts';
import type { Grant, GrantStore, RevocationStore } from '../store/grants.ts';
import type { User } from '../store/users.ts';
import type { KeyStore } from '../tokens/keystore.ts';
import { type AccessTokenClaims, verifyAccessToken } from '../tokens/jwt.ts';
import type { RefreshTokens } from '../tokens/refresh.ts';
import { checkTokenBinding } from './dpop.ts';

export interface TokenStatusDeps {
  config: Pick<Config, 'issuer' | 'accessTokenAudience' | 'refreshTokenAbsoluteTtl'>;
  store: ClientStore & GrantStore & RevocationStore;
  keys: KeyStore;
  refreshTokens: RefreshTokens;
}

export interface ActiveAccessToken {
  claims: AccessTokenClaims;
  /** Undefined for a client's own token (client_credentials): no user. */
  user: User | undefined;
  /** The grant's claims parameter (src/oauth/claims-request.ts), for userinfo; absent for a client's own token. */
  grant?: Pick<Grant, 'claimsRequest'>;
}

/**
 * The access token's claims and user, or InvalidToken saying why it is not active. Only a token for
 * the default audience is accepted, unless `anyAudience` (introspection and revocation, which answer
 * for the tokens of every API, RFC 8707).
 */
export async function activeAccessToken(
  deps: TokenStatusDeps,
  token: string,
  now: number,
  anyAudience = false,
): Promise<ActiveAccessToken> {
  const claims = await verifyAccessToken(deps.keys, token, {
    issuer: deps.config.issuer,
    audience: anyAudience ? null : deps.config.accessTokenAudience,
    now,
  });
  if (claims.grant_id === undefined) {
    // A client's own token (RFC 6749 §4.4): active while its client exists and it was not revoked.
    const client = await deps.store.getClient(claims.client_id);
    if (!client || client.clientId !== claims.sub) throw new InvalidToken('the client no longer exists');
    const { revoked } = await deps.store.getAccessTokenState({ userId: '', grantId: '', jti: claims.jti });
    if (revoked) throw new InvalidToken('the access token has been revoked');
    return { claims, user: undefined };
  }
  const { grant, revoked, user } = await deps.store.getAccessTokenState({
    userId: claims.sub,
    grantId: claims.grant_id,
    jti: claims.jti,
  });
  if (!grant || grant.revokedAt !== null || revoked) throw new InvalidToken('the access token has been revoked');
  if (!user || user.disabled) throw new InvalidToken('the user is no longer active');
  return { claims, user, grant };
}

/** The token of an `Authorization: Bearer …` header (RFC 6750 §2.1), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? '')?.[1];
}

/** The token of an `Authorization: DPoP …` header (RFC 9449 §7.1, the token68 syntax), or undefined. */
export function dpopToken(authorization: string): string | undefined {
  return /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)?.[1];
}

/**
 * The user of an access token for Tessera's own APIs (registration, /api/webhooks) that carries
 * `scope`: InvalidToken without an active one, InsufficientScope for a token without the scope or
 * without a user (a client's own token).
 */
export async function userWithScope(
  deps: TokenStatusDeps,
  authorization: string | undefined,
  scope: string,
  now: number,
): Promise<User> {
  const token = bearerToken(authorization);
  if (token === undefined) throw new InvalidToken(`an access token with the ${scope} scope is required`);
  const { claims, user } = await activeAccessToken(deps, token, now);
  // RFC 9449 §7.2: these APIs take Bearer tokens only, and a DPoP-bound token is never one.
  checkTokenBinding(claims.cnf, undefined);
  if (!user || !claims.scope.split(' ').includes(scope)) {
    throw new InsufficientScope(`this needs a user's access token with the ${scope} scope`);
  }
  return user;
}

export interface RefreshTokenState {
  grantId: string;
  clientId: string;
  userId: string;
  scope: string;
  issuedAt: number;
  expiresAt: number;
  active: boolean;
}

/** A refresh token's family and whether the token is active, or undefined when unknown. */
export async function refreshTokenState(
  deps: TokenStatusDeps,
  token: string,
  now: number,
): Promise<RefreshTokenState | undefined> {
  const id = deps.refreshTokens.parse(token);
  const family = id && (await deps.store.getTokenFamily(id.grantId));
  if (!id || !family || id.generation > family.grant.refreshGeneration) return undefined;
  const { grant, user } = family;
  return {
    grantId: grant.id,
    clientId: grant.clientId,
    userId: grant.userId,
    scope: grant.scope,
    issuedAt: grant.refreshIssuedAt,
    expiresAt: grant.refreshExpiresAt,
    active: id.generation === grant.refreshGeneration && grant.refreshExpiresAt > now && live(deps, grant, user, now),
  };
}

/** The family is neither revoked nor past its absolute lifetime, and its user is active. */
function live(deps: TokenStatusDeps, grant: Grant, user: User | undefined, now: number): boolean {
  return (
    grant.revokedAt === null &&
    grant.createdAt + deps.config.refreshTokenAbsoluteTtl > now &&
    user !== undefined &&
    !user.disabled
  );
}

/** JWTs have three dot-separated parts; refresh tokens have no dots. */
export function looksLikeJwt(token: string): boolean {
  return token.split('.').length === 3;
}
