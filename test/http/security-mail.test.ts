// Security notifications over HTTP with a real SMTP server (../helpers/smtp.ts): a password changed, an
// authenticator app added, recovery codes made, a passkey added and an address changed on the account
// page are each told by mail, in the page's language, naming the brand, when, the browser (by its
// User-Agent) and the address, with the way to a reset and to the account; the old address of a change
// is told too. Every event NOTICES maps (a provider linked, a recovery code used, a passkey suspended)
// is told when it is found in the trail, as after a process died right after writing it; none twice,
// none older than the window, none to a user without a verified address (nor to an old address never
// verified).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { type EventType, securityEvent } from '../../src/events/index.ts';
import { MailDelivery } from '../../src/mail/delivery.ts';
import { SecurityNotifier, WINDOW } from '../../src/mail/security.ts';
import { smtpTransport } from '../../src/mail/transport.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { SoftAuthenticator } from '../helpers/authenticator.ts';
import { addPasskey, newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { startSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.ts';
import { PASSWORD, startServer, type TestServer } from '../helpers/server.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15';
const quiet = { info() {}, warn() {}, error() {} };

describe('security notifications over HTTP with a real SMTP server', () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let delivery: MailDelivery;
  let notifier: SecurityNotifier;

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      host: 'localhost',
      env: {
        TESSERA_SMTP_URL: smtp.url,
        TESSERA_SMTP_PASSWORD: smtp.password,
        TESSERA_MAIL_FROM: 'Example <no-reply@example.com>',
        TESSERA_BRAND_NAME: 'Example ID',
      },
    });
    const settings = { secret: server.secret, mail: server.config.mail, issuer: server.issuer };
    notifier = new SecurityNotifier(server.store, settings, { defaultLocale: 'en', log: quiet });
    delivery = new MailDelivery(server.store, {
      secret: server.secret,
      transport: smtpTransport({ url: smtp.url, password: smtp.password, ca: smtp.ca }),
      from: server.config.mail.from,
      interval: 0.05,
      now: () => Math.floor(Date.now() / 1000) + server.clock.offset,
      log: quiet,
      notices: notifier,
    });
    delivery.start();
  });
  after(async () => {
    await delivery?.stop();
    await server?.close();
    await smtp?.close();
  });

  const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
  const mailTo = (to: string, subject: RegExp) => smtp.waitFor((m) => m.to.includes(to) && subject.test(m.subject));

  /** A new user signed in on the account page by a browser of `headers`. */
  async function signedInUser(headers: Record<string, string>) {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer, headers);
    assert.equal((await passwordSignIn(browser, user)).headers.get('location'), '/account');
    return { user, browser, email: `${user.username}@example.com` };
  }

  /** What every notification says besides its news: the brand, the browser, the address, the ways on. */
  function assertDetails(mail: ReceivedMail, expect: { device: RegExp; lang: string }) {
    assert.match(mail.from, /no-reply@example\.com/);
    assert.match(mail.text, expect.device);
    assert.match(mail.text, /127\.0\.0\.1/);
    assert.match(mail.text, /UTC/, 'the time, its zone named');
    assert.ok(mail.text.includes(`${server.issuer}/reset/request`));
    assert.ok(mail.text.includes(`${server.issuer}/account`));
    assert.match(mail.html, /<p style="font-weight:bold;font-size:1\.1em">Example ID<\/p>/);
    assert.match(mail.html, new RegExp(`<html lang="${expect.lang}">`));
    assert.ok(mail.html.includes(`href="${server.issuer}/reset/request"`));
  }

  it('a password changed on a German page is told in German, with the browser and address', async () => {
    const { browser, email } = await signedInUser({ 'user-agent': FIREFOX, 'accept-language': 'de-DE,de;q=0.9' });
    const page = await (await browser.request('/account')).text();
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), current: 'correct horse battery staple' };
    const changed = await browser.request('/account/password', { form: { ...form, new: 'a brand new passphrase 42' } });
    assert.equal(changed.headers.get('location'), '/account?password=changed');
    const mail = await mailTo(email, /Passwort/);
    assert.equal(mail.subject, 'Ihr Passwort für Example ID wurde geändert');
    assert.match(mail.text, /Das Passwort Ihres Kontos bei Example ID wurde geändert\./);
    assert.match(mail.text, /Wenn Sie das nicht waren, setzen Sie sofort Ihr Passwort zurück/);
    assertDetails(mail, { device: /Browser: Firefox unter Linux/, lang: 'de' });
  });

  it('an authenticator app added and recovery codes renewed on French pages are told in French', async () => {
    const { browser, email } = await signedInUser({ 'user-agent': SAFARI, 'accept-language': 'fr' });
    const page = await (await browser.request('/account')).text();
    const uri = /<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
    const totp = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), enrolment: BrowserSim.hidden(page, 'enrolment') };
    const code = totp.generate({ timestamp: now() * 1000 });
    assert.equal((await browser.request('/account/totp', { form: { ...form, code } })).status, 200);
    const app = await mailTo(email, /application d’authentification/);
    assert.equal(app.subject, 'Une application d’authentification a été ajoutée à votre compte sur Example ID');
    assertDetails(app, { device: /Navigateur : Safari sous macOS/, lang: 'fr' });
    assert.match(app.text, /Si c’était vous, il n’y a rien à faire\./);

    const again = await (await browser.request('/account')).text();
    const renewed = await browser.request('/account/recovery-codes', {
      form: { csrf: BrowserSim.hidden(again, 'csrf') },
    });
    assert.equal(renewed.status, 200);
    const codes = await mailTo(email, /Nouveaux codes de récupération/);
    assert.match(codes.text, /les précédents ne fonctionnent plus/);
    assertDetails(codes, { device: /Safari sous macOS/, lang: 'fr' });
  });

  it('a passkey added is told with its name, in the language the switch chose', async () => {
    const { browser, email } = await signedInUser({ 'user-agent': FIREFOX, 'accept-language': 'de' });
    await browser.request('/account?lang=es');
    const added = await addPasskey(browser, new SoftAuthenticator({ origin: server.issuer }), { name: 'Llave azul' });
    assert.equal(added.status, 303);
    const mail = await mailTo(email, /llave de acceso/);
    assert.equal(mail.subject, 'Se ha añadido una llave de acceso a tu cuenta en Example ID');
    assert.match(mail.text, /la llave de acceso «Llave azul»/);
    assertDetails(mail, { device: /Navegador: Firefox en Linux/, lang: 'es' });
  });

  it('an address changed is told at the new address and at the old one, in Japanese', async () => {
    const { user, browser, email } = await signedInUser({ 'user-agent': FIREFOX, 'accept-language': 'ja' });
    const page = await (await browser.request('/account')).text();
    const moved = `moved-${user.username}@example.com`;
    await browser.request('/account/email', { form: { csrf: BrowserSim.hidden(page, 'csrf'), email: moved } });
    const confirm = await mailTo(moved, /.*/);
    assert.equal((await browser.request(confirm.link!)).status, 200);
    assert.equal((await server.store.getUserById(user.id))?.email, moved);
    const subject = /^Example ID のメールアドレスが変更されました$/;
    const toOld = await mailTo(email, subject);
    const toNew = await mailTo(moved, subject);
    for (const mail of [toOld, toNew]) {
      assertDetails(mail, { device: /ブラウザー: Linux の Firefox/, lang: 'ja' });
      assert.ok(!mail.text.includes(moved) && !mail.text.includes(email), 'no address in the mail');
    }
  });

  it('an old address never verified is not told of the change, the new one is', async () => {
    const username = `never-confirmed-${now()}`;
    const old = `${username}@example.com`;
    const created = await createUser(server.store, server.config, {
      username,
      email: old,
      emailVerified: false,
      passwordHash: await hashPassword(PASSWORD),
    });
    const browser = new BrowserSim(server.issuer, { 'user-agent': FIREFOX });
    assert.equal((await passwordSignIn(browser, { username, password: PASSWORD })).status, 303);
    const page = await (await browser.request('/account')).text();
    const moved = `moved-${username}@example.com`;
    await browser.request('/account/email', { form: { csrf: BrowserSim.hidden(page, 'csrf'), email: moved } });
    const confirm = await mailTo(moved, /Confirm/);
    assert.equal((await browser.request(confirm.link!)).status, 200);
    await mailTo(moved, /was changed/);
    await delivery.runOnce();
    const mails = await server.store.listMails(500);
    assert.deepEqual(
      mails.filter((m) => m.userId === created.id).map((m) => m.recipient),
      [moved, moved],
      'the confirmation and the notice, both to the new address',
    );
  });

  /** Records `type` for a user of `email` as a request of `requester` did, and returns the user's id. */
  async function recorded(
    type: string,
    data: Record<string, string | number>,
    requester: { ip: string; userAgent: string; locale: string },
    at = now(),
  ) {
    const user = await newUser(server);
    await server.store.recordEvent(securityEvent(type as EventType, at, { userId: user.id, requester, data }));
    return { id: user.id, email: `${user.username}@example.com` };
  }

  const english = { ip: '198.51.100.7', userAgent: SAFARI, locale: 'en' };
  const german = { ip: '2001:db8::5', userAgent: FIREFOX, locale: 'de' };

  for (const [requester, cases] of [
    [
      english,
      [
        ['user.upstream_linked', { provider: 'github', by: 'account' }, /^A provider was linked/, /account at github/],
        ['recovery_code.used', { left: 3 }, /^A recovery code was used/, /3 codes are left\./],
        ['recovery_code.used', { left: 0 }, /^A recovery code was used/, /No codes are left/],
        ['passkey.suspended', { id: 'pk1', name: 'Work key' }, /^A passkey .* was suspended/, /“Work key”/],
        ['user.password_reset', {}, /^Your password for Example ID was changed/, /was changed\./],
      ],
    ],
    [
      german,
      [
        ['user.upstream_linked', { provider: 'github', by: 'account' }, /^Ein Anbieter wurde/, /Konto bei github/],
        ['recovery_code.used', { left: 1 }, /Wiederherstellungscode/, /Es ist noch 1 Code übrig\./],
        ['passkey.suspended', { id: 'pk1', name: 'Büro' }, /wurde gesperrt$/, /Passkey „Büro“/],
      ],
    ],
  ] as const) {
    for (const [type, data, subject, intro] of cases) {
      it(`${type} (${JSON.stringify(data)}) found in the trail is told in ${requester.locale}`, async () => {
        const user = await recorded(type, data, requester);
        const mail = await mailTo(user.email, subject);
        assert.match(mail.text, intro);
        assert.ok(mail.text.includes(requester.ip));
        assert.match(mail.text, requester === english ? /Browser: Safari on macOS/ : /Browser: Firefox unter Linux/);
        assert.match(mail.html, new RegExp(`<html lang="${requester.locale}">`));
      });
    }
  }

  it('none twice, none older than the window, none for an account made by a first sign-in', async () => {
    const told = await recorded('user.password_changed', {}, english);
    const old = await recorded('user.password_changed', {}, english, now() - WINDOW - 5);
    const first = await recorded('user.upstream_linked', { provider: 'github', by: 'first_sign_in' }, english);
    await mailTo(told.email, /password/);
    // More looks, by this notifier and another instance's: nothing more is written.
    const other = new SecurityNotifier(
      server.store,
      { secret: server.secret, mail: server.config.mail, issuer: server.issuer },
      { defaultLocale: 'en', log: quiet },
    );
    await Promise.all([notifier.runOnce(now()), other.runOnce(now()), delivery.runOnce()]);
    const mails = await server.store.listMails(500);
    assert.equal(mails.filter((m) => m.userId === told.id).length, 1);
    assert.equal(mails.filter((m) => m.userId === old.id || m.userId === first.id).length, 0);
  });

  it('a user without an address, or with one not verified, is told nothing', async () => {
    // As an upstream provider that shares no address makes one (src/upstream/accounts.ts).
    const none = { ...(await server.store.getUserById((await newUser(server)).id))!, email: '', emailVerified: false };
    none.id = `${none.id}-none`;
    none.username = `${none.username}-none`;
    await server.store.createUser(none);
    const unverified = await createUser(server.store, server.config, {
      username: `unverified-${now()}`,
      email: `unverified-${now()}@example.com`,
      emailVerified: false,
    });
    for (const user of [none, unverified]) {
      await server.store.recordEvent(
        securityEvent('user.password_changed', now(), { userId: user.id, requester: english }),
      );
    }
    const control = await recorded('user.password_changed', {}, english);
    await mailTo(control.email, /password/);
    await delivery.runOnce();
    const mails = await server.store.listMails(500);
    assert.deepEqual(
      mails.filter((m) => m.userId === none.id || m.userId === unverified.id),
      [],
    );
    assert.ok(!smtp.received.some((m) => m.to.includes('unverified-')));
  });
});
