// Tessera as the resource's authorization server of the Identity Assertion JWT Authorization Grant
// (draft-ietf-oauth-identity-assertion-authz-grant §5): RFC 7523's jwt-bearer grant with an ID-JAG
// from an identity provider the operator trusts for them (`providers create --type oidc …
// --accept-id-jag`). The assertion is checked as the draft and RFC 7523 §3 say: `typ`, signature
// (the provider's JWKS, named by its discovery document, through the outbound guard, kept and fetched
// again for an unknown kid), `iss`, `aud` = Tessera's issuer, `exp` and `iat`, `client_id` = the
// authenticated client, and its `jti` used once across every instance. The person is found through
// the provider's account links, as an upstream sign-in finds them (src/upstream/accounts.ts). The
// access token's scopes are those of the assertion the client may hold and the resource accepts; its
// grant is written as a code's is, so that userinfo, revocation and the account page know it. Every
// refusal is invalid_grant (RFC 7523 §3.1), the reason in the log only.
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { InvalidGrant, InvalidScope, OAuthError } from '../../errors/index.ts';
import { securityEvent } from '../../events/index.ts';
import type { Client } from '../../store/clients.ts';
import type { Grant } from '../../store/grants.ts';
import type { UpstreamProvider } from '../../store/upstream.ts';
import { ADMIN_ROLE, type User } from '../../store/users.ts';
import { resolveAccount } from '../../upstream/accounts.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { providerHosts } from '../../upstream/fetch.ts';
import { identityFromClaims } from '../../upstream/identity.ts';
import { jwksUriOf } from '../../upstream/index.ts';
import { hashToken, newId } from '../../tokens/opaque.ts';
import { ClientKeysUnavailable } from '../client-auth/keys.ts';
import { PRIVATE_KEY_JWT_ALGS } from '../client-auth/assertion.ts';
import { type Params, required } from '../params.ts';
import { resourceParam, tokenTarget } from '../resources.ts';
import { ADMIN_SCOPE } from '../scopes.ts';
import { JWT_BEARER_GRANT } from '../grant-types.ts';
import { ID_JAG_TYP } from './id-jag.ts';
import { signPersonToken } from './person-token.ts';
import { accessTokenTtl, type AssertionIssuers, type GrantContext, type GrantHandler } from './types.ts';
import { CLOCK_TOLERANCE } from '../../tokens/jwt.ts';

/** The oldest an assertion may be (its `iat`), and the furthest its `exp` may lie ahead, seconds. */
const MAX_AGE = 600;

const refused = (detail: string) => new InvalidGrant('the assertion is not valid', detail);

/** A fault of the provider or the way to it, not of the request: 503, the client may try again. */
const unavailable = (detail: string) =>
  new OAuthError('temporarily_unavailable', 'the assertion cannot be checked now; try again later', 503, detail);

export const jwtBearerGrant: GrantHandler = {
  grantType: JWT_BEARER_GRANT,
  async handle(ctx, client, body: Params) {
    const assertion = required(body, 'assertion');
    const provider = await trustedIssuer(ctx, assertion);
    const claims = await verifyIdJag(ctx, provider, assertion);
    // RFC 7523 §3 item 3, the draft §5.1: the assertion was minted for this client.
    if (claims.client_id !== client.clientId) throw refused(`client_id ${String(claims.client_id)}`);
    // RFC 7523 §3 item 4: short-lived, which also bounds how long its jti is kept.
    if (claims.exp > ctx.now + MAX_AGE) throw refused(`exp ${claims.exp} too far ahead`);
    // RFC 7523 §3 item 7: one use, across every instance, kept until it would be refused as expired anyway.
    const once = hashToken(`id-jag\n${provider.id}\n${claims.jti}`);
    if (!(await ctx.store.useOnce(once, claims.exp + CLOCK_TOLERANCE))) throw refused(`jti ${claims.jti} used before`);
    const user = await personOf(ctx, provider, claims);
    return issue(ctx, client, provider, claims, user, resourceParam(body));
  },
};

interface IdJagClaims extends JWTPayload {
  iss: string;
  sub: string;
  jti: string;
  exp: number;
  client_id?: unknown;
  scope?: unknown;
  resource?: unknown;
  auth_time?: unknown;
  amr?: unknown;
}

/** The provider that trusts the assertion's issuer for ID-JAGs, read before anything is verified. */
async function trustedIssuer(ctx: GrantContext, assertion: string): Promise<UpstreamProvider> {
  let typ: unknown;
  let iss: unknown;
  try {
    typ = decodeProtectedHeader(assertion).typ;
    iss = decodeJwt(assertion).iss;
  } catch {
    throw refused('not a JWT');
  }
  // The draft §3: explicitly typed, so that no other JWT of the issuer (an ID token) passes for one.
  if (typeof typ !== 'string' || typ.toLowerCase() !== ID_JAG_TYP) throw refused(`typ ${String(typ)}`);
  const providers = await ctx.store.listProviders();
  const provider = providers.find((p) => p.type === 'oidc' && p.acceptIdJag && p.issuer === iss);
  if (!provider) throw refused(`issuer ${String(iss)} is not trusted for ID-JAGs (providers --accept-id-jag)`);
  return provider;
}

async function verifyIdJag(ctx: GrantContext, provider: UpstreamProvider, assertion: string): Promise<IdJagClaims> {
  const issuers = ctx.issuers;
  if (!issuers) throw unavailable('no way to reach the issuers of ID-JAGs here');
  const jwksUri = await providerJwksUri(issuers, provider);
  const own = provider.allowPrivateNetwork && providerHosts(provider).has(new URL(jwksUri).host);
  const allowPrivate = issuers.upstream.network.allowPrivate || own;
  try {
    const { payload } = await issuers.keys.withKeysAt(
      jwksUri,
      ctx.now,
      (keys) =>
        jwtVerify(assertion, keys, {
          issuer: provider.issuer!,
          audience: ctx.config.issuer,
          typ: ID_JAG_TYP,
          algorithms: PRIVATE_KEY_JWT_ALGS,
          currentDate: new Date(ctx.now * 1000),
          clockTolerance: CLOCK_TOLERANCE,
          maxTokenAge: MAX_AGE,
          requiredClaims: ['sub', 'aud', 'exp', 'iat', 'jti', 'client_id'],
        }),
      allowPrivate,
    );
    return payload as IdJagClaims;
  } catch (err) {
    if (err instanceof ClientKeysUnavailable) throw unavailable(`${provider.id}: ${err.message}`);
    if (err instanceof errors.JOSEError) throw refused(`${provider.id}: ${err.code}: ${err.message}`);
    throw err;
  }
}

async function providerJwksUri(issuers: AssertionIssuers, provider: UpstreamProvider): Promise<string> {
  try {
    return await jwksUriOf(issuers.upstream, provider);
  } catch (err) {
    if (err instanceof UpstreamError) throw unavailable(`${provider.id}: ${err.reason}: ${err.message}`);
    throw err;
  }
}

/** The user the assertion's subject is, as an upstream sign-in would find them; never someone to ask. */
async function personOf(ctx: GrantContext, provider: UpstreamProvider, claims: IdJagClaims): Promise<User> {
  const identity = identityFromClaims(claims.sub, claims);
  const requester = ctx.requester?.() ?? { ip: null, userAgent: null };
  const input = { provider, identity, profile: async () => identity, requester, now: ctx.now };
  const found = await resolveAccount(ctx.store, input);
  if (found.kind === 'refused') throw refused(`${provider.id} ${claims.sub}: user ${found.userId} is disabled`);
  if (found.kind === 'link-needed') throw refused(`${provider.id} ${claims.sub}: no linked user (${found.reason})`);
  if (found.via === 'email') {
    const { link } = found;
    const data = { provider: link.provider, subject: link.subject, by: link.by };
    const linked = securityEvent('user.upstream_linked', ctx.now, { userId: found.user.id, requester, data });
    const row = { providerId: link.provider, subject: link.subject, userId: found.user.id, email: link.email };
    await ctx.store.createLink({ ...row, createdAt: ctx.now, lastUsedAt: ctx.now }, linked);
  }
  return found.user;
}

async function issue(
  ctx: GrantContext,
  client: Client,
  provider: UpstreamProvider,
  claims: IdJagClaims,
  user: User,
  asked: string | undefined,
) {
  const { config, now } = ctx;
  // The assertion's scopes the client may hold; admin only for an admin client and an admin user.
  const asserted = typeof claims.scope === 'string' ? claims.scope.split(' ').filter((s) => s !== '') : [];
  const adminAllowed = client.admin === true && user.roles.includes(ADMIN_ROLE);
  const held = asserted.filter((s) => client.scopes.includes(s) && (s !== ADMIN_SCOPE || adminAllowed));
  if (held.length === 0) throw new InvalidScope('none of the assertion scopes is one the client may hold');
  const resource = typeof claims.resource === 'string' ? claims.resource : null;
  // …and the resource accepts (RFC 8707; invalid_target when it is not one Tessera issues tokens
  // for). A `resource` asked for must be the assertion's, or narrows one without.
  const target = await tokenTarget(ctx.store, config.accessTokenAudience, { resource, scopes: held }, asked);
  const ttl = accessTokenTtl(config, client);
  const authTime = typeof claims.auth_time === 'number' ? claims.auth_time : now;
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((m): m is string => typeof m === 'string') : [];
  // The grant, written as a code's is (only if the user is active): no refresh token is handed out.
  const grant: Grant = {
    id: newId(),
    userId: user.id,
    clientId: client.clientId,
    scope: target.scopes.join(' '),
    authTime,
    createdAt: now,
    revokedAt: null,
    refreshGeneration: 0,
    refreshExpiresAt: now + ttl,
    refreshIssuedAt: now,
    resource: resource ?? asked ?? null,
    amr: amr.length > 0 ? amr.join(' ') : null,
    acr: null,
    sid: null,
  };
  if (!(await ctx.store.redeemAuthorizationCode({ grant }))) throw refused(`user ${user.id} is not active`);
  // No ID token: the assertion signed the person in elsewhere, not to this client; no refresh token.
  const token = await signPersonToken(ctx, client, { user, target, grantId: grant.id, authTime, ttl });
  const data = { provider: provider.id, subject: claims.sub, jti: claims.jti, grant: grant.id, scopes: target.scopes };
  const requester = ctx.requester?.();
  const redeemed = securityEvent('id_jag.redeemed', now, {
    userId: user.id,
    clientId: client.clientId,
    requester,
    data,
  });
  await ctx.store.recordEvent(redeemed);
  return token;
}
