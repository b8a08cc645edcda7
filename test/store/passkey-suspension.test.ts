// A passkey's suspension in the store (src/store/passkeys.ts, migration 011), on SQLite and PostgreSQL
// alike: suspended once with its event (of suspensions at once one wins; a later one writes nothing),
// then no use of it is recorded, it no longer counts as a passkey the user has, and it is still
// listed (with when) until removed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import type { Passkey } from '../../src/store/passkeys.ts';
import type { Store } from '../../src/store/store.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';

const NOW = 1_800_000_000;

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`passkey suspension on ${name}`, () => {
    let database: TestDatabase | undefined;
    let store: Store;

    before(async () => {
      database = await open();
      if (database) store = await migratedStore(database);
    });
    after(() => closeStore(store, database));

    it('suspends once, with one event; then no use is recorded and the user has no passkey', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const userId = newId();
      await store.createUser(userRecord({ id: userId, email: '', emailVerified: false }));
      const passkey: Passkey = {
        id: newId(),
        userId,
        credentialId: newId(),
        publicKey: new Uint8Array([1, 2, 3]),
        counter: 4,
        transports: [],
        backupEligible: false,
        backedUp: false,
        name: 'Laptop',
        createdAt: NOW,
        lastUsedAt: null,
        suspendedAt: null,
      };
      await store.addPasskey(passkey, securityEvent('passkey.added', NOW, { userId }));
      assert.equal(await store.hasPasskeys(userId), true);
      const suspend = (at: number) =>
        store.suspendPasskey(
          { userId, id: passkey.id, at },
          securityEvent('passkey.suspended', at, { userId, data: { passkey: passkey.id, name: passkey.name } }),
        );
      // Someone else's passkey id: nothing.
      assert.equal(
        await store.suspendPasskey(
          { userId: 'other', id: passkey.id, at: NOW },
          securityEvent('passkey.suspended', NOW, {}),
        ),
        false,
      );
      // Of suspensions at once, one suspends (the row's conditional update).
      const results = await Promise.all([suspend(NOW + 1), suspend(NOW + 1), suspend(NOW + 2)]);
      assert.deepEqual(results.filter(Boolean).length, 1);
      const recorded = (await store.listEvents({ type: 'passkey.suspended', userId })).length;
      assert.ok(recorded >= 1);
      // Once suspended, another suspension writes nothing, its event neither.
      assert.equal(await suspend(NOW + 3), false);
      assert.equal((await store.listEvents({ type: 'passkey.suspended', userId })).length, recorded);
      const [listed] = await store.listPasskeys(userId);
      assert.ok(listed!.suspendedAt === NOW + 1 || listed!.suspendedAt === NOW + 2);
      assert.equal(await store.hasPasskeys(userId), false);
      assert.equal((await store.getPasskeyByCredentialId(passkey.credentialId))?.suspendedAt, listed!.suspendedAt);
      assert.equal(await store.recordPasskeyUse({ id: passkey.id, counter: 9, backedUp: false, at: NOW + 5 }), false);
      assert.equal((await store.listPasskeys(userId))[0]!.counter, 4);
    });
  });
}
