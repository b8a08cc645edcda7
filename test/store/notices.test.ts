// The security notifications' consumer of the audit trail (src/mail/security.ts, src/store/notices.ts),
// on SQLite and PostgreSQL alike, as two instances over one database: events written while no
// instance looked (a process killed right after its change) are told at the next look of either;
// both looking at once, again and again, write each event's mail once; only the events the map names,
// of the last hour, of users with a verified address; each mail in its event's language.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type EventType, type Requester, type SecurityEvent, securityEvent } from '../../src/events/index.ts';
import { openMessage } from '../../src/mail/compose.ts';
import { noticeKind, SecurityNotifier, WINDOW } from '../../src/mail/security.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';

const NOW = 1_800_000_000;
const SECRET = 'the-secret-of-the-notices-test';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const quiet = { info() {}, warn() {}, error() {} };
const mail = { mode: 'smtp', productName: 'Example ID', color: '#2f5bea', securityNotices: true } as const;

const user = (overrides: Partial<User> = {}) => userRecord({ passwordHash: 'hash', ...overrides });

type Log = ConstructorParameters<typeof SecurityNotifier>[2]['log'];
const notifier = (store: Store, log: Log = quiet) =>
  new SecurityNotifier(store, { secret: SECRET, mail, issuer: 'https://id.example.com' }, { defaultLocale: 'en', log });

describe('which events tell', () => {
  it('the map: each type named, a first sign-in’s link and an address merely confirmed not', () => {
    assert.equal(noticeKind({ type: 'user.password_changed', data: null }), 'password');
    assert.equal(noticeKind({ type: 'user.password_reset', data: null }), 'password');
    assert.equal(noticeKind({ type: 'passkey.added', data: { passkey: 'p', name: 'n', synced: true } }), 'passkey');
    assert.equal(noticeKind({ type: 'mfa.enrolled', data: { method: 'totp', recovery_codes: 10 } }), 'totp');
    assert.equal(noticeKind({ type: 'recovery_codes.created', data: { count: 10 } }), 'recoveryCodes');
    assert.equal(noticeKind({ type: 'recovery_code.used', data: { left: 9 } }), 'recoveryCodeUsed');
    assert.equal(noticeKind({ type: 'user.email_verified', data: { changed: true } }), 'email');
    assert.equal(noticeKind({ type: 'user.email_verified', data: { changed: false } }), undefined);
    assert.equal(noticeKind({ type: 'user.upstream_linked', data: { provider: 'g', by: 'account' } }), 'linked');
    assert.equal(noticeKind({ type: 'user.upstream_linked', data: { provider: 'g', by: 'first_sign_in' } }), undefined);
    assert.equal(
      noticeKind({ type: 'passkey.suspended' as EventType, data: { id: 'p', name: 'n' } }),
      'passkeySuspended',
    );
    assert.equal(noticeKind({ type: 'user.signed_in', data: null }), undefined);
  });
});

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`security notifications on ${name}, two instances`, () => {
    let database: TestDatabase | undefined;
    let one: Store;
    let two: Store;

    before(async () => {
      database = await open();
      if (!database) return;
      one = await openStore(database.url);
      await one.migrate();
      two = await openStore(database.url);
    });
    after(async () => {
      await two?.close();
      await one?.close();
      await database?.drop();
    });

    const record = async (store: Store, type: string, who: User, requester: Requester, at = NOW) => {
      const event = securityEvent(type as EventType, at, { userId: who.id, requester, data: { left: 2 } });
      await store.recordEvent(event);
      return event;
    };

    it('tells every event once, however many looks of both instances race', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const people = Array.from({ length: 12 }, () => user());
      for (const person of people) await one.createUser(person);
      const german: Requester = { ip: '203.0.113.9', userAgent: FIREFOX, locale: 'de' };
      // Written while no instance looked, as if each process died right after its change.
      const events: SecurityEvent[] = [];
      for (const person of people) events.push(await record(one, 'recovery_code.used', person, german));
      const warnings: unknown[] = [];
      const log = { info() {}, warn: (...args: unknown[]) => void warnings.push(args), error() {} };
      const [a, b] = [notifier(one, log), notifier(two, log)];
      const written = await Promise.all([a, b, a, b, a, b].map((n) => n.runOnce(NOW + 10)));
      assert.ok(written.reduce((x, y) => x + y) >= people.length);
      const mails = (await one.listMails(500)).filter((m) => events.some((e) => e.id === m.id));
      assert.equal(mails.length, people.length, 'one mail per event');
      assert.deepEqual(warnings, [], 'a mail another instance wrote first is no error');
      for (const m of mails) {
        const person = people.find((p) => p.id === m.userId)!;
        assert.equal(m.recipient, person.email);
        assert.equal(m.kind, 'security');
        const message = openMessage(SECRET, m.messageEnc!)!;
        assert.match(message.subject, /Example ID wurde ein Wiederherstellungscode zur Anmeldung verwendet/);
        assert.match(message.text, /Es sind noch 2 Codes übrig\./);
        assert.match(message.text, /Browser: Firefox unter Linux/);
        assert.match(message.text, /Adresse: 203\.0\.113\.9/);
        assert.ok(message.text.includes('https://id.example.com/reset/request'));
      }
      assert.equal(await a.runOnce(NOW + 20), 0, 'nothing left to tell');
    });

    it('tells only the mapped events of the last hour, of users with a verified address', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const verified = user();
      const unverified = user({ emailVerified: false });
      const none = user({ email: '', emailVerified: false });
      for (const person of [verified, unverified, none]) await one.createUser(person);
      const cli: Requester = { ip: null, userAgent: 'tessera CLI' };
      const told = await record(one, 'user.password_changed', verified, cli);
      const old = await record(one, 'user.password_changed', verified, cli, NOW - WINDOW - 1);
      const unmapped = await record(one, 'user.signed_in', verified, cli);
      const confirmedOnly = securityEvent('user.email_verified', NOW, {
        userId: verified.id,
        data: { changed: false },
      });
      await one.recordEvent(confirmedOnly);
      const strangers = [await record(one, 'user.password_changed', unverified, cli)];
      strangers.push(await record(one, 'user.password_changed', none, cli));
      await notifier(two).runOnce(NOW);
      const ids = new Set((await one.listMails(500)).map((m) => m.id));
      assert.ok(ids.has(told.id));
      for (const event of [old, unmapped, confirmedOnly, ...strangers]) assert.ok(!ids.has(event.id), event.type);
      const message = openMessage(SECRET, (await one.listMails(500)).find((m) => m.id === told.id)!.messageEnc!)!;
      // No page, so the default language; the command line named as such.
      assert.match(message.text, /Browser: The operator, on the command line/);
      assert.match(message.text, /Address: unknown/);
    });
  });
}
