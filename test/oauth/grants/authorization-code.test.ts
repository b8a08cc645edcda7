// RFC 6749 §4.1.3 and RFC 7636 §4.6, without HTTP: the authorization_code grant called directly
// against a real store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { InvalidGrant, InvalidRequest } from '../../../src/errors/index.ts';
import { authorizationCodeGrant } from '../../../src/oauth/grants/authorization-code.ts';
import { refreshTokenGrant } from '../../../src/oauth/grants/refresh-token.ts';
import { body, type Fixture, NOW, onEachStore, pkcePair, rejectsWith, type TestClient } from './fixture.ts';

let f: Fixture;
onEachStore(
  (fixture) => (f = fixture),
  () => {
    const exchange = (client: TestClient, code: string, extra: Record<string, string> = {}) =>
      authorizationCodeGrant.handle(
        f.ctx,
        client.client,
        body({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, ...extra }),
      );
    const grantOf = (code: string) => f.ctx.codes.open(code, NOW)!.id;

    describe('authorization_code: a code is exchanged once', () => {
      it('the first exchange issues access, refresh and ID tokens and writes the grant', async () => {
        const code = f.code(f.confidential);
        const tokens = await exchange(f.confidential, code);
        assert.equal(tokens.token_type, 'Bearer');
        assert.equal(tokens.scope, 'openid profile');
        const access = decodeJwt(tokens.access_token);
        assert.equal(access.sub, f.user.id);
        assert.equal(access.client_id, f.confidential.client.clientId);
        assert.equal(access.grant_id, grantOf(code));
        const id = decodeJwt(tokens.id_token!);
        assert.equal(id.aud, f.confidential.client.clientId);
        assert.equal(id.nonce, 'n-0S6_WzA2Mj');
        assert.equal(id.name, 'Alice');
        assert.deepEqual(f.ctx.refreshTokens.parse(tokens.refresh_token!), { grantId: grantOf(code), generation: 1 });
        const grant = await f.store.getGrant(grantOf(code));
        assert.equal(grant?.clientId, f.confidential.client.clientId);
        assert.equal(grant?.revokedAt, null);
      });

      it('a second use is invalid_grant and revokes the grant the first use made (§4.1.2)', async () => {
        const code = f.code(f.confidential);
        const first = await exchange(f.confidential, code);
        await rejectsWith(exchange(f.confidential, code), InvalidGrant, 'invalid_grant', /already been used/);
        assert.equal((await f.store.getGrant(grantOf(code)))?.revokedAt, NOW);
        // The family is gone: the refresh token of the first exchange is refused.
        await rejectsWith(
          refreshTokenGrant.handle(
            f.ctx,
            f.confidential.client,
            body({ grant_type: 'refresh_token', refresh_token: first.refresh_token! }),
          ),
          InvalidGrant,
          'invalid_grant',
          /revoked/,
        );
      });

      it('a second use failing another check (redirect_uri) still revokes the grant', async () => {
        const code = f.code(f.confidential);
        await exchange(f.confidential, code);
        await rejectsWith(
          exchange(f.confidential, code, { redirect_uri: 'https://elsewhere.example/cb' }),
          InvalidGrant,
          'invalid_grant',
          /already been used/,
        );
        assert.equal((await f.store.getGrant(grantOf(code)))?.revokedAt, NOW);
      });

      it('an expired, forged or tampered code is invalid_grant', async () => {
        const expired = f.code(f.confidential);
        f.ctx.now = NOW + 61;
        try {
          await rejectsWith(exchange(f.confidential, expired), InvalidGrant, 'invalid_grant', /expired/);
        } finally {
          f.ctx.now = NOW;
        }
        assert.equal(await f.store.getGrant(grantOf(expired)), undefined);
        await rejectsWith(exchange(f.confidential, 'not-a-code'), InvalidGrant, 'invalid_grant', /invalid/);
        const code = f.code(f.confidential);
        await rejectsWith(exchange(f.confidential, `${code.slice(0, -2)}AA`), InvalidGrant, 'invalid_grant');
      });

      it('code and redirect_uri are required: invalid_request', async () => {
        const grant = (fields: Record<string, string>) =>
          authorizationCodeGrant.handle(f.ctx, f.confidential.client, body(fields));
        await rejectsWith(
          grant({ redirect_uri: f.confidential.redirectUri }),
          InvalidRequest,
          'invalid_request',
          /code/,
        );
        await rejectsWith(grant({ code: f.code(f.confidential) }), InvalidRequest, 'invalid_request', /redirect_uri/);
      });
    });

    describe('authorization_code: PKCE (RFC 7636 §4.6)', () => {
      it('the S256 verifier of the challenge is accepted', async () => {
        const { verifier, challenge } = pkcePair();
        const code = f.code(f.public, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
        const tokens = await exchange(f.public, code, { code_verifier: verifier });
        assert.ok(tokens.access_token);
      });

      it('a wrong or missing verifier is invalid_grant, and redeems nothing', async () => {
        const { challenge } = pkcePair();
        const code = f.code(f.public, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
        await rejectsWith(
          exchange(f.public, code, { code_verifier: pkcePair().verifier }),
          InvalidGrant,
          'invalid_grant',
          /does not match/,
        );
        await rejectsWith(exchange(f.public, code), InvalidGrant, 'invalid_grant', /code_verifier is required/);
        assert.equal(await f.store.getGrant(grantOf(code)), undefined);
      });

      it('a verifier for a code issued without a challenge is refused (downgrade)', async () => {
        const code = f.code(f.confidential);
        await rejectsWith(
          exchange(f.confidential, code, { code_verifier: pkcePair().verifier }),
          InvalidGrant,
          'invalid_grant',
          /no code_challenge/,
        );
        assert.equal(await f.store.getGrant(grantOf(code)), undefined);
        // The honest client, sending none, still gets its tokens with the same code.
        assert.ok((await exchange(f.confidential, code)).access_token);
      });

      it('a malformed verifier is invalid_request', async () => {
        const { challenge } = pkcePair();
        const code = f.code(f.public, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
        await rejectsWith(exchange(f.public, code, { code_verifier: 'short' }), InvalidRequest, 'invalid_request');
      });
    });

    describe('authorization_code: bound to its redirect_uri and client', () => {
      it('another redirect_uri is invalid_grant; the right one then works', async () => {
        const code = f.code(f.confidential);
        await rejectsWith(
          exchange(f.confidential, code, { redirect_uri: `${f.confidential.redirectUri}/x` }),
          InvalidGrant,
          'invalid_grant',
          /redirect_uri/,
        );
        assert.ok((await exchange(f.confidential, code)).access_token);
      });

      it("another client's code is invalid_grant and revokes nothing, even once redeemed", async () => {
        const code = f.code(f.confidential);
        const exchangeAs = (client: TestClient) =>
          authorizationCodeGrant.handle(
            f.ctx,
            client.client,
            body({ grant_type: 'authorization_code', code, redirect_uri: f.confidential.redirectUri }),
          );
        await rejectsWith(exchangeAs(f.other), InvalidGrant, 'invalid_grant', /invalid/);
        assert.equal(await f.store.getGrant(grantOf(code)), undefined);
        await exchangeAs(f.confidential);
        await rejectsWith(exchangeAs(f.other), InvalidGrant, 'invalid_grant', /invalid/);
        assert.equal((await f.store.getGrant(grantOf(code)))?.revokedAt, null);
      });
    });
  },
);
