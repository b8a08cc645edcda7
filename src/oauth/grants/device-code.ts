// RFC 8628 §3.4, §3.5: the device polls with its device code until the person has answered on the
// verification page (../device/verification.ts). Pending: authorization_pending, or slow_down when it
// polled sooner than its interval (which then grows by 5 seconds for this and every later poll);
// denied: access_denied; expired: expired_token. Approved: the tokens, once. The approval is redeemed
// as an authorization code is: by inserting the grant under the request's id, one conditional write
// (GrantStore.redeemAuthorizationCode), so that of two polls at once, on any instances, one gets the
// tokens and the other invalid_grant, as does every poll after.
import { AuthorizationPending, DeviceAccessDenied, ExpiredToken, InvalidGrant, SlowDown } from '../../errors/index.ts';
import type { Client } from '../../store/clients.ts';
import type { DeviceAuthorization } from '../../store/device-authorizations.ts';
import { claimsForScopes } from '../../tokens/claims.ts';
import { hashToken } from '../../tokens/opaque.ts';
import { DEVICE_CODE_GRANT } from '../grant-types.ts';
import { type Params, required } from '../params.ts';
import { resourceParam, tokenTarget } from '../resources.ts';
import { signTokens } from './issue.ts';
import { accessTokenTtl, firstRefreshTtl, type GrantContext, type GrantHandler, type TokenResponse } from './types.ts';

/** §3.5: what slow_down adds to the interval. */
const SLOW_DOWN_STEP = 5;

export const deviceCodeGrant: GrantHandler = {
  grantType: DEVICE_CODE_GRANT,
  async handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse> {
    const { store, now } = ctx;
    const found = await store.getDeviceAuthorizationByDeviceCode(hashToken(required(body, 'device_code')));
    // A device code of another client is as good as none (RFC 6749 §5.2 invalid_grant).
    if (!found || found.clientId !== client.clientId) {
      const detail = found ? `device authorization ${found.id} belongs to ${found.clientId}` : undefined;
      throw new InvalidGrant('the device code is invalid', detail);
    }
    if (found.expiresAt <= now) throw new ExpiredToken('the device code has expired');
    if (found.status === 'denied') throw new DeviceAccessDenied('the user denied the request');
    if (found.status === 'pending') return pending(ctx, found);
    return issue(ctx, client, found, body);
  },
};

/** Still waiting: the poll recorded, answered authorization_pending, or slow_down when too soon. */
async function pending(ctx: GrantContext, found: DeviceAuthorization): Promise<never> {
  const { now } = ctx;
  const tooSoon = found.lastPolledAt !== null && now - found.lastPolledAt < found.interval;
  const interval = tooSoon ? found.interval + SLOW_DOWN_STEP : found.interval;
  const recorded = await ctx.store.recordDevicePoll(found.id, found.lastPolledAt, now, interval);
  // A poll that lost to a concurrent one came sooner than the interval after it.
  if (tooSoon || !recorded) {
    throw new SlowDown(`polled sooner than the interval: wait ${interval} seconds between polls`);
  }
  throw new AuthorizationPending('the user has not yet answered');
}

async function issue(
  ctx: GrantContext,
  client: Client,
  found: DeviceAuthorization,
  body: Params,
): Promise<TokenResponse> {
  const { store, now, config } = ctx;
  const decision = found.decision!;
  const user = await store.getUserById(decision.userId);
  if (!user) throw new InvalidGrant('the user is no longer active');
  const scopes = found.scope.split(' ').filter((s) => s !== '');
  const target = await tokenTarget(
    store,
    config.accessTokenAudience,
    { resource: found.resource, scopes },
    resourceParam(body),
  );
  // The grant takes the request's id: inserting it once is what redeems the approval.
  const grantId = found.id;
  // A refresh token only for a client allowed to use one; else the grant lives as its access token.
  const refreshes = client.grantTypes.includes('refresh_token');
  const refreshToken = ctx.refreshTokens.issue(grantId, 1);
  const amr = decision.amr === null ? [] : decision.amr.split(' ');
  const signing = signTokens(ctx, {
    client,
    subject: user.id,
    claims: claimsForScopes(user, scopes, client),
    scopes,
    target,
    grantId,
    authTime: decision.authTime,
    amr,
    acr: decision.acr,
    sid: decision.sid,
    nonce: null,
    refreshToken,
  });
  signing.catch(() => {});
  const lifetime = refreshes ? firstRefreshTtl(config, client) : accessTokenTtl(config, client);
  const won = await store.redeemAuthorizationCode({
    grant: {
      id: grantId,
      userId: user.id,
      clientId: client.clientId,
      scope: found.scope,
      authTime: decision.authTime,
      createdAt: now,
      revokedAt: null,
      refreshGeneration: 1,
      refreshExpiresAt: now + lifetime,
      refreshIssuedAt: now,
      resource: found.resource,
      amr: decision.amr,
      acr: decision.acr,
      sid: decision.sid,
    },
  });
  // Lost: redeemed before (or by a concurrent poll), or the user is no longer active.
  if (!won) {
    if (!(await store.getGrant(grantId))) throw new InvalidGrant('the user is no longer active');
    throw new InvalidGrant('the device code has already been used', `device authorization ${found.id}`);
  }
  const response = await signing;
  if (!refreshes) delete response.refresh_token;
  return response;
}
