// RFC 6749 §4.1.3 and RFC 7636 §4.6: exchanging an authorization code.
import { InvalidGrant, InvalidRequest } from '../../errors/index.ts';
import type { Client } from '../../store/store.ts';
import { hashToken, newRefreshToken, newSortableId, refreshTokenKey } from '../../tokens/opaque.ts';
import { type Params, single } from '../params.ts';
import { isWellFormedPkceValue, verifyS256 } from '../pkce.ts';
import { signTokens } from './issue.ts';
import type { GrantContext, GrantHandler, TokenResponse } from './types.ts';

export const authorizationCodeGrant: GrantHandler = {
  grantType: 'authorization_code',
  async handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse> {
    const { store, now } = ctx;
    const code = single(body, 'code');
    if (!code) throw new InvalidRequest('code is required');
    const redirectUri = single(body, 'redirect_uri');
    if (!redirectUri) throw new InvalidRequest('redirect_uri is required');
    const codeVerifier = single(body, 'code_verifier');
    if (codeVerifier !== undefined && !isWellFormedPkceValue(codeVerifier)) {
      throw new InvalidRequest('code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]');
    }

    const codeHash = hashToken(code);
    const row = await store.getAuthorizationCode(codeHash);
    if (!row) throw new InvalidGrant('the authorization code is invalid');
    // RFC 6749 §4.1.2: a code used twice revokes what was issued from it.
    if (row.consumed_at !== null) {
      if (row.grant_id) await store.revokeGrant(row.grant_id, now);
      throw new InvalidGrant('the authorization code has already been used');
    }
    if (row.expires_at <= now) throw new InvalidGrant('the authorization code has expired');
    if (row.client_id !== client.clientId) throw new InvalidGrant('the authorization code was issued to another client');
    if (row.redirect_uri !== redirectUri) throw new InvalidGrant('redirect_uri does not match the authorization request');
    checkPkce(row.code_challenge, codeVerifier);

    const user = await store.getUserById(row.user_id);
    if (!user || user.disabled) throw new InvalidGrant('the user is no longer active');

    const scopes = row.scope.split(' ').filter((s) => s !== '');
    const grantId = newSortableId();
    const refreshToken = newRefreshToken();
    // The tokens are signed while the grant's writes commit, and handed out only once they have.
    const signing = signTokens(ctx, { client, user, scopes, grantId, authTime: row.auth_time, nonce: row.nonce, refreshToken });
    signing.catch(() => {});
    const won = await store.redeemAuthorizationCode({
      codeHash,
      now,
      grant: { id: grantId, user_id: user.id, client_id: client.clientId, scope: row.scope, auth_time: row.auth_time, created_at: now, revoked_at: null },
      refreshToken: {
        token_hash: refreshTokenKey(refreshToken),
        grant_id: grantId,
        client_id: client.clientId,
        user_id: user.id,
        scope: row.scope,
        auth_time: row.auth_time,
        created_at: now,
        expires_at: now + Math.min(ctx.config.refreshTokenTtl, ctx.config.refreshTokenAbsoluteTtl),
        consumed_at: null,
      },
    });
    if (!won) {
      // A concurrent request redeemed it first: this is a second use.
      const redeemed = await store.getAuthorizationCode(codeHash);
      if (redeemed?.grant_id) await store.revokeGrant(redeemed.grant_id, now);
      throw new InvalidGrant('the authorization code has already been used');
    }
    return signing;
  },
};

/** RFC 7636 §4.6, and the downgrade rule: a verifier without a challenge is rejected too. */
function checkPkce(codeChallenge: string | null, codeVerifier: string | undefined): void {
  if (codeChallenge === null) {
    if (codeVerifier !== undefined) throw new InvalidGrant('code_verifier was sent but the authorization request had no code_challenge');
    return;
  }
  if (codeVerifier === undefined) throw new InvalidGrant('code_verifier is required');
  if (!verifyS256(codeVerifier, codeChallenge)) throw new InvalidGrant('code_verifier does not match the code_challenge');
}
