// The store of upstream providers and links (src/store/upstream.ts), on SQLite and PostgreSQL alike:
// a provider's settings both ways, a link written with its event only when it was made (either
// uniqueness: one person, one account per provider and user), a first sign-in's user and link
// together or not at all, and links going with their provider or their user.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { UpstreamLink, UpstreamProvider } from '../../src/store/upstream.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';

const NOW = 1_800_000_000;

function provider(overrides: Partial<UpstreamProvider> = {}): UpstreamProvider {
  return {
    id: `p-${newId()
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 10)}`,
    type: 'oidc',
    name: 'Corp',
    issuer: 'https://idp.example.com/',
    clientId: 'tessera',
    clientSecretEnc: 'iv.ciphertext.tag',
    scopes: ['openid', 'profile', 'email'],
    trustEmail: false,
    linkOnly: false,
    trustUpstreamMfa: false,
    allowPrivateNetwork: false,
    loginHintDomains: [],
    githubUrl: null,
    githubApiUrl: null,
    acceptIdJag: false,
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

const link = (providerId: string, subject: string, userId: string): UpstreamLink => ({
  providerId,
  subject,
  userId,
  email: 'person@corp.example',
  createdAt: NOW,
  lastUsedAt: null,
});

const linked = (userId: string) => securityEvent('user.upstream_linked', NOW, { userId, data: { by: 'test' } });

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`upstream providers and links on ${name}`, async () => {
    const db = await database();
    const skip = db ? false : `${name} unreachable`;
    let store: Store;
    before(async () => {
      if (db) store = await migratedStore(db);
    });
    after(() => closeStore(store, db));
    const eventsOf = async (
      userId: string,
      type: 'user.upstream_linked' | 'user.upstream_signed_in' | 'user.signed_in',
    ) => store.listEvents({ userId, type, limit: 10 });

    it('keeps a provider as given, once per id, and changes all but its id, type and creation', { skip }, async () => {
      const github = provider({
        type: 'github',
        issuer: null,
        githubUrl: 'https://ghe.example.com',
        githubApiUrl: 'https://ghe.example.com/api/v3',
        trustEmail: true,
        linkOnly: true,
        allowPrivateNetwork: true,
        loginHintDomains: ['corp.example', 'corp.example.org'],
        scopes: ['read:user', 'user:email'],
      });
      assert.equal(await store.createProvider(github), true);
      assert.deepEqual(await store.getProvider(github.id), github);
      assert.equal(await store.createProvider({ ...github, name: 'Again' }), false);
      const changed = {
        ...github,
        name: 'GHE',
        trustEmail: false,
        loginHintDomains: [],
        acceptIdJag: true,
        updatedAt: NOW + 5,
      };
      assert.equal(await store.updateProvider({ ...changed, type: 'oidc', createdAt: 1 }), true);
      assert.deepEqual(await store.getProvider(github.id), changed);
      assert.ok((await store.listProviders()).some((p) => p.id === github.id));
      assert.equal(await store.updateProvider(provider({ id: 'absent' })), false);
    });

    it('links a person once, a user once per provider, each link with its event and no other', { skip }, async () => {
      const corp = provider();
      await store.createProvider(corp);
      const [ada, bo] = [userRecord(), userRecord()];
      await store.createUser(ada);
      await store.createUser(bo);
      assert.equal(await store.createLink(link(corp.id, 'sub-1', ada.id), linked(ada.id)), true);
      // The same person for another user; another person of the same provider for the same user.
      assert.equal(await store.createLink(link(corp.id, 'sub-1', bo.id), linked(bo.id)), false);
      assert.equal(
        await store.createLink({ ...link(corp.id, 'sub-2', ada.id), createdAt: NOW + 1 }, linked(ada.id)),
        false,
      );
      assert.equal((await eventsOf(ada.id, 'user.upstream_linked')).length, 1);
      assert.equal((await eventsOf(bo.id, 'user.upstream_linked')).length, 0);
      assert.deepEqual(await store.getLink(corp.id, 'sub-1'), link(corp.id, 'sub-1', ada.id));
      assert.deepEqual(await store.listLinks(ada.id), [link(corp.id, 'sub-1', ada.id)]);
      assert.equal(await store.countLinks(corp.id), 1);

      const used = securityEvent('user.upstream_signed_in', NOW + 9, { userId: ada.id });
      await store.touchLink(corp.id, 'sub-1', NOW + 9, used);
      assert.equal((await store.getLink(corp.id, 'sub-1'))?.lastUsedAt, NOW + 9);
      assert.equal((await eventsOf(ada.id, 'user.upstream_signed_in')).length, 1);

      assert.equal(await store.deleteLink(corp.id, bo.id), false);
      assert.equal(await store.deleteLink(corp.id, ada.id), true);
      assert.equal(await store.getLink(corp.id, 'sub-1'), undefined);
    });

    it('makes a first sign-in’s user and link together, or neither', { skip }, async () => {
      const corp = provider();
      await store.createProvider(corp);
      const first = userRecord();
      const created = securityEvent('user.created', NOW, { userId: first.id });
      await store.createUserWithLink(first, link(corp.id, 'sub-9', first.id), [created, linked(first.id)]);
      assert.equal((await store.getUserById(first.id))?.username, first.username);
      assert.equal((await store.getLink(corp.id, 'sub-9'))?.userId, first.id);
      // The same person again (a race lost): no second user, no event.
      const second = userRecord();
      await assert.rejects(store.createUserWithLink(second, link(corp.id, 'sub-9', second.id), [linked(second.id)]));
      assert.equal(await store.getUserById(second.id), undefined);
      assert.equal((await eventsOf(second.id, 'user.upstream_linked')).length, 0);
      // A username taken: no link either.
      const twin = userRecord({ username: first.username });
      await assert.rejects(store.createUserWithLink(twin, link(corp.id, 'sub-10', twin.id), []));
      assert.equal(await store.getLink(corp.id, 'sub-10'), undefined);
    });

    it(
      'starts a sign-in’s session with its link in one write, or neither when the link is refused',
      { skip },
      async () => {
        const corp = provider();
        await store.createProvider(corp);
        const [ada, bo] = [userRecord(), userRecord()];
        await store.createUser(ada);
        await store.createUser(bo);
        const session = (userId: string) => ({
          id: newId(),
          userId,
          authTime: NOW,
          factors: [{ method: 'password', amr: ['pwd'], at: NOW }],
          createdAt: NOW,
          expiresAt: NOW + 3600,
          sid: newId(),
        });
        const signedIn = (userId: string) => securityEvent('user.signed_in', NOW, { userId });
        const first = session(ada.id);
        const made = await store.createSessionWithLink(first, link(corp.id, 'sub-20', ada.id), [
          linked(ada.id),
          signedIn(ada.id),
        ]);
        assert.equal(made, true);
        assert.equal((await store.getLink(corp.id, 'sub-20'))?.userId, ada.id);
        assert.deepEqual((await store.getSessionAndUser(first.id, NOW))?.session, first);
        assert.equal((await eventsOf(ada.id, 'user.upstream_linked')).length, 1);
        // The same person for another user, and another person of the provider for ada: nothing at all.
        const refused = [
          [session(bo.id), link(corp.id, 'sub-20', bo.id)],
          [session(ada.id), link(corp.id, 'sub-21', ada.id)],
        ] as const;
        for (const [other, row] of refused) {
          const events = [linked(other.userId), signedIn(other.userId)];
          assert.equal(await store.createSessionWithLink(other, row, events), false);
          assert.equal(await store.getSessionAndUser(other.id, NOW), undefined);
        }
        assert.equal(await store.getLink(corp.id, 'sub-21'), undefined);
        assert.equal((await eventsOf(bo.id, 'user.signed_in')).length, 0);
        assert.equal((await eventsOf(ada.id, 'user.signed_in')).length, 1);
      },
    );

    it('deletes a provider with its links, and a user with theirs', { skip }, async () => {
      const [corp, other] = [provider(), provider()];
      await store.createProvider(corp);
      await store.createProvider(other);
      const [ada, bo] = [userRecord(), userRecord()];
      await store.createUser(ada);
      await store.createUser(bo);
      await store.createLink(link(corp.id, 'a', ada.id));
      await store.createLink(link(corp.id, 'b', bo.id));
      await store.createLink(link(other.id, 'a', ada.id));
      const event = securityEvent('provider.deleted', NOW, { data: { provider: corp.id } });
      assert.equal(await store.deleteProvider(corp.id, event), 2);
      assert.equal(await store.getProvider(corp.id), undefined);
      assert.deepEqual(await store.listLinks(bo.id), []);
      assert.equal(await store.deleteProvider(corp.id), undefined);
      assert.equal((await store.listEvents({ type: 'provider.deleted', limit: 5 })).length, 1);

      assert.equal(await store.deleteUser(ada.id, NOW), true);
      assert.equal(await store.getLink(other.id, 'a'), undefined);
    });

    it('finds users by email in any letter case', { skip }, async () => {
      const mixed = userRecord({ email: 'Mixed.Case@Example.ORG' });
      await store.createUser(mixed);
      assert.deepEqual(
        (await store.findUsersByEmail('mixed.case@example.org')).map((u) => u.id),
        [mixed.id],
      );
      assert.deepEqual(await store.findUsersByEmail('nobody@example.org'), []);
    });
  });
}
