// Roles in the store (migration 018), on SQLite and PostgreSQL alike: a user's roles are written with
// their event and read back wherever the user is read, alone and joined with the session (the hot
// paths read no more than that); a client's admin mark and the roles it may see are read with it,
// and updating a client keeps or clears them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import type { Client } from '../../src/store/clients.ts';
import type { Store } from '../../src/store/store.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';
import { clientRecord } from '../helpers/clients.ts';

const NOW = 1_800_000_000;

const rolesClient = (over: Partial<Client> = {}): Client =>
  clientRecord({
    secretHash: null,
    name: 'roles',
    redirectUris: ['https://app.example.com/cb'],
    scopes: ['openid', 'roles'],
    grantTypes: ['authorization_code'],
    tokenEndpointAuthMethod: 'none',
    ...over,
  });

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`roles on ${name}`, () => {
    let database: TestDatabase | undefined;
    let store: Store;

    before(async () => {
      database = await open();
      if (database) store = await migratedStore(database);
    });
    after(() => closeStore(store, database));

    it("a user's roles: none by default, written with their event, read alone and with the session", async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const user = userRecord();
      await store.createUser(user);
      assert.deepEqual((await store.getUserById(user.id))!.roles, []);
      const event = securityEvent('user.roles_changed', NOW, { userId: user.id, data: { added: ['editor', 'admin'] } });
      assert.equal(await store.setUserRoles(user.id, ['editor', 'admin'], NOW + 1, [event]), true);
      assert.equal(await store.setUserRoles(newId(), ['editor'], NOW + 1, []), false);
      const read = (await store.getUserById(user.id))!;
      assert.deepEqual(read.roles, ['editor', 'admin']);
      assert.equal(read.updatedAt, NOW + 1);
      assert.deepEqual((await store.getUserByUsername(user.username))!.roles, ['editor', 'admin']);
      const session = {
        id: newId(),
        userId: user.id,
        authTime: NOW,
        factors: [],
        createdAt: NOW,
        expiresAt: NOW + 3600,
      };
      await store.createSession(session);
      assert.deepEqual((await store.getSessionAndUser(session.id, NOW))!.user!.roles, ['editor', 'admin']);
      const [recorded] = await store.listEvents({ type: 'user.roles_changed', userId: user.id });
      assert.deepEqual(recorded?.data, { added: ['editor', 'admin'] });
    });

    it("a client's admin mark and allowed roles: absent by default, kept, changed and cleared", async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const plain = rolesClient();
      await store.createClient(plain);
      const readPlain = (await store.getClient(plain.clientId))!;
      assert.equal(readPlain.admin, undefined);
      assert.equal(readPlain.allowedRoles, undefined);
      const marked = rolesClient({ admin: true, allowedRoles: ['editor', 'ops'] });
      await store.createClient(marked);
      const read = (await store.getClient(marked.clientId))!;
      assert.equal(read.admin, true);
      assert.deepEqual(read.allowedRoles, ['editor', 'ops']);
      await store.updateClient({ ...read, name: 'renamed' });
      assert.deepEqual((await store.getClient(marked.clientId))!.allowedRoles, ['editor', 'ops']);
      await store.updateClient({ ...read, admin: false, allowedRoles: null });
      const cleared = (await store.getClient(marked.clientId))!;
      assert.equal(cleared.admin, undefined);
      assert.equal(cleared.allowedRoles, undefined);
    });
  });
}
