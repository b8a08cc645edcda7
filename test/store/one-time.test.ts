// What may be used once across instances (src/store/one-time.ts), on SQLite and PostgreSQL alike, as
// two stores over one database: an assertion's jti is accepted once, also when both use it at once;
// a pushed request is taken once, never after it expired; housekeeping deletes both once expired.
// And a client's keys (migration 017) are kept, changed and cleared.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../src/store/index.ts';
import { type Client } from '../../src/store/clients.ts';
import type { Store } from '../../src/store/store.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';
import { clientRecord } from '../helpers/clients.ts';

const NOW = 1_800_000_000;
const purge = (store: Store, now: number) =>
  store.purgeExpired({
    now,
    codeTtl: 60,
    codeGrace: 600,
    accessTokenTtl: 3600,
    eventRetention: 86_400,
    throttleHorizon: 3600,
  });

const client = (overrides: Partial<Client> = {}): Client =>
  clientRecord({
    secretHash: null,
    name: 'Keyed',
    redirectUris: ['https://app.example/cb'],
    grantTypes: ['authorization_code'],
    tokenEndpointAuthMethod: 'private_key_jwt',
    ...overrides,
  });

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`one-time ids and pushed requests on ${name}`, async () => {
    const db: TestDatabase | undefined = await database();
    const skip = db ? false : `${name} unreachable`;
    let one: Store;
    let two: Store;
    before(async () => {
      if (!db) return;
      one = await openStore(db.url);
      await one.migrate();
      two = await openStore(db.url);
    });
    after(async () => {
      await two?.close();
      await one?.close();
      await db?.drop();
    });

    it('a jti is used once, by one of two instances using it at once', { skip }, async () => {
      const id = newId();
      const results = await Promise.all([one.useOnce(id, NOW + 60), two.useOnce(id, NOW + 60)]);
      assert.deepEqual(results.sort(), [false, true]);
      assert.equal(await one.useOnce(id, NOW + 60), false);
      assert.equal(await one.useOnce(newId(), NOW + 60), true);
    });

    it('a pushed request is taken once, and not once expired', { skip }, async () => {
      const id = newId();
      const request = { clientId: 'c1', params: { response_type: 'code', scope: 'openid' } };
      await one.pushRequest(id, request, NOW + 60);
      const taken = await Promise.all([one.takePushedRequest(id, NOW), two.takePushedRequest(id, NOW)]);
      assert.deepEqual(
        taken.filter((t) => t !== undefined),
        [request],
      );
      assert.equal(await one.takePushedRequest(id, NOW), undefined);
      const late = newId();
      await one.pushRequest(late, request, NOW + 60);
      assert.equal(await two.takePushedRequest(late, NOW + 60), undefined);
    });

    it('housekeeping deletes expired jtis and pushed requests, and only those', { skip }, async () => {
      const old = newId();
      const live = newId();
      await one.useOnce(old, NOW + 10);
      await one.useOnce(live, NOW + 1000);
      await one.pushRequest(old, { clientId: 'c', params: {} }, NOW + 10);
      await one.pushRequest(live, { clientId: 'c', params: {} }, NOW + 1000);
      const deleted = await purge(one, NOW + 11);
      assert.ok(deleted.used_jtis! >= 1);
      assert.ok(deleted.pushed_requests! >= 1);
      assert.equal(await one.useOnce(old, NOW + 10), true);
      assert.equal(await one.useOnce(live, NOW + 1000), false);
      assert.ok(await one.takePushedRequest(live, NOW + 11));
    });

    it("a client's keys and push requirement are kept, changed and cleared", { skip }, async () => {
      const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k1' }] };
      const c = client({ jwks, requirePushedAuthorizationRequests: true, requestObjectSigningAlg: 'ES256' });
      await one.createClient(c);
      assert.deepEqual(await two.getClient(c.clientId), c);
      const moved = { ...c, jwks: null, jwksUri: 'https://app.example/jwks', requirePushedAuthorizationRequests: null };
      await one.updateClient(moved);
      const read = await two.getClient(c.clientId, { suspended: true });
      assert.equal(read?.jwks, undefined);
      assert.equal(read?.jwksUri, 'https://app.example/jwks');
      assert.equal(read?.requirePushedAuthorizationRequests, undefined);
      await one.setClientSecretHash(c.clientId, 'ab'.repeat(32), undefined, null, 'sealed');
      assert.equal((await two.getClient(c.clientId, { suspended: true }))?.secretEncrypted, 'sealed');
    });
  });
}
