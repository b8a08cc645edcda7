// Migrations keep what is stored. 003 rebuilds grants and refresh_tokens on SQLite (WITHOUT ROWID)
// and makes grants_revoked_at partial on both databases; undone, it restores the earlier schema.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/store/index.ts';
import type { KyselyStore } from '../../src/store/kysely-store.ts';
import type { GrantRow, RefreshTokenRow } from '../../src/store/types.ts';
import { newId, newSortableId } from '../../src/tokens/opaque.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const NOW = 1_700_000_000;

function family(revoked: boolean): { grant: GrantRow; refreshToken: RefreshTokenRow } {
  const grant: GrantRow = { id: newSortableId(), user_id: newId(), client_id: 'c1', scope: 'openid apps', auth_time: NOW - 5, created_at: NOW, revoked_at: null };
  const refreshToken: RefreshTokenRow = {
    token_hash: newId(), grant_id: grant.id, client_id: 'c1', user_id: grant.user_id, scope: grant.scope, auth_time: grant.auth_time,
    created_at: NOW, expires_at: NOW + 3600, consumed_at: revoked ? NOW + 1 : null,
  };
  return { grant: revoked ? { ...grant, revoked_at: NOW + 1 } : grant, refreshToken };
}

for (const [name, database] of [['SQLite', withSqliteDatabase], ['PostgreSQL', withPostgresDatabase]] as const) {
  describe(`migration 003_write_path on ${name}`, async () => {
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
      const read = await store.getRefreshTokenFamily(f.refreshToken.token_hash);
      return { grant: { ...(await store.getGrant(f.grant.id)) }, token: { ...read?.token } };
    }

    it('keeps every grant and refresh token, up and down again', { skip }, async () => {
      const next = family(false);
      assert.deepEqual(await store.migrate('002_revocation'), ['001_initial', '002_revocation']);
      const families = [family(false), family(true), family(false)];
      for (const f of [...families, next]) {
        await store.createUser({ id: f.grant.user_id, username: f.grant.user_id, email: 'u@example.com', emailVerified: true, name: null, givenName: null, familyName: null, passwordHash: null, disabled: false, createdAt: NOW, updatedAt: NOW });
      }
      for (const f of families) {
        assert.equal(await store.redeemAuthorizationCode({ grant: { ...f.grant, revoked_at: null }, refreshToken: { ...f.refreshToken, consumed_at: null } }), true);
        if (f.grant.revoked_at !== null) await store.revokeGrant(f.grant.id, f.grant.revoked_at);
      }
      const expected = families.map((f) => ({ grant: f.grant, token: f.refreshToken }));
      assert.deepEqual(await Promise.all(families.map(stored)), expected);
      assert.deepEqual(await schema(), { withoutRowid: false, partialIndex: false });

      assert.deepEqual(await store.migrate(), ['003_write_path']);
      assert.deepEqual(await Promise.all(families.map(stored)), expected);
      assert.deepEqual(await schema(), { withoutRowid: store.dialect === 'sqlite', partialIndex: true });
      // The rebuilt tables take writes and enforce their keys as before.
      assert.equal(await store.redeemAuthorizationCode(next), true);
      assert.equal(await store.redeemAuthorizationCode({ ...next, refreshToken: null }), false);
      assert.deepEqual(await stored(next), { grant: next.grant, token: next.refreshToken });

      assert.deepEqual(await store.migrate('002_revocation'), ['003_write_path']);
      assert.deepEqual(await Promise.all([...families, next].map(stored)), [...expected, { grant: next.grant, token: next.refreshToken }]);
      assert.deepEqual(await schema(), { withoutRowid: false, partialIndex: false });
      assert.deepEqual(await store.migrate(), ['003_write_path']);
    });
  });
}
