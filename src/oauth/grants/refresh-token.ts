// RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every use returns the family's next refresh token;
// presenting one rotated away revokes the whole family. The family's state is in its grant
// (src/tokens/refresh.ts): a token names its grant and generation, and only the current generation
// is good for a refresh.
import type { Config } from '../../config/index.ts';
import { InvalidGrant, InvalidScope, InvalidTarget } from '../../errors/index.ts';
import { securityEvent } from '../../events/index.ts';
import { claimsForScopes } from '../../tokens/claims.ts';
import { parseClaimsRequest } from '../claims-request.ts';
import type { Client } from '../../store/clients.ts';
import type { TokenFamily } from '../../store/grants.ts';
import type { RefreshTokenId } from '../../tokens/refresh.ts';
import { type Params, required, single } from '../params.ts';
import { ADMIN_SCOPE, parseScope } from '../scopes.ts';
import { ADMIN_ROLE } from '../../store/users.ts';
import { knownResource, resourceParam, tokenTarget } from '../resources.ts';
import { signTokens } from './issue.ts';
import {
  type GrantContext,
  type GrantHandler,
  refreshAbsoluteTtl,
  refreshTokenTtl,
  type TokenResponse,
} from './types.ts';

export const refreshTokenGrant: GrantHandler = {
  grantType: 'refresh_token',
  async handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse> {
    const { now, config } = ctx;
    const presented = required(body, 'refresh_token');
    const scopeParam = single(body, 'scope');
    const id = ctx.refreshTokens.parse(presented);
    if (!id) throw new InvalidGrant('the refresh token is invalid');
    // RFC 6749 §6: the scope may be narrowed, never widened (the store checks it against the grant).
    const scopes = scopeParam === undefined ? undefined : parseScope(scopeParam);
    // RFC 8707: the grant's resource, or for a grant without one any registered resource (narrowing).
    const resource = resourceParam(body);
    if (resource !== undefined) await knownResource(ctx.store, resource);

    // One conditional write: the tokens are signed while it commits, and handed out once it has.
    const outcome = await ctx.store.rotateTokenFamily(
      {
        grantId: id.grantId,
        generation: id.generation,
        clientId: client.clientId,
        scope: scopes?.join(' ') ?? null,
        resource: resource ?? null,
        jkt: ctx.dpopJkt ?? null,
        now,
        ttl: refreshTokenTtl(config, client),
        absoluteTtl: refreshAbsoluteTtl(config, client),
      },
      (family) => refreshed(ctx, client, family, scopes, resource),
    );
    return outcome.rotated ? outcome.value : refused(ctx, client, id, outcome.family, scopes, resource);
  },
};

/**
 * A refresh the store did not rotate: why, from the family as it stands. The token just rotated away
 * is still good within the reuse interval, which lets a client's concurrent refreshes all succeed:
 * they are answered with the current token, and nothing is written.
 */
async function refused(
  ctx: GrantContext,
  client: Client,
  id: RefreshTokenId,
  family: TokenFamily | undefined,
  scopes: string[] | undefined,
  resource: string | undefined,
): Promise<TokenResponse> {
  if (!family) throw new InvalidGrant('the refresh token is invalid', `no grant ${id.grantId}`);
  const { grant, user } = family;
  const current = grant.refreshGeneration;
  if (grant.clientId !== client.clientId) {
    throw new InvalidGrant('the refresh token is invalid', `grant ${grant.id} was issued to client ${grant.clientId}`);
  }
  if (grant.revokedAt !== null) throw new InvalidGrant('the refresh token has been revoked');
  // RFC 9449 §5: a family bound to a DPoP key is refreshed only with a proof of that key.
  if (grant.dpopJkt != null && grant.dpopJkt !== ctx.dpopJkt) {
    throw new InvalidGrant('the refresh token is bound to another DPoP key', `grant ${grant.id}`);
  }
  if (id.generation > current)
    throw new InvalidGrant('the refresh token is invalid', `generation ${id.generation} of ${current}`);
  const reused = id.generation === current - 1 && withinReuseInterval(ctx.config, grant.refreshIssuedAt, ctx.now);
  if (id.generation < current && !reused) return replayed(ctx, family, `generation ${id.generation} of ${current}`);
  const { now, config } = ctx;
  if (grant.refreshExpiresAt <= now || grant.createdAt + refreshAbsoluteTtl(config, client) <= now) {
    throw new InvalidGrant('the refresh token has expired');
  }
  const widened = scopes?.filter((s) => !grant.scope.split(' ').includes(s)) ?? [];
  if (widened.length > 0) {
    throw new InvalidScope('scope exceeds the original grant', `not granted: ${widened.join(' ')}`);
  }
  if (resource !== undefined && grant.resource !== null && resource !== grant.resource) {
    throw new InvalidTarget('the grant was authorized for another resource');
  }
  if (!user || user.disabled) throw new InvalidGrant('the user is no longer active');
  // The current token, valid: it was refused as the grant changed under the request (a race).
  if (!reused) throw new InvalidGrant('the refresh token changed during the request; try again');
  return refreshed(ctx, client, family, scopes, resource);
}

function withinReuseInterval(
  config: Pick<Config, 'refreshTokenReuseInterval'>,
  rotatedAt: number,
  now: number,
): boolean {
  return config.refreshTokenReuseInterval > 0 && now - rotatedAt <= config.refreshTokenReuseInterval;
}

/** Revokes the family of a token presented again after its rotation. */
async function replayed(ctx: GrantContext, family: TokenFamily, presented: string): Promise<never> {
  const { grant } = family;
  const grantId = grant.id;
  const reuse = securityEvent('refresh_token.reused', ctx.now, {
    userId: grant.userId,
    clientId: grant.clientId,
    requester: ctx.requester?.(),
    data: { grant: grantId, presented },
  });
  await ctx.store.revokeGrant(grantId, ctx.now, reuse);
  throw new InvalidGrant('the refresh token has already been used', `replay of ${presented}: grant ${grantId} revoked`);
}

/**
 * The family's current tokens. OIDC Core §12.2: the refreshed ID token keeps sub and auth_time (and
 * the sign-in's amr and acr, from the grant the rotation returned), no nonce.
 */
async function refreshed(
  ctx: GrantContext,
  client: Client,
  family: TokenFamily,
  scopes: string[] | undefined,
  resource: string | undefined,
) {
  const { grant, user } = family;
  const granted = scopes ?? grant.scope.split(' ').filter((s) => s !== '');
  // The admin scope lasts while the client is marked and the user holds the role, not a moment longer.
  if (granted.includes(ADMIN_SCOPE) && (client.admin !== true || !user!.roles.includes(ADMIN_ROLE)))
    throw new InvalidGrant('the admin scope is no longer granted to this client or user');
  const audience = ctx.config.accessTokenAudience;
  const target = await tokenTarget(ctx.store, audience, { resource: grant.resource, scopes: granted }, resource);
  return signTokens(ctx, {
    client,
    subject: user!.id,
    // The claims parameter's id_token member, when the authorization request had one.
    claims: claimsForScopes(user!, granted, client, parseClaimsRequest(grant.claimsRequest)?.idToken),
    scopes: granted,
    target,
    grantId: grant.id,
    authTime: grant.authTime,
    amr: grant.amr?.split(' ') ?? [],
    acr: grant.acr,
    sid: grant.sid,
    nonce: null,
    refreshToken: ctx.refreshTokens.issue(grant.id, grant.refreshGeneration),
  });
}
