// RFC 8693 token exchange: a client holding a person's token (Tessera's access token or ID token)
// gets a narrower access token for the next service it calls, saying who acts for whom (`act`). The
// result has no scope the subject token lacks and outlives it by no second; it keeps the subject's
// grant, so that withdrawing the app or revoking the grant ends it too. A client exchanges only for
// the audiences the operator allowed it (`clients update --exchange-audience`); without `audience`
// or `resource`, for the subject token's own. With requested_token_type id-jag, the answer is an
// identity assertion for another authorization server instead (./id-jag.ts). Each exchange is an event.
import { InvalidRequest, InvalidScope, InvalidTarget } from '../../errors/index.ts';
import { securityEvent } from '../../events/index.ts';
import type { Client } from '../../store/clients.ts';
import type { Actor } from '../../tokens/jwt.ts';
import { type Params, required, single } from '../params.ts';
import { resourceParam, type Target, tokenTarget } from '../resources.ts';
import { checkAdminClient, checkAllowedScopes, parseScope } from '../scopes.ts';
import { mintIdJag } from './id-jag.ts';
import { signPersonToken } from './person-token.ts';
import { TOKEN_EXCHANGE } from '../grant-types.ts';
import { TOKEN_TYPES, tokenActor, tokenSubject, type TokenSubject } from './subject-token.ts';
import { accessTokenTtl, type GrantContext, type GrantHandler, type TokenResponse } from './types.ts';

export const tokenExchangeGrant: GrantHandler = {
  grantType: TOKEN_EXCHANGE,
  async handle(ctx, client, body: Params): Promise<TokenResponse> {
    // §2.1: subject_token and its type are required; requested_token_type defaults to an access token.
    const subjectToken = required(body, 'subject_token');
    const subjectType = required(body, 'subject_token_type');
    const requestedType = single(body, 'requested_token_type') ?? TOKEN_TYPES.accessToken;
    if (requestedType !== TOKEN_TYPES.accessToken && requestedType !== TOKEN_TYPES.idJag) {
      throw new InvalidRequest('requested_token_type may be an access token or an ID-JAG');
    }
    const subject = await tokenSubject(ctx, client, subjectToken, subjectType, 'subject_token');
    if (requestedType === TOKEN_TYPES.idJag) {
      if (subjectType !== TOKEN_TYPES.idToken) throw new InvalidRequest('an ID-JAG is issued for an ID token');
      if (single(body, 'actor_token') !== undefined) throw new InvalidRequest('an ID-JAG takes no actor_token');
      return mintIdJag(ctx, client, body, subject);
    }
    return exchange(ctx, client, body, subject, subjectType);
  },
};

/** §2.1: the actor is the actor token's subject, or else the client; the subject token's actors nest within. */
async function actorOf(ctx: GrantContext, client: Client, body: Params, subject: TokenSubject): Promise<Actor> {
  const actorToken = single(body, 'actor_token');
  const actorType = single(body, 'actor_token_type');
  // §2.1: actor_token_type is required with an actor_token, and must not be sent without one.
  if ((actorToken === undefined) !== (actorType === undefined)) {
    throw new InvalidRequest('actor_token and actor_token_type go together');
  }
  const sub = actorToken === undefined ? client.clientId : await tokenActor(ctx, client, actorToken, actorType!);
  return subject.act ? { sub, act: subject.act } : { sub };
}

/** The audience asked for (`audience` or `resource`, one of them or both the same), or undefined. */
function requestedAudience(body: Params): string | undefined {
  const audience = single(body, 'audience');
  const resource = resourceParam(body);
  if (audience !== undefined && resource !== undefined && audience !== resource) {
    throw new InvalidTarget('Tessera issues a token for one audience: audience and resource must agree');
  }
  return audience ?? resource;
}

/** §2.2.2: the target, among those the operator allowed the client; the subject's own when none is asked. */
async function target(
  ctx: GrantContext,
  client: Client,
  audience: string | undefined,
  subject: TokenSubject,
  scopes: string[],
): Promise<Target> {
  const defaultAudience = ctx.config.accessTokenAudience;
  // The subject token's own audience, asked for by name or not, adds no reach: no permission needed.
  if (audience === undefined || audience === (subject.audience ?? defaultAudience)) {
    const own = subject.audience === defaultAudience ? null : subject.audience;
    return tokenTarget(ctx.store, defaultAudience, { resource: own, scopes }, undefined);
  }
  if (!client.exchangeAudiences?.includes(audience)) {
    throw new InvalidTarget('the client may not exchange tokens for this audience', `audience ${audience}`);
  }
  const resource = audience === defaultAudience ? undefined : audience;
  return tokenTarget(ctx.store, defaultAudience, { resource: null, scopes }, resource);
}

async function exchange(
  ctx: GrantContext,
  client: Client,
  body: Params,
  subject: TokenSubject,
  subjectType: string,
): Promise<TokenResponse> {
  const { config, now } = ctx;
  const requested = single(body, 'scope');
  // §2.1 scope: narrower, never wider than the subject token's; and within what the client may hold.
  const scopes =
    requested === undefined ? subject.scopes.filter((s) => client.scopes.includes(s)) : parseScope(requested);
  const beyond = scopes.filter((s) => !subject.scopes.includes(s));
  if (beyond.length > 0) {
    throw new InvalidScope('scope exceeds the subject token', `not in the subject token: ${beyond.join(' ')}`);
  }
  checkAllowedScopes(scopes, client.scopes);
  checkAdminClient(scopes, client);
  if (scopes.length === 0) throw new InvalidScope('no scope of the subject token is left to give');
  const audience = requestedAudience(body);
  const to = await target(ctx, client, audience, subject, scopes);
  const act = await actorOf(ctx, client, body, subject);
  // Never outliving the subject token.
  const ttl = Math.min(accessTokenTtl(config, client), subject.exp - now);
  const grantId = subject.grant.id;
  const token = await signPersonToken(ctx, client, {
    user: subject.user,
    target: to,
    grantId,
    authTime: subject.authTime,
    ttl,
    act,
  });
  const data = {
    actor: act.sub,
    subject_token_type: subjectType,
    audience: to.audience,
    scopes: to.scopes,
    grant: grantId,
    ...(act.act ? { delegated_by: act.act.sub } : {}),
  };
  const requester = ctx.requester?.();
  await ctx.store.recordEvent(
    securityEvent('token.exchanged', now, { userId: subject.user.id, clientId: client.clientId, requester, data }),
  );
  return { ...token, issued_token_type: TOKEN_TYPES.accessToken };
}
