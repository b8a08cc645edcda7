// RFC 6749 §6 with rotation (RFC 9700 §4.14.2), without HTTP: the refresh_token grant called
// directly against a real store, on families started by the authorization_code grant.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { InvalidGrant, InvalidRequest, InvalidScope } from '../../../src/errors/index.ts';
import { authorizationCodeGrant } from '../../../src/oauth/grants/authorization-code.ts';
import { refreshTokenGrant } from '../../../src/oauth/grants/refresh-token.ts';
import { body, type Fixture, NOW, onEachStore, rejectsWith, type TestClient } from './fixture.ts';

let f: Fixture;
onEachStore(
  (fixture) => (f = fixture),
  () => {
    /** A new family of `client` (scope openid profile email): its grant id and first refresh token. */
    async function family(client: TestClient = f.confidential): Promise<{ grantId: string; token: string }> {
      const code = f.code(client, { scope: 'openid profile email' });
      const tokens = await authorizationCodeGrant.handle(
        f.ctx,
        client.client,
        body({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri }),
      );
      return { grantId: f.ctx.codes.open(code, NOW)!.id, token: tokens.refresh_token! };
    }

    const refresh = (token: string, extra: Record<string, string> = {}, client: TestClient = f.confidential) =>
      refreshTokenGrant.handle(
        f.ctx,
        client.client,
        body({ grant_type: 'refresh_token', refresh_token: token, ...extra }),
      );

    const revokedAt = async (grantId: string) => (await f.store.getGrant(grantId))?.revokedAt;

    describe('refresh_token: rotation', () => {
      it('each refresh returns the next generation and new tokens for the same user', async () => {
        const { grantId, token } = await family();
        const second = await refresh(token);
        assert.deepEqual(f.ctx.refreshTokens.parse(second.refresh_token!), { grantId, generation: 2 });
        const third = await refresh(second.refresh_token!);
        assert.deepEqual(f.ctx.refreshTokens.parse(third.refresh_token!), { grantId, generation: 3 });
        assert.equal((await f.store.getGrant(grantId))?.refreshGeneration, 3);
        assert.equal(third.scope, 'openid profile email');
        assert.equal(decodeJwt(third.access_token).sub, f.user.id);
        // OIDC Core §12.2: the refreshed ID token keeps sub and auth_time, and has no nonce.
        const id = decodeJwt(third.id_token!);
        assert.equal(id.sub, f.user.id);
        assert.equal(id.auth_time, NOW - 10);
        assert.equal(id.nonce, undefined);
      });

      it('a missing refresh_token is invalid_request; one this server did not issue is invalid_grant', async () => {
        await rejectsWith(
          refreshTokenGrant.handle(f.ctx, f.confidential.client, body({ grant_type: 'refresh_token' })),
          InvalidRequest,
          'invalid_request',
          /refresh_token is required/,
        );
        const { token } = await family();
        await rejectsWith(refresh(`${token.slice(0, -2)}AA`), InvalidGrant, 'invalid_grant', /invalid/);
        await rejectsWith(refresh('grant~1~mac'), InvalidGrant, 'invalid_grant', /invalid/);
      });
    });

    describe('refresh_token: a replayed token revokes its family', () => {
      it('the token just rotated away, presented again, is invalid_grant and revokes the grant', async () => {
        const { grantId, token } = await family();
        const next = await refresh(token);
        await rejectsWith(refresh(token), InvalidGrant, 'invalid_grant', /already been used/);
        assert.equal(await revokedAt(grantId), NOW);
        // The current token, the honest client's, is refused from then on.
        await rejectsWith(refresh(next.refresh_token!), InvalidGrant, 'invalid_grant', /revoked/);
      });

      it('an older generation is a replay too; other families are untouched', async () => {
        const bystander = await family();
        const { grantId, token } = await family();
        const second = await refresh(token);
        await refresh(second.refresh_token!);
        await rejectsWith(refresh(token), InvalidGrant, 'invalid_grant', /already been used/);
        assert.equal(await revokedAt(grantId), NOW);
        assert.equal(await revokedAt(bystander.grantId), null);
        assert.ok((await refresh(bystander.token)).access_token);
      });
    });

    describe('refresh_token: scope may only narrow (§6)', () => {
      it('a narrower scope is granted for that refresh; the family keeps its grant', async () => {
        const { grantId, token } = await family();
        const narrowed = await refresh(token, { scope: 'profile' });
        assert.equal(narrowed.scope, 'profile');
        assert.equal(decodeJwt(narrowed.access_token).scope, 'profile');
        assert.equal(narrowed.id_token, undefined, 'no ID token without openid');
        assert.equal((await f.store.getGrant(grantId))?.scope, 'openid profile email');
        const full = await refresh(narrowed.refresh_token!);
        assert.equal(full.scope, 'openid profile email');
      });

      it('a scope beyond the grant is invalid_scope, rotates and revokes nothing', async () => {
        const { grantId, token } = await family();
        await rejectsWith(refresh(token, { scope: 'openid apps' }), InvalidScope, 'invalid_scope', /exceeds/);
        const grant = await f.store.getGrant(grantId);
        assert.equal(grant?.refreshGeneration, 1);
        assert.equal(grant?.revokedAt, null);
        assert.ok((await refresh(token, { scope: 'openid' })).access_token);
      });
    });

    describe('refresh_token: bound to its client', () => {
      it("another client's token is invalid_grant and leaves the family to its client", async () => {
        const { grantId, token } = await family();
        await rejectsWith(refresh(token, {}, f.other), InvalidGrant, 'invalid_grant', /invalid/);
        const grant = await f.store.getGrant(grantId);
        assert.equal(grant?.refreshGeneration, 1);
        assert.equal(grant?.revokedAt, null);
        const next = await refresh(token);
        assert.deepEqual(f.ctx.refreshTokens.parse(next.refresh_token!), { grantId, generation: 2 });
      });

      it("a public client's family is refused to a confidential client too", async () => {
        const { token } = await family(f.public);
        await rejectsWith(refresh(token, {}, f.confidential), InvalidGrant, 'invalid_grant');
        assert.ok((await refresh(token, {}, f.public)).refresh_token);
      });
    });
  },
);
