// Every way the store ends sessions queues the logout tokens they owe (src/store/session-ends.ts), on
// SQLite and PostgreSQL: a factor removed (the other sessions), a restore's fence (every session), a
// session replaced by the same person's sign-in (none); the front-channel logouts of a session's sid;
// and no statement in src/ deletes sessions anywhere else, but housekeeping's of the expired ones.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Grant } from '../../src/store/grants.ts';
import type { Store } from '../../src/store/store.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { clientRecord } from '../helpers/clients.ts';
import { userRecord } from '../helpers/users.ts';
import { type TestDatabase, withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const NOW = 1_800_000_000;
const factors = [{ method: 'password', amr: ['pwd'], at: NOW }];

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`sessions' ends on ${name}`, async () => {
    const database: TestDatabase | undefined = await open();
    const skip = !database && `${name} unreachable`;
    let store: Store;
    const rp = clientRecord({ backchannelLogout: { uri: 'https://rp.example/bcl', sessionRequired: true } });

    before(async () => {
      if (!database) return;
      store = await openStore(database.url);
      await store.migrate();
      await store.createClient(rp);
    });
    after(async () => {
      await store?.close();
      await database?.drop();
    });

    /** A session of `userId` from which `rp` was signed in: its id and sid. */
    async function session(userId: string) {
      const [id, sid] = [newId(), newId()];
      await store.createSession({ id, userId, authTime: NOW, factors, createdAt: NOW, expiresAt: NOW + 3600, sid });
      const grant: Grant = {
        id: newId(),
        userId,
        clientId: rp.clientId,
        scope: 'openid',
        authTime: NOW,
        createdAt: NOW,
        revokedAt: null,
        refreshGeneration: 1,
        refreshExpiresAt: NOW + 3600,
        refreshIssuedAt: NOW,
        resource: null,
        amr: 'pwd',
        acr: 'urn:tessera:acr:sfa',
        sid,
      };
      assert.equal(await store.redeemAuthorizationCode({ grant }), true);
      return { id, sid };
    }

    /** The sids of the logout tokens queued for `userId`. */
    async function queued(userId: string): Promise<string[]> {
      const all = await store.listLogoutDeliveries(1000);
      return all
        .filter((d) => d.sub === userId)
        .map((d) => String(d.sid))
        .sort();
    }

    async function person() {
      const u = userRecord();
      await store.createUser(u);
      return u.id;
    }

    it(
      'a factor removed tells the clients of the other sessions, not of the one that removed it',
      { skip },
      async () => {
        const userId = await person();
        const [kept, other] = [await session(userId), await session(userId)];
        const credential = { userId, secretEnc: 'x', createdAt: NOW, lastStep: 0, lastUsedAt: null };
        assert.equal(await store.enrolTotp(credential, [], securityEvent('mfa.enrolled', NOW, { userId })), true);
        const event = securityEvent('mfa.removed', NOW, { userId });
        assert.equal(await store.removeTotp({ userId, keepSession: kept.id, recoveryCodes: true }, event), true);
        assert.deepEqual(await queued(userId), [other.sid]);
        // Nothing to remove: nothing ends and nobody is told.
        await session(userId);
        assert.equal(await store.removeTotp({ userId, keepSession: kept.id, recoveryCodes: true }, event), false);
        assert.deepEqual(await queued(userId), [other.sid]);
      },
    );

    it("a session replaced by the same person's sign-in tells nobody; one signed out does", { skip }, async () => {
      const userId = await person();
      const [replaced, ended] = [await session(userId), await session(userId)];
      await store.deleteSession(replaced.id);
      assert.deepEqual(await queued(userId), []);
      await store.deleteSession(ended.id, undefined, { now: NOW });
      assert.deepEqual(await queued(userId), [ended.sid]);
    });

    it(
      'front-channel logouts: the clients signed in from a sid that registered a page, as stored',
      { skip },
      async () => {
        const page = clientRecord({ frontchannelLogout: { uri: 'https://fc.example/out?a=1', sessionRequired: true } });
        await store.createClient(page);
        assert.deepEqual((await store.getClient(page.clientId))?.frontchannelLogout, page.frontchannelLogout);
        const userId = await person();
        const { sid } = await session(userId);
        // Signed in to `rp` only (no page): nothing; then to `page` from the same session.
        assert.deepEqual(await store.listFrontchannelLogouts(sid), []);
        const grant = { ...(await store.getGrant((await store.listActiveGrants(userId, NOW))[0]!.id))! };
        assert.equal(
          await store.redeemAuthorizationCode({ grant: { ...grant, id: newId(), clientId: page.clientId } }),
          true,
        );
        assert.deepEqual(await store.listFrontchannelLogouts(sid), [
          { clientId: page.clientId, uri: 'https://fc.example/out?a=1', sessionRequired: true },
        ]);
        assert.deepEqual(await store.listFrontchannelLogouts('another-sid'), []);
      },
    );

    it("a restore's fence tells the clients of every session it ends", { skip }, async () => {
      const [a, b] = [await person(), await person()];
      const [sa, sb] = [await session(a), await session(b)];
      const event = securityEvent('database.restored', NOW, {});
      assert.ok(await store.fenceRestore({ id: newId(), now: NOW, force: true, event }));
      assert.deepEqual(await queued(a), [sa.sid]);
      assert.deepEqual(await queued(b), [sb.sid]);
    });
  });
}

describe('one place ends sessions', () => {
  it("no statement in src/ deletes sessions but src/store/session-ends.ts and housekeeping's", async () => {
    const root = new URL('../../src/', import.meta.url).pathname;
    const files = (await readdir(root, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const deleting: string[] = [];
    for (const file of files) {
      const text = await readFile(join(root, file), 'utf8');
      if (/deleteFrom\(\s*['"]sessions['"]|delete\s+from\s+sessions\b/i.test(text)) deleting.push(file);
    }
    assert.deepEqual(deleting.sort(), ['store/housekeeping.ts', 'store/session-ends.ts']);
  });
});
