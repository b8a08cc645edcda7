// Migration 019 on both databases: a user's held claims (users.claims) are written and read back as
// they are, with every read of the user (by id, by username, with a session, with a grant); and a
// grant's claims request (grants.claims_request) is kept, by both hot writes' paths, only when given.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { applyClaimChanges } from '../../src/tokens/held-claims.ts';
import { userRecord } from '../helpers/users.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const NOW = 1_800_000_000;

function grant(id: string, userId: string, claimsRequest?: string) {
  return {
    id,
    userId,
    clientId: 'c',
    scope: 'openid profile',
    authTime: NOW,
    createdAt: NOW,
    revokedAt: null,
    refreshGeneration: 1,
    refreshExpiresAt: NOW + 3600,
    refreshIssuedAt: NOW,
    resource: null,
    amr: 'pwd',
    acr: null,
    sid: null,
    ...(claimsRequest !== undefined ? { claimsRequest } : {}),
  };
}

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`standard claims on ${name}`, async () => {
    const db = await database();
    const skip = db ? false : `${name} unreachable`;
    let store: Store;
    before(async () => {
      if (db) store = await migratedStore(db);
    });
    after(() => closeStore(store, db));

    it('keeps a user’s held claims and reads them with every read of the user', { skip }, async () => {
      const { claims } = applyClaimChanges(null, {
        nickname: 'Al',
        address: { locality: 'Oxford', country: 'GB' },
        phone_number: '+44 1865 000000',
      });
      const user = userRecord({ claims });
      await store.createUser(user);
      assert.equal((await store.getUserById(user.id))!.claims, claims);
      assert.equal((await store.getUserByUsername(user.username))!.claims, claims);
      const changed = applyClaimChanges(claims, { nickname: null, phone_number_verified: true });
      assert.deepEqual(changed.changed, ['nickname', 'phone_number_verified']);
      assert.equal(await store.updateUserProfile({ ...user, claims: changed.claims, updatedAt: NOW + 1 }, []), true);
      const read = (await store.getUserById(user.id))!;
      assert.deepEqual(JSON.parse(read.claims!), {
        address: { locality: 'Oxford', country: 'GB' },
        phone_number: '+441865000000',
        phone_number_verified: true,
      });
      // A user without any reads null, and clearing the last claim leaves null.
      const plain = userRecord();
      await store.createUser(plain);
      assert.equal((await store.getUserById(plain.id))!.claims, undefined);
      const emptied = applyClaimChanges(changed.claims, { address: null, phone_number: null });
      assert.equal(emptied.claims, null);
    });

    it(
      'keeps a grant’s claims request only when given, through redemption, refresh and access-token reads',
      { skip },
      async () => {
        const user = userRecord({ claims: '{"picture":"https://example.com/p.png"}' });
        await store.createUser(user);
        const asked = '{"id_token":["name"],"userinfo":["picture"]}';
        assert.equal(await store.redeemAuthorizationCode({ grant: grant('g-with', user.id, asked) }), true);
        assert.equal(await store.redeemAuthorizationCode({ grant: grant('g-without', user.id) }), true);
        assert.equal((await store.getGrant('g-with'))!.claimsRequest, asked);
        assert.equal((await store.getGrant('g-without'))!.claimsRequest, undefined);
        const family = (await store.getTokenFamily('g-with'))!;
        assert.equal(family.grant.claimsRequest, asked);
        assert.equal(family.user!.claims, user.claims);
        const state = await store.getAccessTokenState({ userId: user.id, grantId: 'g-with', jti: 'j' });
        assert.equal(state.grant!.claimsRequest, asked);
        assert.equal(state.user!.claims, user.claims);
        const rotation = { grantId: 'g-with', generation: 1, clientId: 'c', scope: null, resource: null };
        const rotated = await store.rotateTokenFamily(
          { ...rotation, now: NOW + 10, ttl: 3600, absoluteTtl: 86400 },
          async (family) => family.grant.claimsRequest,
        );
        assert.equal(rotated.rotated, true);
        assert.equal(rotated.family!.grant.claimsRequest, asked);
        assert.equal(rotated.rotated && rotated.value, asked);
      },
    );
  });
}
