// Migrations keep what is stored. 003 rebuilds grants and refresh_tokens on SQLite (WITHOUT ROWID)
// and makes grants_revoked_at partial on both databases; 004 gives grants their refresh tokens'
// state. Undone, they restore the earlier schema.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/store/index.ts';
import type { KyselyStore } from '../../src/store/kysely-store.ts';
import type { GrantRow, RefreshTokenRow } from '../../src/store/types.ts';
import { newId, newSortableId } from '../../src/tokens/opaque.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const NOW = 1_700_000_000;

/** A grant as stored before 004, with its refresh token. */
type OldGrant = Omit<GrantRow, 'refresh_generation' | 'refresh_expires_at' | 'refresh_issued_at'>;
const NO_FAMILY_STATE = { refresh_generation: null, refresh_expires_at: null, refresh_issued_at: null };

function family(revoked: boolean): { grant: OldGrant; refreshToken: RefreshTokenRow } {
  const grant: OldGrant = { id: newSortableId(), user_id: newId(), client_id: 'c1', scope: 'openid apps', auth_time: NOW - 5, created_at: NOW, revoked_at: null };
  const refreshToken: RefreshTokenRow = {
    token_hash: newId(), grant_id: grant.id, client_id: 'c1', user_id: grant.user_id, scope: grant.scope, auth_time: grant.auth_time,
    created_at: NOW, expires_at: NOW + 3600, consumed_at: revoked ? NOW + 1 : null,
  };
  return { grant: revoked ? { ...grant, revoked_at: NOW + 1 } : grant, refreshToken };
}

for (const [name, database] of [['SQLite', withSqliteDatabase], ['PostgreSQL', withPostgresDatabase]] as const) {
  describe(`migrations 003_write_path and 004_token_families on ${name}`, async () => {
    const db = await database();
    const skip = db ? false : `${name} unreachable`;
    let store: KyselyStore;
    before(async () => {
      if (db) store = (await openStore(db.url)) as KyselyStore;
    });
    after(async () => {
      await store?.close();
      await db?.drop();
    });

    async function schema(): Promise<{ withoutRowid: boolean; partialIndex: boolean }> {
      if (store.dialect === 'sqlite') {
        const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where name in ('grants', 'refresh_tokens', 'grants_revoked_at')`.execute(store.db);
        const text = (n: string) => rows.find((r) => r.name === n)!.sql.toLowerCase();
        return { withoutRowid: text('grants').includes('without rowid') && text('refresh_tokens').includes('without rowid'), partialIndex: text('grants_revoked_at').includes('where') };
      }
      const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'grants_revoked_at'`.execute(store.db);
      return { withoutRowid: false, partialIndex: rows[0]!.indexdef.includes('WHERE') };
    }

    async function stored(f: ReturnType<typeof family>) {
      const row = async (table: 'grants' | 'refresh_tokens', column: 'id' | 'token_hash', value: string) =>
        ({ ...(await store.db.selectFrom(table).selectAll().where(column, '=', value).executeTakeFirst()) });
      return { grant: await row('grants', 'id', f.grant.id), token: await row('refresh_tokens', 'token_hash', f.refreshToken.token_hash) };
    }

    it('keep every grant and refresh token, up and down again', { skip }, async () => {
      assert.deepEqual(await store.migrate('002_revocation'), ['001_initial', '002_revocation']);
      const families = [family(false), family(true), family(false)];
      for (const f of families) {
        await store.createUser({ id: f.grant.user_id, username: f.grant.user_id, email: 'u@example.com', emailVerified: true, name: null, givenName: null, familyName: null, passwordHash: null, disabled: false, createdAt: NOW, updatedAt: NOW });
        // As the release before 004 wrote them.
        await store.db.insertInto('grants').values(f.grant).execute();
        await store.db.insertInto('refresh_tokens').values(f.refreshToken).execute();
      }
      const expected = families.map((f) => ({ grant: f.grant, token: f.refreshToken }));
      assert.deepEqual(await Promise.all(families.map(stored)), expected);
      assert.deepEqual(await schema(), { withoutRowid: false, partialIndex: false });

      assert.deepEqual(await store.migrate(), ['003_write_path', '004_token_families']);
      const upgraded = families.map((f) => ({ grant: { ...f.grant, ...NO_FAMILY_STATE }, token: f.refreshToken }));
      assert.deepEqual(await Promise.all(families.map(stored)), upgraded);
      assert.deepEqual(await schema(), { withoutRowid: store.dialect === 'sqlite', partialIndex: true });
      // The rebuilt table takes writes and enforces its key as before.
      const next: GrantRow = { ...family(false).grant, user_id: families[0]!.grant.user_id, refresh_generation: 1, refresh_expires_at: NOW + 60, refresh_issued_at: NOW };
      assert.equal(await store.redeemAuthorizationCode({ grant: next }), true);
      assert.equal(await store.redeemAuthorizationCode({ grant: { ...next, scope: 'openid' } }), false);
      assert.deepEqual({ ...(await store.getGrant(next.id)) }, next);

      assert.deepEqual(await store.migrate('002_revocation'), ['004_token_families', '003_write_path']);
      assert.deepEqual(await Promise.all(families.map(stored)), expected);
      const nextBefore004: Record<string, unknown> = { ...next };
      for (const column of Object.keys(NO_FAMILY_STATE)) delete nextBefore004[column];
      assert.deepEqual({ ...(await store.db.selectFrom('grants').selectAll().where('id', '=', next.id).executeTakeFirst()) }, nextBefore004);
      assert.deepEqual(await schema(), { withoutRowid: false, partialIndex: false });
      assert.deepEqual(await store.migrate(), ['003_write_path', '004_token_families']);
      assert.deepEqual(await Promise.all(families.map(stored)), upgraded);
    });
  });
}
