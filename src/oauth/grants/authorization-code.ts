// RFC 6749 §4.1.3 and RFC 7636 §4.6: exchanging an authorization code.
import { InvalidGrant, InvalidRequest } from '../../errors/index.ts';
import { securityEvent } from '../../events/index.ts';
import type { Client } from '../../store/clients.ts';
import type { AuthorizationCode } from '../codes.ts';
import { type Params, required, single } from '../params.ts';
import { isWellFormedPkceValue, verifyS256 } from '../pkce.ts';
import { resourceParam, tokenTarget } from '../resources.ts';
import { signTokens } from './issue.ts';
import { firstRefreshTtl, type GrantContext, type GrantHandler, type TokenResponse } from './types.ts';

export const authorizationCodeGrant: GrantHandler = {
  grantType: 'authorization_code',
  async handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse> {
    const { store, now } = ctx;
    const presented = required(body, 'code');
    const redirectUri = required(body, 'redirect_uri');
    const codeVerifier = single(body, 'code_verifier');
    if (codeVerifier !== undefined && !isWellFormedPkceValue(codeVerifier)) {
      throw new InvalidRequest('code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]');
    }

    const code = ctx.codes.open(presented, now);
    if (!code) throw new InvalidGrant('the authorization code is invalid');
    // A code issued to another client is refused before anything else and revokes nothing: only its
    // own (authenticated) client's second use is a replay (RFC 6749 §4.1.2), else a leaked used code
    // would let anyone cut its user off.
    if (code.clientId !== client.clientId) {
      throw new InvalidGrant('the authorization code is invalid', `code ${code.id} was issued to ${code.clientId}`);
    }
    // Every check that fails first asks whether the code was already redeemed: RFC 6749 §4.1.2, a
    // code used twice revokes what was issued from it, whoever presents it the second time.
    const reject = (reason: string) => rejectCode(ctx, code, reason);
    if (code.exp <= now) return reject('the authorization code has expired');
    if (code.redirectUri !== redirectUri) return reject('redirect_uri does not match the authorization request');
    const pkceError = checkPkce(code.codeChallenge, codeVerifier);
    if (pkceError) return reject(pkceError);
    // RFC 9449 §10: a code bound with dpop_jkt is redeemed only with a proof of that key.
    if (code.dpopJkt !== null && code.dpopJkt !== ctx.dpopJkt) return reject('the DPoP proof does not match dpop_jkt');

    const scopes = code.scope.split(' ').filter((s) => s !== '');
    const target = await tokenTarget(
      store,
      ctx.config.accessTokenAudience,
      { resource: code.resource, scopes },
      resourceParam(body),
    );
    // The grant takes the code's id: inserting it once is what redeems the code.
    // It holds the state of its refresh tokens too: the first is generation 1.
    const grantId = code.id;
    const refreshToken = ctx.refreshTokens.issue(grantId, 1);
    // The tokens are signed while the grant's writes commit, and handed out only once they have.
    // The user is not read: the code carries the claims, and the grant is written only if the user
    // is still active.
    const signing = signTokens(ctx, {
      client,
      subject: code.userId,
      claims: code.claims,
      scopes,
      target,
      grantId,
      authTime: code.authTime,
      amr: code.amr,
      acr: code.acr,
      sid: code.sid,
      nonce: code.nonce,
      refreshToken,
    });
    signing.catch(() => {});
    const won = await store.redeemAuthorizationCode({
      grant: {
        id: grantId,
        userId: code.userId,
        clientId: client.clientId,
        scope: code.scope,
        authTime: code.authTime,
        createdAt: now,
        revokedAt: null,
        refreshGeneration: 1,
        refreshExpiresAt: now + firstRefreshTtl(ctx.config, client),
        refreshIssuedAt: now,
        resource: code.resource,
        // What a refreshed ID token states of the sign-in, kept with the grant: a refresh reads nothing else.
        amr: code.amr.length > 0 ? code.amr.join(' ') : null,
        acr: code.acr,
        // Written only when the request had a claims parameter.
        ...(code.claimsRequest !== null ? { claimsRequest: code.claimsRequest } : {}),
        sid: code.sid,
        // RFC 9449 §5: a public client's refresh tokens are bound to the key of its proof; a
        // confidential client's are bound to its authentication already.
        ...(ctx.dpopJkt !== undefined && client.tokenEndpointAuthMethod === 'none' ? { dpopJkt: ctx.dpopJkt } : {}),
      },
    });
    // Lost: the code was redeemed before (or by a concurrent request), a second use; or the user is
    // no longer active.
    if (!won) return rejectCode(ctx, code, 'the user is no longer active');
    return signing;
  },
};

/** Rejects the code; when it was redeemed before, also revokes the grant issued from it (RFC 6749 §4.1.2). */
async function rejectCode(ctx: GrantContext, code: AuthorizationCode, reason: string): Promise<never> {
  const { store, now } = ctx;
  if (await store.getGrant(code.id)) {
    const replay = securityEvent('code.replayed', now, {
      userId: code.userId,
      clientId: code.clientId,
      requester: ctx.requester?.(),
      data: { grant: code.id },
    });
    await store.revokeGrant(code.id, now, replay);
    throw new InvalidGrant(
      'the authorization code has already been used',
      `second use of code ${code.id}: its grant revoked`,
    );
  }
  throw new InvalidGrant(reason);
}

/** RFC 7636 §4.6, and the downgrade rule: a verifier without a challenge is rejected too. */
function checkPkce(codeChallenge: string | null, codeVerifier: string | undefined): string | undefined {
  if (codeChallenge === null) {
    return codeVerifier === undefined
      ? undefined
      : 'code_verifier was sent but the authorization request had no code_challenge';
  }
  if (codeVerifier === undefined) return 'code_verifier is required';
  if (!verifyS256(codeVerifier, codeChallenge)) return 'code_verifier does not match the code_challenge';
  return undefined;
}
