// The Store contract, run against SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { openDatabase, openStore } from '../../src/store/index.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import type { Passkey } from '../../src/store/passkeys.ts';
import { type Client, SERVER_LIFETIMES } from '../../src/store/clients.ts';
import type { Grant, Rotation } from '../../src/store/grants.ts';
import type { Store } from '../../src/store/store.ts';
import type { Database, GrantRow } from '../../src/store/tables.ts';
import type { User } from '../../src/store/users.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { CLI, securityEvent } from '../../src/events/index.ts';
import { type TestDatabase, withPostgresDatabase, withSqliteDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';
import { clientRecord } from '../helpers/clients.ts';

const NOW = 1_800_000_000;

function client(overrides: Partial<Client> = {}): Client {
  return clientRecord({
    redirectUris: ['https://app.example/cb', 'https://app.example/cb2'],
    scopes: ['openid', 'apps'],
    ...overrides,
  });
}

const user = (overrides: Partial<User> = {}) => userRecord({ email: 'u@example.com', name: 'U', ...overrides });

function grant(userId: string, clientId: string): Grant {
  return {
    id: newId(),
    userId: userId,
    clientId: clientId,
    scope: 'openid',
    authTime: NOW,
    createdAt: NOW,
    revokedAt: null,
    refreshGeneration: 1,
    refreshExpiresAt: NOW + 100,
    refreshIssuedAt: NOW,
    resource: null,
    amr: 'pwd',
    acr: 'urn:tessera:acr:sfa',
    sid: null,
  };
}

/** A grant as its row, for writing behind the store's back. */
function grantRow(g: Grant): GrantRow {
  return {
    id: g.id,
    user_id: g.userId,
    client_id: g.clientId,
    scope: g.scope,
    auth_time: g.authTime,
    created_at: g.createdAt,
    revoked_at: g.revokedAt,
    refresh_generation: g.refreshGeneration,
    refresh_expires_at: g.refreshExpiresAt,
    refresh_issued_at: g.refreshIssuedAt,
    resource: g.resource,
    amr: g.amr,
    acr: g.acr,
    sid: g.sid,
  };
}

function contract(
  name: string,
  database: () => Promise<TestDatabase | undefined>,
  thread: 'worker' | 'current' = 'current',
): void {
  describe(`Store contract: ${name}`, async () => {
    const db = await database();
    const skip = db ? false : `${name} unreachable`;
    let store: Store;
    /** A second connection, for rows the store does not write. */
    let side: Kysely<Database>;
    before(async () => {
      if (!db) return;
      store = await openStore(db.url, { thread });
      assert.deepEqual(await store.migrate(), Object.keys(migrations));
      side = openDatabase(db.url);
      // The users the grants below belong to: a code is redeemed only for an active user.
      for (let i = 0; i < 10; i++) await store.createUser(user({ id: `u${i}` }));
    });
    after(async () => {
      await side?.destroy();
      await store?.close();
      await db?.drop();
    });

    it('migrating again applies nothing', { skip }, async () => {
      assert.deepEqual(await store.migrate(), []);
      await store.ping();
    });

    it('clients: create, get, list, rotate secret, delete', { skip }, async () => {
      const c = client({ firstParty: true, idTokenSignedResponseAlg: 'ES256' });
      await store.createClient(c);
      assert.deepEqual(await store.getClient(c.clientId), c);
      assert.ok((await store.listClients()).some((x) => x.clientId === c.clientId));
      assert.equal(await store.setClientSecretHash(c.clientId, 'cd'.repeat(32)), true);
      assert.equal((await store.getClient(c.clientId))?.secretHash, 'cd'.repeat(32));
      assert.equal(await store.setClientSecretHash('nope', 'x'), false);
      assert.equal(await store.deleteClient(c.clientId), true);
      assert.equal(await store.deleteClient(c.clientId), false);
      assert.equal(await store.getClient(c.clientId), undefined);
    });

    it('users: create, find, password, disable, count; usernames are unique', { skip }, async () => {
      const before = await store.countUsers();
      const u = user();
      await store.createUser(u);
      assert.deepEqual(await store.getUserById(u.id), u);
      assert.deepEqual(await store.getUserByUsername(u.username), u);
      assert.equal(await store.countUsers(), before + 1);
      await assert.rejects(store.createUser(user({ username: u.username })));
      assert.equal(await store.setUserPassword(u.id, '$argon2id$x', NOW + 1), true);
      assert.equal(await store.setUserDisabled(u.id, true, NOW + 2), true);
      const changed = await store.getUserById(u.id);
      assert.equal(changed?.passwordHash, '$argon2id$x');
      assert.equal(changed?.disabled, true);
      assert.equal(changed?.updatedAt, NOW + 2);
      assert.equal(await store.setUserDisabled('nope', true, NOW), false);
      assert.ok((await store.listUsers()).some((x) => x.id === u.id));
    });

    it('a failing write leaves the writes committed beside it intact', { skip }, async () => {
      const existing = user();
      await store.createUser(existing);
      const fresh = [user(), user()];
      const results = await Promise.allSettled([
        store.createUser(fresh[0]!),
        store.createUser(user({ username: existing.username })),
        store.createUser(fresh[1]!),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      for (const u of fresh) assert.equal((await store.getUserById(u.id))?.id, u.id);
    });

    it('sessions: read with their user; expired sessions are not returned; delete', { skip }, async () => {
      const u = user({ familyName: 'S' });
      await store.createUser(u);
      const id = newId();
      // The factors are the sign-in's (src/authn/factors.ts), stored and read in the same statement.
      const factors = [{ method: 'password', amr: ['pwd'], at: NOW }];
      const session = { id, userId: u.id, authTime: NOW, factors, createdAt: NOW, expiresAt: NOW + 10, sid: 'sid-1' };
      await store.createSession(session);
      const found = await store.getSessionAndUser(id, NOW + 9);
      assert.deepEqual({ ...found!.session }, session);
      assert.deepEqual(found!.user, u);
      assert.equal(found!.consentedScopes, undefined);
      // With a client: the scopes the user consented to for it, read in the same statement.
      await store.saveConsent(u.id, 'c-consented', ['openid', 'apps'], NOW);
      await store.saveConsent(u.id, 'c-other', ['email'], NOW);
      assert.deepEqual((await store.getSessionAndUser(id, NOW + 9, 'c-consented'))?.consentedScopes, [
        'openid',
        'apps',
      ]);
      assert.deepEqual((await store.getSessionAndUser(id, NOW + 9, 'c-never'))?.consentedScopes, []);
      assert.deepEqual((await store.getSessionAndUser(id, NOW + 9, 'c-never'))?.user, u);
      assert.equal(await store.getSessionAndUser(id, NOW + 10, 'c-consented'), undefined);
      assert.equal(await store.getSessionAndUser(id, NOW + 10), undefined);
      await store.deleteSession(id);
      assert.equal(await store.getSessionAndUser(id, NOW), undefined);
      // The session of a user that no longer exists is found, without a user.
      const orphan = newId();
      await store.createSession({
        id: orphan,
        userId: 'no-such-user',
        authTime: NOW,
        factors: [],
        createdAt: NOW,
        expiresAt: NOW + 10,
      });
      const alone = await store.getSessionAndUser(orphan, NOW);
      assert.equal(alone!.session.userId, 'no-such-user');
      assert.equal(alone!.user, undefined);
    });

    it(
      "a user's sessions: listed newest first, none expired; signed out everywhere, with or without the grants",
      { skip },
      async () => {
        const u = user();
        await store.createUser(u);
        const factors = [{ method: 'password', amr: ['pwd'], at: NOW }];
        const session = (id: string, createdAt: number, expiresAt: number) =>
          store.createSession({ id, userId: u.id, authTime: createdAt, factors, createdAt, expiresAt });
        await session('s-old', NOW - 20, NOW + 100);
        await session('s-new', NOW - 10, NOW + 100);
        await session('s-expired', NOW - 30, NOW - 1);
        assert.deepEqual(
          (await store.listSessionsOf(u.id, NOW)).map((s) => [s.id, s.factors]),
          [
            ['s-new', factors],
            ['s-old', factors],
          ],
        );
        const c = client();
        await store.createClient(c);
        const g = { ...grant(u.id, c.clientId), userId: u.id };
        assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
        const signedOut = securityEvent('user.signed_out', NOW, {
          userId: u.id,
          requester: CLI,
          data: { everywhere: true },
        });
        assert.equal(await store.signOutEverywhere({ userId: u.id, now: NOW, revokeGrants: false }, [signedOut]), 3);
        assert.deepEqual(await store.listSessionsOf(u.id, NOW), []);
        assert.equal((await store.getGrant(g.id))?.revokedAt, null, 'without revokeGrants the grant stays');
        assert.equal((await store.listEvents({ userId: u.id, type: 'user.signed_out' })).length, 1);
        await session('s-again', NOW, NOW + 100);
        await store.signOutEverywhere({ userId: u.id, now: NOW + 1, revokeGrants: true }, []);
        assert.deepEqual(await store.listSessionsOf(u.id, NOW), []);
        assert.equal((await store.getGrant(g.id))?.revokedAt, NOW + 1);
      },
    );

    it('throttles of a username: every key counted for it, and only those', { skip }, async () => {
      const subject = `t-${newId()}`.toLowerCase();
      await store.recordFailures({
        keys: [
          { key: `account:${subject}`, subject },
          { key: `device:d1:${subject}`, subject },
          { key: 'address:192.0.2.9', subject: '192.0.2.9' },
        ],
        now: NOW,
        window: 3600,
      });
      assert.deepEqual(
        (await store.getThrottlesOf(subject)).map((s) => [s.key, s.failures, s.lastFailureAt]),
        [
          [`account:${subject}`, 1, NOW],
          [`device:d1:${subject}`, 1, NOW],
        ],
      );
      assert.deepEqual(await store.getThrottlesOf('nobody'), []);
    });

    it("clients' own token lifetimes are kept, and put back to the server's", { skip }, async () => {
      const c = client({ lifetimes: { accessToken: 600, refreshToken: null, idToken: 300 } });
      await store.createClient(c);
      assert.deepEqual((await store.getClient(c.clientId))?.lifetimes, c.lifetimes);
      await store.updateClient({ ...c, lifetimes: SERVER_LIFETIMES });
      assert.deepEqual((await store.getClient(c.clientId))?.lifetimes, SERVER_LIFETIMES);
    });

    it('reads made at once answer as the same reads one by one', { skip }, async () => {
      const [a, b] = [user({ name: 'A' }), user({ name: 'B' })];
      await store.createUser(a);
      await store.createUser(b);
      const [sa, sb, orphan] = [newId(), newId(), newId()];
      await store.createSession({
        id: sa,
        userId: a.id,
        authTime: NOW,
        factors: [],
        createdAt: NOW,
        expiresAt: NOW + 10,
      });
      await store.createSession({
        id: sb,
        userId: b.id,
        authTime: NOW,
        factors: [],
        createdAt: NOW,
        expiresAt: NOW + 20,
      });
      await store.createSession({
        id: orphan,
        userId: 'no-such-user',
        authTime: NOW,
        factors: [],
        createdAt: NOW,
        expiresAt: NOW + 10,
      });
      await store.saveConsent(a.id, 'c1', ['openid', 'apps'], NOW);
      await store.saveConsent(b.id, 'c1', ['email'], NOW);
      const g = grant(a.id, 'c1');
      assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
      const revokedJti = newId();
      await store.revokeAccessToken(revokedJti, NOW + 60);

      const sessionReads: Array<[string, number, string]> = [
        [sa, NOW + 5, 'c1'],
        [sb, NOW + 5, 'c1'],
        [sa, NOW + 5, 'c2'],
        [sa, NOW + 15, 'c1'],
        [sb, NOW + 15, 'c1'],
        [orphan, NOW, 'c1'],
        [newId(), NOW, 'c1'],
        [sa, NOW + 5, 'c1'],
        [sa, NOW + 5, 'c1\nNOW'],
      ];
      const tokenReads = [
        { userId: a.id, grantId: g.id, jti: newId() },
        { userId: a.id, grantId: g.id, jti: revokedJti },
        { userId: 'gone', grantId: g.id, jti: newId() },
        { userId: b.id, grantId: 'gone', jti: revokedJti },
        { userId: a.id, grantId: g.id, jti: revokedJti },
      ];
      const reads: Array<() => Promise<unknown>> = [
        ...sessionReads.map(
          ([id, now, clientId]) =>
            () =>
              store.getSessionAndUser(id, now, clientId),
        ),
        ...tokenReads.map((read) => () => store.getAccessTokenState(read)),
      ];
      const oneByOne: unknown[] = [];
      for (const read of reads) oneByOne.push(await read());
      const atOnce = await Promise.all(reads.map((read) => read()));
      const plain = (values: unknown[]) => JSON.parse(JSON.stringify(values)) as unknown;
      assert.deepEqual(plain(atOnce), plain(oneByOne));
      // And they are what they should be.
      const sessions = atOnce.slice(0, sessionReads.length) as Array<Awaited<ReturnType<Store['getSessionAndUser']>>>;
      assert.deepEqual(
        sessions.map((s) => s && [s.user?.name ?? null, s.consentedScopes]),
        [
          ['A', ['openid', 'apps']],
          ['B', ['email']],
          ['A', []],
          undefined,
          ['B', ['email']],
          [null, []],
          undefined,
          ['A', ['openid', 'apps']],
          ['A', []],
        ],
      );
      const states = atOnce.slice(sessionReads.length) as Array<Awaited<ReturnType<Store['getAccessTokenState']>>>;
      assert.deepEqual(
        states.map((s) => [s.user?.name ?? null, s.grant?.id ?? null, s.revoked]),
        [
          ['A', g.id, false],
          ['A', g.id, true],
          [null, g.id, false],
          ['B', null, true],
          ['A', g.id, true],
        ],
      );
    });

    it('consent is an upsert per user and client', { skip }, async () => {
      assert.deepEqual(await store.getConsentedScopes('u1', 'c1'), []);
      await store.saveConsent('u1', 'c1', ['openid'], NOW);
      await store.saveConsent('u1', 'c1', ['openid', 'apps'], NOW + 1);
      assert.deepEqual(await store.getConsentedScopes('u1', 'c1'), ['openid', 'apps']);
      assert.deepEqual(await store.getConsentedScopes('u1', 'c2'), []);
    });

    it(
      "a code is redeemed once: the first grant under its id wins, holding its refresh token's state",
      { skip },
      async () => {
        const g = grant('u1', 'c1');
        assert.equal(await store.getGrant(g.id), undefined);
        assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
        assert.deepEqual({ ...(await store.getGrant(g.id)) }, g);
        // A second redemption of the same code: same grant id, other contents.
        const again: Grant = { ...grant('u2', 'c2'), id: g.id, refreshExpiresAt: NOW + 500 };
        assert.equal(await store.redeemAuthorizationCode({ grant: again }), false);
        assert.deepEqual({ ...(await store.getGrant(g.id)) }, g);
      },
    );

    it('a code is not redeemed for a user who is disabled or gone', { skip }, async () => {
      const disabled = user({ disabled: true });
      await store.createUser(disabled);
      for (const userId of [disabled.id, 'no-such-user']) {
        const g = grant(userId, 'c1');
        assert.equal(await store.redeemAuthorizationCode({ grant: g }), false);
        assert.equal(await store.getGrant(g.id), undefined);
      }
    });

    it('concurrent redemptions of one code: exactly one wins', { skip }, async () => {
      const id = newId();
      const attempts = Array.from({ length: 10 }, (_, i): Grant => ({ ...grant(`u${i}`, 'c1'), id }));
      const results = await Promise.all(attempts.map((g) => store.redeemAuthorizationCode({ grant: g })));
      assert.equal(results.filter(Boolean).length, 1);
      assert.deepEqual({ ...(await store.getGrant(id)) }, attempts[results.indexOf(true)]);
    });

    it('a write that fails leaves no trace and does not undo the writes committed beside it', { skip }, async () => {
      const a = grant('u1', 'c1');
      const b = grant('u1', 'c1');
      // A grant the schema refuses (no scope).
      const failing = { ...grant('u1', 'c1'), scope: null as unknown as string };
      const results = await Promise.allSettled([
        store.redeemAuthorizationCode({ grant: a }),
        store.redeemAuthorizationCode({ grant: failing }),
        store.redeemAuthorizationCode({ grant: b }),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal(await store.getGrant(failing.id), undefined);
      assert.ok(await store.getGrant(a.id));
      assert.ok(await store.getGrant(b.id));
      // The store still takes writes after the failure.
      assert.equal(await store.redeemAuthorizationCode({ grant: grant('u1', 'c1') }), true);
    });

    it("an access token's user, grant and own revocation are read together", { skip }, async () => {
      const u = user();
      await store.createUser(u);
      const g = grant(u.id, 'c1');
      assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
      const jti = newId();
      assert.deepEqual(await store.getAccessTokenState({ userId: u.id, grantId: g.id, jti }), {
        user: u,
        grant: { id: g.id, revokedAt: null },
        revoked: false,
      });
      await store.revokeAccessToken(jti, NOW + 60);
      await store.revokeGrant(g.id, NOW + 5);
      assert.deepEqual(await store.getAccessTokenState({ userId: u.id, grantId: g.id, jti }), {
        user: u,
        grant: { id: g.id, revokedAt: NOW + 5 },
        revoked: true,
      });
      // Whatever is missing reads as absent, each on its own.
      assert.deepEqual(await store.getAccessTokenState({ userId: 'gone', grantId: g.id, jti: newId() }), {
        user: undefined,
        grant: { id: g.id, revokedAt: NOW + 5 },
        revoked: false,
      });
      assert.deepEqual(await store.getAccessTokenState({ userId: u.id, grantId: 'gone', jti }), {
        user: u,
        grant: undefined,
        revoked: true,
      });
      assert.deepEqual(await store.getAccessTokenState({ userId: 'gone', grantId: 'gone', jti: 'gone' }), {
        user: undefined,
        grant: undefined,
        revoked: false,
      });
    });

    it('a token family is its grant, read with its user', { skip }, async () => {
      const u = user({ name: 'Family', givenName: 'F', disabled: true });
      await store.createUser({ ...u, disabled: false });
      const g = grant(u.id, 'c1');
      assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
      await store.setUserDisabled(u.id, true, u.updatedAt);
      const family = await store.getTokenFamily(g.id);
      assert.deepEqual({ ...family!.grant }, g);
      assert.deepEqual(family!.user, u);
      // A grant whose user is gone still reads.
      const orphan = grant('no-such-user', 'c1');
      await side.insertInto('grants').values(grantRow(orphan)).execute();
      const alone = await store.getTokenFamily(orphan.id);
      assert.deepEqual({ ...alone!.grant }, orphan);
      assert.equal(alone!.user, undefined);
      assert.equal(await store.getTokenFamily('unknown'), undefined);
    });

    /** A refresh of `g` from generation 1 by client c1 that holds; `sign` stands for signing the tokens. */
    const rotation = (g: Grant, changes: Partial<Rotation> = {}): Rotation => ({
      grantId: g.id,
      generation: 1,
      clientId: 'c1',
      scope: null,
      resource: null,
      now: NOW + 10,
      ttl: 50,
      absoluteTtl: 1000,
      ...changes,
    });
    const sign = async (family: { grant: Grant }) => `tokens of generation ${family.grant.refreshGeneration}`;

    it(
      'a refresh moves the family to the next generation, and hands out what was signed once it has',
      { skip },
      async () => {
        const u = user();
        await store.createUser(u);
        const g = grant(u.id, 'c1');
        assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
        const outcome = await store.rotateTokenFamily(rotation(g), sign);
        const next = { ...g, refreshGeneration: 2, refreshIssuedAt: NOW + 10, refreshExpiresAt: NOW + 60 };
        assert.equal(outcome.rotated, true);
        assert.deepEqual({ ...outcome.family!.grant }, next);
        assert.deepEqual(outcome.family!.user, u);
        assert.equal(outcome.rotated && outcome.value, 'tokens of generation 2');
        assert.deepEqual({ ...(await store.getGrant(g.id)) }, next);
        // The next token's lifetime stops at the family's end.
        const last = await store.rotateTokenFamily(
          rotation(g, { generation: 2, now: NOW + 20, absoluteTtl: 30 }),
          sign,
        );
        assert.equal(last.family?.grant.refreshExpiresAt, NOW + 30);
      },
    );

    it(
      'a refresh that does not hold writes nothing, signs nothing, and returns the family as it stands',
      { skip },
      async () => {
        const u = user();
        await store.createUser(u);
        const g = { ...grant(u.id, 'c1'), scope: 'openid apps' };
        assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
        const refused = async (changes: Partial<Rotation>) => {
          const before = await store.getGrant(g.id);
          const outcome = await store.rotateTokenFamily(rotation(g, changes), () => assert.fail('signed'));
          assert.equal(outcome.rotated, false, JSON.stringify(changes));
          assert.deepEqual(outcome.family && { ...outcome.family.grant }, changes.grantId ? undefined : { ...before });
          assert.deepEqual(await store.getGrant(g.id), before);
        };
        await refused({ clientId: 'c2' });
        await refused({ now: NOW + 100 }); // the token expires at NOW + 100
        await refused({ absoluteTtl: 10 }); // the family ends at NOW + 10
        await refused({ grantId: 'unknown' });
        await refused({ generation: 2 });
        await refused({ generation: 0 });
        await refused({ scope: 'openid email' }); // wider than the grant
        const narrowed = await store.rotateTokenFamily(rotation(g, { scope: 'apps' }), sign);
        assert.equal(narrowed.rotated, true);
        await refused({}); // generation 1 is used
        await store.setUserDisabled(u.id, true, NOW);
        await refused({ generation: 2 });
        await store.setUserDisabled(u.id, false, NOW);
        await store.revokeGrant(g.id, NOW + 5);
        await store.revokeGrant(g.id, NOW + 6);
        assert.equal((await store.getGrant(g.id))?.revokedAt, NOW + 5, 'revoking is idempotent');
        await refused({ generation: 2 });
        await side.updateTable('grants').set({ revoked_at: null }).where('id', '=', g.id).execute();
        assert.equal(
          (await store.rotateTokenFamily(rotation(g, { generation: 2 }), sign)).rotated,
          true,
          'the same request passes once the grant is live',
        );
      },
    );

    it("a refresh names the grant's resource or none; a grant without one takes any (RFC 8707)", { skip }, async () => {
      const u = user();
      await store.createUser(u);
      const bound = { ...grant(u.id, 'c1'), resource: 'https://api.example/' };
      const open = grant(u.id, 'c1');
      for (const g of [bound, open]) assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
      assert.equal((await store.getGrant(bound.id))?.resource, 'https://api.example/');
      const other = { resource: 'https://other.example/' };
      assert.equal((await store.rotateTokenFamily(rotation(bound, other), sign)).rotated, false);
      assert.equal((await store.getGrant(bound.id))?.refreshGeneration, 1, 'nothing written');
      const same = { resource: 'https://api.example/' };
      assert.equal((await store.rotateTokenFamily(rotation(bound, same), sign)).rotated, true);
      assert.equal((await store.rotateTokenFamily(rotation(open, other), sign)).rotated, true);
    });

    it('concurrent refreshes with one token: exactly one wins', { skip }, async () => {
      const g = grant('u1', 'c1');
      assert.equal(await store.redeemAuthorizationCode({ grant: g }), true);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.rotateTokenFamily(rotation(g, { ttl: 10 + i }), sign)),
      );
      const won = outcomes.findIndex((o) => o.rotated);
      assert.equal(outcomes.filter((o) => o.rotated).length, 1);
      // The losers are told how the family stands now: a generation ahead.
      assert.ok(outcomes.every((o) => o.family?.grant.refreshGeneration === 2));
      assert.equal((await store.getGrant(g.id))?.refreshExpiresAt, NOW + 10 + 10 + won);
    });

    it(
      'concurrent redemptions and refreshes of different codes and families (on PostgreSQL, batched into shared statements) are each answered for themselves',
      { skip },
      async () => {
        const u = user();
        const off = user({ disabled: true });
        await store.createUser(u);
        await store.createUser(off);
        const grants = Array.from({ length: 12 }, (_, i) => grant(i % 4 === 3 ? off.id : u.id, 'c1'));
        const redeemed = await Promise.all(grants.map((g) => store.redeemAuthorizationCode({ grant: g })));
        assert.deepEqual(
          redeemed,
          grants.map((_, i) => i % 4 !== 3),
        );
        for (const [i, g] of grants.entries()) {
          const stored = await store.getGrant(g.id);
          assert.deepEqual(stored && { ...stored }, i % 4 === 3 ? undefined : g);
        }
        const live = grants.filter((_, i) => i % 4 !== 3);
        // Every other request presents a generation already gone; the rest rotate.
        const rotations = live.map((g, i) => rotation(g, { generation: i % 2 === 0 ? 1 : 0, now: NOW + 10 + i }));
        const outcomes = await Promise.all(rotations.map((r) => store.rotateTokenFamily(r, sign)));
        for (const [i, g] of live.entries()) {
          const expected =
            i % 2 === 0
              ? { ...g, refreshGeneration: 2, refreshIssuedAt: NOW + 10 + i, refreshExpiresAt: NOW + 60 + i }
              : g;
          assert.equal(outcomes[i]!.rotated, i % 2 === 0);
          assert.deepEqual({ ...outcomes[i]!.family!.grant }, expected);
          assert.deepEqual(outcomes[i]!.family!.user, u);
          assert.deepEqual({ ...(await store.getGrant(g.id)) }, expected);
        }
      },
    );

    it("a user's webhooks are capped in the write that creates them", { skip }, async () => {
      const owner = user();
      await store.createUser(owner);
      const webhook = (i: number) => ({
        id: `wh_cap_${i}`,
        url: 'https://hooks.example/x',
        events: 'user.signed_in',
        ownerId: owner.id,
        secretEnc: 'x',
        previousSecretEnc: null,
        previousUntil: null,
        createdAt: NOW,
      });
      const created = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.createWebhook(
            webhook(i),
            securityEvent('webhook.created', NOW, { userId: owner.id, data: { webhook: `wh_cap_${i}` } }),
            2,
          ),
        ),
      );
      assert.equal(created.filter(Boolean).length, 2);
      assert.equal((await store.listWebhooks(owner.id)).length, 2);
      const events = await store.listEvents({ userId: owner.id, type: 'webhook.created' });
      assert.deepEqual(
        events.map((e) => e.data?.webhook).sort(),
        (await store.listWebhooks(owner.id)).map((w) => w.id).sort(),
        'events only for the webhooks made',
      );
      // A user who does not exist (deleted meanwhile) gets none.
      assert.equal(await store.createWebhook({ ...webhook(9), ownerId: 'nobody' }, undefined, 2), false);
    });

    it(
      'deleting a user deletes their apps and webhooks, and revokes what was issued to the apps',
      { skip },
      async () => {
        const owner = user();
        await store.createUser(owner);
        const app = client({ registeredVia: 'dynamic', ownerId: owner.id, registrationTokenHash: 'cd'.repeat(32) });
        await store.createClient(app);
        const theirs = grant('u1', app.clientId);
        assert.equal(await store.redeemAuthorizationCode({ grant: theirs }), true);
        await store.saveConsent('u1', app.clientId, ['openid'], NOW);
        await store.createWebhook({
          id: 'wh_gone',
          url: 'https://hooks.example/y',
          events: 'user.deleted',
          ownerId: owner.id,
          secretEnc: 'x',
          previousSecretEnc: null,
          previousUntil: null,
          createdAt: NOW,
        });
        assert.equal(await store.deleteUser(owner.id, NOW), true);
        assert.equal(await store.getClient(app.clientId), undefined);
        assert.notEqual((await store.getGrant(theirs.id))?.revokedAt, null);
        assert.deepEqual(await store.getConsentedScopes('u1', app.clientId), []);
        assert.equal(await store.getWebhook('wh_gone'), undefined);
      },
    );

    it('signing keys: one successor per key, activation moved, expired keys deleted', { skip }, async () => {
      const key = (kid: string, successorOf: string) => ({
        kid,
        alg: 'ES256',
        publicJwk: '{}',
        privateJwkEnc: 'x',
        createdAt: NOW,
        activatesAt: NOW + 100,
        successorOf: successorOf,
      });
      const event = (kid: string) => securityEvent('key.rotated', NOW, { requester: CLI, data: { kid } });
      assert.equal(await store.insertSigningKey(key('k1', 'initial:ES256'), event('k1')), true);
      assert.equal(await store.insertSigningKey(key('k2', 'k1'), event('k2')), true);
      // A second successor of k1 (another instance rotating at the same moment) is not inserted, nor its event.
      assert.equal(await store.insertSigningKey(key('k3', 'k1'), event('k3')), false);
      assert.deepEqual((await store.listSigningKeys()).map((k) => k.kid).sort(), ['k1', 'k2']);
      const kids = (await store.listEvents({ type: 'key.rotated' })).map((e) => e.data?.kid).sort();
      assert.deepEqual(kids, ['k1', 'k2']);
      assert.equal(await store.activateSigningKey('k2', NOW + 5), true);
      assert.equal((await store.listSigningKeys()).find((k) => k.kid === 'k2')?.activatesAt, NOW + 5);
      assert.equal(await store.deleteSigningKeys(['k1']), 1);
      assert.deepEqual(
        (await store.listSigningKeys()).map((k) => k.kid),
        ['k2'],
      );
    });

    it(
      'passkeys: added once per credential, used with a counter that moves on, renamed, removed with the other sessions',
      { skip },
      async () => {
        const owner = user();
        await store.createUser(owner);
        const passkey = (id: string, credentialId: string): Passkey => ({
          id,
          userId: owner.id,
          credentialId,
          publicKey: new Uint8Array([1, 2, 3]),
          counter: 0,
          transports: ['internal', 'hybrid'],
          backupEligible: true,
          backedUp: false,
          name: 'Phone',
          createdAt: NOW,
          lastUsedAt: null,
          suspendedAt: null,
        });
        const event = (type: 'passkey.added' | 'passkey.renamed' | 'passkey.removed', id: string) =>
          securityEvent(type, NOW, { userId: owner.id, data: { passkey: id } });
        assert.equal(await store.hasPasskeys(owner.id), false);
        assert.equal(await store.addPasskey(passkey('p1', 'cred-1'), event('passkey.added', 'p1')), true);
        // The same credential again, under another id: nothing, and no event.
        assert.equal(await store.addPasskey(passkey('p2', 'cred-1'), event('passkey.added', 'p2')), false);
        assert.equal(await store.addPasskey(passkey('p3', 'cred-3'), event('passkey.added', 'p3')), true);
        assert.deepEqual(await store.listPasskeys(owner.id), [passkey('p1', 'cred-1'), passkey('p3', 'cred-3')]);
        assert.deepEqual(await store.getPasskeyByCredentialId('cred-3'), passkey('p3', 'cred-3'));
        assert.equal(await store.hasPasskeys(owner.id), true);
        const added = await store.listEvents({ userId: owner.id, type: 'passkey.added' });
        assert.deepEqual(added.map((e) => e.data?.passkey).sort(), ['p1', 'p3']);

        // A challenge is spent once.
        const challenge = { hash: 'c'.repeat(64), expiresAt: NOW + 600 };
        assert.deepEqual(
          await Promise.all([store.spendChallenge(challenge), store.spendChallenge(challenge)]).then((r) => r.sort()),
          [false, true],
        );
        // A counter moves forward only; an authenticator without one stays at 0.
        assert.equal(await store.recordPasskeyUse({ id: 'p1', counter: 5, backedUp: true, at: NOW + 1 }), true);
        assert.equal(await store.recordPasskeyUse({ id: 'p1', counter: 5, backedUp: true, at: NOW + 2 }), false);
        assert.equal(await store.recordPasskeyUse({ id: 'p3', counter: 0, backedUp: false, at: NOW + 3 }), true);
        assert.equal(await store.recordPasskeyUse({ id: 'p3', counter: 0, backedUp: false, at: NOW + 4 }), true);
        const [p1, p3] = await store.listPasskeys(owner.id);
        assert.deepEqual([p1!.counter, p1!.backedUp, p1!.lastUsedAt, p3!.lastUsedAt], [5, true, NOW + 1, NOW + 4]);

        assert.equal(
          await store.renamePasskey({ userId: owner.id, id: 'p1', name: 'Laptop' }, event('passkey.renamed', 'p1')),
          true,
        );
        assert.equal(
          await store.renamePasskey({ userId: 'someone', id: 'p3', name: 'X' }, event('passkey.renamed', 'p3')),
          false,
        );
        assert.deepEqual(
          (await store.listEvents({ userId: owner.id, type: 'passkey.renamed' })).map((e) => e.data?.passkey),
          ['p1'],
        );

        const session = (id: string) => ({
          id,
          userId: owner.id,
          authTime: NOW,
          factors: [],
          createdAt: NOW,
          expiresAt: NOW + 60,
        });
        await store.createSession(session('here'));
        await store.createSession(session('there'));
        // Someone else's passkey id removes nothing and ends no session.
        assert.equal(
          await store.removePasskey({ userId: 'someone', id: 'p1', keepSession: 'x' }, event('passkey.removed', 'p1')),
          false,
        );
        assert.ok(await store.getSessionAndUser('there', NOW));
        assert.equal(
          await store.removePasskey(
            { userId: owner.id, id: 'p1', keepSession: 'here' },
            event('passkey.removed', 'p1'),
          ),
          true,
        );
        assert.equal(await store.getSessionAndUser('there', NOW), undefined);
        assert.ok(await store.getSessionAndUser('here', NOW));
        assert.equal(
          await store.removePasskey(
            { userId: owner.id, id: 'p1', keepSession: 'here' },
            event('passkey.removed', 'p1'),
          ),
          false,
        );
        assert.equal((await store.listEvents({ userId: owner.id, type: 'passkey.removed' })).length, 1);

        // The user's deletion takes the rest; housekeeping forgets the challenge once it has expired.
        assert.equal(await store.deleteUser(owner.id, NOW), true);
        assert.deepEqual(await store.listPasskeys(owner.id), []);
        const purged = await store.purgeExpired({
          now: NOW + 601,
          codeTtl: 60,
          codeGrace: 600,
          accessTokenTtl: 3600,
          eventRetention: 86_400 * 90,
          throttleHorizon: 3600,
        });
        assert.ok(purged.webauthn_challenges! >= 1);
        assert.equal(await store.spendChallenge(challenge), true);
      },
    );

    it(
      'second factors: one app per user, a time step spent once, recovery codes used once with one event, reset',
      { skip },
      async () => {
        const owner = user();
        await store.createUser(owner);
        const app = {
          userId: owner.id,
          secretEnc: 'iv.ciphertext.tag',
          lastStep: 100,
          createdAt: NOW,
          lastUsedAt: null,
        };
        const enrolled = () => securityEvent('mfa.enrolled', NOW, { userId: owner.id, data: { method: 'totp' } });
        assert.equal(await store.hasTotp(owner.id), false);
        assert.equal(await store.enrolTotp(app, ['h1', 'h2', 'h3'], enrolled()), true);
        // A second app while one is there: nothing, no codes, no event.
        const other = { ...app, secretEnc: 'other.secret.enc' };
        const twice = securityEvent('mfa.enrolled', NOW, { userId: owner.id, data: { method: 'totp' } });
        assert.equal(await store.enrolTotp(other, ['h4'], twice), false);
        assert.deepEqual(await store.getTotp(owner.id), app);
        assert.equal((await store.listEvents({ userId: owner.id, type: 'mfa.enrolled' })).length, 1);
        assert.deepEqual(await store.recoveryCodeSummary(owner.id), {
          unused: 3,
          used: 0,
          createdAt: NOW,
          lastUsedAt: null,
        });

        // A time step once, forward only; of two uses at once, one.
        assert.equal(await store.useTotpStep({ userId: owner.id, step: 100, at: NOW }), false, 'enrolment spent it');
        const both = [
          store.useTotpStep({ userId: owner.id, step: 101, at: NOW + 30 }),
          store.useTotpStep({ userId: owner.id, step: 101, at: NOW + 30 }),
        ];
        assert.deepEqual((await Promise.all(both)).sort(), [false, true]);
        assert.equal(await store.useTotpStep({ userId: owner.id, step: 100, at: NOW + 31 }), false, 'an older one');
        assert.equal((await store.getTotp(owner.id))!.lastUsedAt, NOW + 30);

        // A recovery code once, with one event, also when used twice at once.
        const used = () => securityEvent('recovery_code.used', NOW + 40, { userId: owner.id });
        const uses = await Promise.all([
          store.useRecoveryCode({ userId: owner.id, hash: 'h1', at: NOW + 40 }, used()),
          store.useRecoveryCode({ userId: owner.id, hash: 'h1', at: NOW + 40 }, used()),
        ]);
        assert.deepEqual(uses.sort(), [false, true]);
        assert.equal(await store.useRecoveryCode({ userId: 'someone', hash: 'h2', at: NOW }, used()), false);
        assert.equal((await store.listEvents({ userId: owner.id, type: 'recovery_code.used' })).length, 1);
        assert.deepEqual(await store.recoveryCodeSummary(owner.id), {
          unused: 2,
          used: 1,
          createdAt: NOW,
          lastUsedAt: NOW + 40,
        });
        const renewed = securityEvent('recovery_codes.created', NOW + 50, { userId: owner.id });
        await store.replaceRecoveryCodes({ userId: owner.id, hashes: ['n1', 'n2'], now: NOW + 50 }, renewed);
        assert.equal(await store.useRecoveryCode({ userId: owner.id, hash: 'h2', at: NOW + 51 }, used()), false);
        assert.equal((await store.recoveryCodeSummary(owner.id)).unused, 2);

        // Removal ends the other sessions, with the codes when asked; a reset ends every session.
        const session = (id: string) => ({
          id,
          userId: owner.id,
          authTime: NOW,
          factors: [],
          createdAt: NOW,
          expiresAt: NOW + 600,
        });
        await store.createSession(session('keep'));
        await store.createSession(session('end'));
        const removed = () => securityEvent('mfa.removed', NOW + 60, { userId: owner.id });
        const removal = { userId: owner.id, keepSession: 'keep', recoveryCodes: true };
        assert.equal(await store.removeTotp(removal, removed()), true);
        assert.equal(await store.removeTotp(removal, removed()), false);
        assert.equal((await store.listEvents({ userId: owner.id, type: 'mfa.removed' })).length, 1);
        assert.equal(await store.getSessionAndUser('end', NOW), undefined);
        assert.ok(await store.getSessionAndUser('keep', NOW));
        assert.equal(await store.hasRecoveryCodes(owner.id), false);

        assert.equal(await store.enrolTotp({ ...app, secretEnc: 'again.secret.enc' }, ['r1'], enrolled()), true);
        const reset = securityEvent('mfa.reset', NOW + 70, { userId: owner.id, requester: CLI });
        assert.deepEqual(await store.resetSecondFactors(owner.id, reset), {
          totp: true,
          recoveryCodes: 1,
          sessions: 1,
        });
        assert.equal(await store.hasTotp(owner.id), false);
        assert.equal(await store.getSessionAndUser('keep', NOW), undefined);

        // The user's deletion takes an app and codes with it.
        await store.enrolTotp({ ...app, secretEnc: 'last.secret.enc' }, ['z1'], enrolled());
        assert.equal(await store.deleteUser(owner.id, NOW), true);
        assert.equal(await store.hasTotp(owner.id), false);
        assert.deepEqual((await store.recoveryCodeSummary(owner.id)).unused, 0);
      },
    );

    it(
      'a client that requires two factors says so after an update, and one that was never asked does not',
      { skip },
      async () => {
        const c = client({ requireMfa: true });
        await store.createClient(c);
        store.clearCaches();
        assert.equal((await store.getClient(c.clientId))!.requireMfa, true);
        await store.updateClient({ ...c, requireMfa: false });
        store.clearCaches();
        assert.equal((await store.getClient(c.clientId))!.requireMfa, false);
        const plain = client();
        await store.createClient(plain);
        assert.deepEqual(await store.getClient(plain.clientId), plain);
      },
    );
  });
}

contract('SQLite', withSqliteDatabase);
contract('SQLite on a worker thread', withSqliteDatabase, 'worker');
contract('PostgreSQL', withPostgresDatabase);
