// Connections (ID-JAG policies, src/store/connections.ts, src/admin/connections.ts) on SQLite and
// PostgreSQL alike: kept as given, one per client and audience (the second refused, its event not
// written), changed but for their client and audience, gone with their client; a client's exchange
// audiences both ways.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnection, deleteConnection, listConnections, updateConnection } from '../../src/admin/connections.ts';
import { AdminError, NotFoundError } from '../../src/admin/errors.ts';
import type { Store } from '../../src/store/store.ts';
import { clientRecord } from '../helpers/clients.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const NOW = 1_800_000_000;
const AUDIENCE = 'https://mcp-as.example.com';

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`connections on ${name}`, async () => {
    const db = await database();
    const skip = db ? false : `${name} unreachable`;
    let store: Store;
    before(async () => {
      if (db) store = await migratedStore(db);
    });
    after(() => closeStore(store, db));

    it('keeps a connection once per client and audience, changes it, and deletes it', { skip }, async () => {
      const client = clientRecord();
      await store.createClient(client);
      const input = { clientId: client.clientId, audience: AUDIENCE, remoteClientId: 'agent', scope: 'read write' };
      const made = await createConnection(store, { ...input, resource: 'https://mcp.example.com' }, NOW);
      assert.deepEqual(await store.getConnection(made.id), made);
      assert.deepEqual(await store.findConnection(client.clientId, AUDIENCE), made);
      assert.deepEqual(made.scopes, ['read', 'write']);
      await assert.rejects(createConnection(store, input, NOW), AdminError);
      const events = await store.listEvents({ clientId: client.clientId, type: 'connection.created', limit: 10 });
      assert.equal(events.length, 1, 'the refused second one records nothing');
      await assert.rejects(createConnection(store, { ...input, clientId: 'nobody' }, NOW), NotFoundError);
      await assert.rejects(createConnection(store, { ...input, audience: 'not a url' }, NOW), AdminError);

      const changed = await updateConnection(store, made.id, { scope: 'read', resource: null }, NOW + 5);
      assert.deepEqual(await store.getConnection(made.id), {
        ...made,
        scopes: ['read'],
        resource: null,
        updatedAt: NOW + 5,
      });
      assert.equal(changed.audience, AUDIENCE);
      assert.deepEqual(await listConnections(store, client.clientId), [changed]);
      await deleteConnection(store, made.id, NOW + 9);
      assert.equal(await store.getConnection(made.id), undefined);
      await assert.rejects(deleteConnection(store, made.id, NOW), NotFoundError);
    });

    it("goes with its client; a client's exchange audiences both ways", { skip }, async () => {
      const client = clientRecord({ exchangeAudiences: ['https://api.example.com', 'https://b.example.com'] });
      await store.createClient(client);
      assert.deepEqual((await store.getClient(client.clientId))?.exchangeAudiences, client.exchangeAudiences);
      await store.updateClient({ ...client, exchangeAudiences: [] });
      assert.equal((await store.getClient(client.clientId, { suspended: true }))?.exchangeAudiences, undefined);
      const input = { clientId: client.clientId, audience: AUDIENCE, remoteClientId: 'x', scope: 'read' };
      const made = await createConnection(store, input, NOW);
      assert.equal(await store.deleteClient(client.clientId), true);
      assert.equal(await store.getConnection(made.id), undefined);
    });
  });
}
