// The mail outbox and links' tokens (src/store/mails.ts), on SQLite and PostgreSQL alike: a mail is
// written with its token and event or not at all; a claim holds a mail from every other claimer until
// its lease runs out; an attempt moves it on and erases its message once sent; a token is redeemed
// exactly once however many try at the same time, and only with its effect (a password only while it
// is still the one the link was issued under, an account only while its username is free).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Mail, MailToken } from '../../src/store/mails.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { hashToken, newId, newSortableId } from '../../src/tokens/opaque.ts';
import { withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';

const NOW = 1_800_000_000;

const user = (overrides: Partial<User> = {}) =>
  userRecord({ email: 'person@example.com', emailVerified: false, passwordHash: 'old-hash', ...overrides });

const mail = (overrides: Partial<Mail> = {}): Mail => ({
  id: newSortableId(),
  kind: 'reset',
  userId: null,
  recipient: 'person@example.com',
  messageEnc: 'iv.ciphertext.tag',
  status: 'pending',
  attempts: 0,
  retryBase: 0,
  nextAttemptAt: NOW,
  lockedUntil: null,
  createdAt: NOW,
  lastError: null,
  finishedAt: null,
  ...overrides,
});

const token = (overrides: Partial<MailToken> = {}): MailToken => ({
  hash: hashToken(newId()),
  purpose: 'reset',
  userId: null,
  email: 'person@example.com',
  stamp: 'stamp',
  data: null,
  createdAt: NOW,
  expiresAt: NOW + 1800,
  usedAt: null,
  ...overrides,
});

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`mail store on ${name}`, () => {
    let database: TestDatabase | undefined;
    let store: Store;
    let other: Store;

    before(async () => {
      database = await open();
      if (!database) return;
      store = await openStore(database.url);
      await store.migrate();
      other = await openStore(database.url);
    });
    after(async () => {
      await other?.close();
      await store?.close();
      await database?.drop();
    });

    it('writes a mail with its token, its new user and its event, in one write', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const u = user();
      const m = mail({ userId: u.id, kind: 'invite' });
      const k = token({ purpose: 'invite', userId: u.id, stamp: null });
      const event = securityEvent('user.invited', NOW, { userId: u.id });
      await store.queueMail({ mail: m, token: k, newUser: u, event });
      assert.equal((await store.getUserById(u.id))?.username, u.username);
      assert.equal((await store.getMailToken(k.hash))?.purpose, 'invite');
      assert.equal((await store.liveMailToken(u.id, 'invite', NOW))?.hash, k.hash);
      assert.equal(await store.liveMailToken(u.id, 'invite', NOW + 1800), undefined);
      assert.ok((await store.listMails(100)).some((x) => x.id === m.id));
      // A resend ends the earlier links.
      const again = token({ purpose: 'invite', userId: u.id, stamp: null });
      await store.queueMail({ mail: mail(), token: again, replaces: { userId: u.id, purpose: 'invite', now: NOW } });
      assert.notEqual((await store.getMailToken(k.hash))?.usedAt, null);
      assert.equal((await store.liveMailToken(u.id, 'invite', NOW))?.hash, again.hash);
      // A new user that cannot be written (a username taken) takes the mail and the token with it.
      const clash = user({ username: u.username });
      const lost = mail();
      await assert.rejects(store.queueMail({ mail: lost, token: token(), newUser: clash }));
      assert.ok(!(await store.listMails(100)).some((x) => x.id === lost.id));
      // A decoy (a reset for no account): the event alone, nothing of the mail or its token.
      const decoy = mail();
      const unused = token();
      const requested = securityEvent('user.password_reset_requested', NOW, { data: { sent: false } });
      await store.queueMail({ mail: decoy, token: unused, event: requested, decoy: true });
      assert.ok(!(await store.listMails(100)).some((x) => x.id === decoy.id));
      assert.equal(await store.getMailToken(unused.hash), undefined);
      const events = await store.listEvents({ type: 'user.password_reset_requested', limit: 100 });
      assert.ok(events.some((e) => e.id === requested.id));
    });

    it('holds a claimed mail from every other claimer until its lease runs out, and erases a sent message', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const at = NOW + 10_000;
      const due = [mail({ nextAttemptAt: at }), mail({ nextAttemptAt: at }), mail({ nextAttemptAt: at + 100 })];
      for (const m of due) await store.queueMail({ mail: m });
      const [a, b] = await Promise.all([store.claimMails(at, 60, 10), other.claimMails(at, 60, 10)]);
      const claimed = [...a, ...b].map((m) => m.id).filter((id) => due.some((d) => d.id === id));
      assert.deepEqual(claimed.sort(), [due[0]!.id, due[1]!.id].sort());
      assert.deepEqual(await store.claimMails(at + 59, 60, 10), []);
      // The claimer died: after the lease, another instance takes them.
      const retaken = (await other.claimMails(at + 60, 60, 10)).filter((m) => due.some((d) => d.id === m.id));
      assert.deepEqual(retaken.map((m) => m.id).sort(), [due[0]!.id, due[1]!.id].sort());
      await store.recordMailAttempt(due[0]!.id, { attempt: 1, at: at + 61, error: null }, { status: 'sent' });
      const failing = { attempt: 1, at: at + 61, error: 'connection refused' };
      await store.recordMailAttempt(due[1]!.id, failing, { status: 'pending', nextAttemptAt: at + 66 });
      const listed = await store.listMails(100);
      const sent = listed.find((m) => m.id === due[0]!.id)!;
      assert.equal(sent.status, 'sent');
      assert.equal(sent.messageEnc, null);
      const waiting = listed.find((m) => m.id === due[1]!.id)!;
      assert.equal(waiting.status, 'pending');
      assert.equal(waiting.messageEnc, 'iv.ciphertext.tag');
      assert.equal(waiting.lastError, 'connection refused');
      const ours = async (now: number) =>
        (await store.claimMails(now, 60, 10)).filter((m) => due.some((d) => d.id === m.id)).map((m) => m.id);
      assert.deepEqual(await ours(at + 65), []);
      assert.deepEqual(await ours(at + 66), [due[1]!.id]);
    });

    it('redeems a token once, however many try at once, with its effect and event', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const u = user();
      await store.createUser(u);
      const k = token({ userId: u.id });
      await store.queueMail({ mail: mail(), token: k });
      const attempts = Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? other : store).redeemMailToken(
          { hash: k.hash, purpose: 'reset', now: NOW + 1, nonce: newId() },
          { kind: 'password', userId: u.id, previous: 'old-hash', passwordHash: `new-${i}`, verifyEmail: u.email },
          { event: securityEvent('user.password_reset', NOW + 1, { userId: u.id }) },
        ),
      );
      const results = await Promise.all(attempts);
      assert.equal(results.filter(Boolean).length, 1);
      const after = (await store.getUserById(u.id))!;
      assert.equal(after.passwordHash, `new-${results.indexOf(true)}`);
      assert.equal(after.emailVerified, true);
      const events = await store.listEvents({ userId: u.id, type: 'user.password_reset', limit: 10 });
      assert.equal(events.length, 1);
    });

    it('sets a password only while it is the one the link was issued under, and refuses an expired link', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const u = user();
      await store.createUser(u);
      const k = token({ userId: u.id });
      await store.queueMail({ mail: mail(), token: k });
      const effect = {
        kind: 'password',
        userId: u.id,
        previous: 'stale',
        passwordHash: 'x',
        verifyEmail: null,
      } as const;
      assert.equal(
        await store.redeemMailToken({ hash: k.hash, purpose: 'reset', now: NOW, nonce: newId() }, effect),
        false,
      );
      assert.equal((await store.getUserById(u.id))?.passwordHash, 'old-hash');
      const late = token({ userId: u.id });
      await store.queueMail({ mail: mail(), token: late });
      const fresh = { ...effect, previous: 'old-hash' };
      const redemption = { hash: late.hash, purpose: 'reset' as const, now: NOW + 1800, nonce: newId() };
      assert.equal(await store.redeemMailToken(redemption, fresh), false);
      const wrongPurpose = { hash: late.hash, purpose: 'invite' as const, now: NOW, nonce: newId() };
      assert.equal(await store.redeemMailToken(wrongPurpose, fresh), false);
      assert.equal((await store.getUserById(u.id))?.passwordHash, 'old-hash');
    });

    it('creates a signed-up account only while its username is free', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const account = user({ emailVerified: true });
      const k = token({ purpose: 'signup', data: '{}' });
      await store.queueMail({ mail: mail(), token: k });
      const redeem = () => ({ hash: k.hash, purpose: 'signup' as const, now: NOW, nonce: newId() });
      assert.equal(await store.redeemMailToken(redeem(), { kind: 'account', user: account }), true);
      assert.equal((await store.getUserById(account.id))?.emailVerified, true);
      const second = token({ purpose: 'signup', data: '{}' });
      await store.queueMail({ mail: mail(), token: second });
      const clash = user({ username: account.username });
      const taken = { hash: second.hash, purpose: 'signup' as const, now: NOW, nonce: newId() };
      assert.equal(await store.redeemMailToken(taken, { kind: 'account', user: clash }), false);
      assert.equal(await store.getUserById(clash.id), undefined);
    });
  });
}
