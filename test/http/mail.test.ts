// Mail over HTTP with a real SMTP server (STARTTLS and a password, ../helpers/smtp.ts) and mails
// parsed by mailparser: a reset asked for a known and an unknown account answers the same and mails
// only the known one; the link sets a password under the rules, ends every other session, works once, and
// dies when the password changes by another route or after 30 minutes; asking is throttled per
// account (silently) and per address (429), parallel requests included; a mail asked for while the
// SMTP server is down arrives once it is back; a mail claimed by an instance that died is sent by
// another once its lease runs out; `mail list` shows states and never links; no link or token
// reaches the log. Production without TESSERA_SMTP_URL offers none of it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { MailDelivery } from '../../src/mail/delivery.ts';
import { logTransport, smtpTransport } from '../../src/mail/transport.ts';
import { openStore } from '../../src/store/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

const NEW_PASSWORD = 'a brand new passphrase 42';

/** Waits for `condition`, looking again at every turn of the event loop; fails after 20 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('the condition did not come true within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('mail: password reset over HTTP with a real SMTP server', () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let delivery: MailDelivery;
  const logs: string[] = [];
  const logStream = { write: (line: string) => void logs.push(line) };
  const log = {
    info: (obj: object, msg: string) => logs.push(JSON.stringify({ ...obj, msg })),
    warn: (obj: object, msg: string) => logs.push(JSON.stringify({ ...obj, msg })),
    error: (obj: object, msg: string) => logs.push(JSON.stringify({ ...obj, msg })),
  };
  const links: string[] = [];

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      env: {
        TESSERA_SMTP_URL: smtp.url,
        TESSERA_SMTP_PASSWORD: smtp.password,
        TESSERA_MAIL_FROM: 'Example <no-reply@example.com>',
        TESSERA_MAIL_PRODUCT_NAME: 'Example ID',
        LOG_LEVEL: 'info',
      },
      logStream,
    });
    const transport = smtpTransport({ url: smtp.url, password: smtp.password, ca: smtp.ca });
    const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
    delivery = new MailDelivery(server.store, {
      secret: server.secret,
      transport,
      from: server.config.mail.from,
      interval: 0.05,
      now,
      log,
    });
    delivery.start();
  });
  after(async () => {
    await delivery?.stop();
    await server?.close();
    await smtp?.close();
  });

  /** The next mail to `to` whose subject matches, its link remembered for the log check. */
  async function mailTo(to: string, subject: RegExp, after = 0): Promise<ReceivedMail> {
    const mail = await smtp.waitFor(
      (m) => m.to.includes(to) && subject.test(m.subject) && smtp.received.indexOf(m) >= after,
    );
    if (mail.link) links.push(mail.link);
    return mail;
  }

  async function askReset(browser: BrowserSim, identifier: string) {
    const page = await (await browser.request('/reset/request')).text();
    return browser.request('/reset/request', { form: { csrf: BrowserSim.hidden(page, 'csrf'), identifier } });
  }

  async function signIn(username: string, password: string) {
    const browser = new BrowserSim(server.issuer);
    const page = await (await browser.request('/account/login')).text();
    const csrf = BrowserSim.hidden(page, 'csrf');
    const response = await browser.request('/account/login', { form: { csrf, username, password } });
    return { browser, ok: response.status === 303 && response.headers.get('location') === '/account' };
  }

  async function choosePassword(browser: BrowserSim, link: string, password: string, confirm = password) {
    const page = await browser.request(link);
    assert.equal(page.status, 200);
    const body = await page.text();
    const form = { csrf: BrowserSim.hidden(body, 'csrf'), token: BrowserSim.hidden(body, 'token'), password, confirm };
    return browser.request('/reset', { form });
  }

  it('answers an unknown account as it answers a known one, and mails only the known one', async () => {
    const browser = new BrowserSim(server.issuer);
    const before = smtp.received.length;
    const known = await askReset(browser, 'alice');
    const unknown = await askReset(browser, 'nobody-at-all');
    const unknownAddress = await askReset(browser, 'nobody@example.com');
    assert.equal(known.status, 200);
    const [a, b, c] = [await known.text(), await unknown.text(), await unknownAddress.text()];
    assert.equal(a, b);
    assert.equal(a, c);
    assert.match(a, /Check your mail/);
    const mail = await mailTo('alice@example.com', /Reset your password for Example ID/, before);
    assert.match(mail.from, /no-reply@example\.com/);
    assert.match(mail.text, /Choose a new password/);
    assert.ok(mail.link?.startsWith(`${server.issuer}/reset?token=`));
    assert.ok(mail.html.includes(mail.link!.replace(/&/g, '&amp;')));
    // Nothing but the product and the link: no username, no address.
    assert.doesNotMatch(mail.text, /alice/);
    // The same work either way: every request is an event, the unknown ones with no user.
    const events = await server.store.listEvents({ type: 'user.password_reset_requested', limit: 10 });
    assert.equal(events.filter((e) => e.userId === server.user.id).length, 1);
    assert.equal(events.filter((e) => e.userId === null).length, 2);
    await delivery.runOnce();
    assert.equal(smtp.received.length - before, 1);
  });

  it('sets a new password from the link, ends every session, and the link works once', async () => {
    const signedIn = await signIn('alice', server.user.password);
    assert.ok(signedIn.ok);
    const before = smtp.received.length;
    const asker = new BrowserSim(server.issuer);
    await askReset(asker, 'alice@EXAMPLE.com');
    const mail = await mailTo('alice@example.com', /Reset your password/, before);
    const follower = new BrowserSim(server.issuer);
    // The password rules hold: a common password is refused, and the link still works after.
    const weak = await choosePassword(follower, mail.link!, 'password123');
    assert.equal(weak.status, 400);
    assert.match(await weak.text(), /list of common or leaked passwords/);
    const mismatch = await choosePassword(follower, mail.link!, NEW_PASSWORD, 'something else');
    assert.equal(mismatch.status, 400);
    const done = await choosePassword(follower, mail.link!, NEW_PASSWORD);
    assert.equal(done.status, 303);
    // The follower's sign-in (the link's) is now its session: the account page says the password changed.
    assert.equal(done.headers.get('location'), '/account?password=changed');
    assert.match(await (await follower.request('/account?password=changed')).text(), /Your password has changed/);
    // The old session has ended; the old password fails; the new one signs in.
    assert.equal((await signedIn.browser.request('/account')).status, 302);
    assert.equal((await signIn('alice', server.user.password)).ok, false);
    assert.ok((await signIn('alice', NEW_PASSWORD)).ok);
    // Used: refused.
    const again = await follower.request(mail.link!);
    assert.equal(again.status, 400);
    assert.match(await again.text(), /This link no longer works/);
    const events = await server.store.listEvents({ type: 'user.password_reset', userId: server.user.id });
    assert.equal(events.length, 1);
    server.user.password = NEW_PASSWORD;
  });

  it('a link dies when the password changes by another route, and after 30 minutes', async () => {
    let before = smtp.received.length;
    await askReset(new BrowserSim(server.issuer), 'alice');
    const first = await mailTo('alice@example.com', /Reset your password/, before);
    // The account page's change of password.
    const { browser } = await signIn('alice', server.user.password);
    const account = await (await browser.request('/account')).text();
    const changed = await browser.request('/account/password', {
      form: {
        csrf: BrowserSim.hidden(account, 'csrf'),
        current: server.user.password,
        new: 'yet another passphrase 7',
      },
    });
    assert.equal(changed.status, 303);
    server.user.password = 'yet another passphrase 7';
    const dead = await new BrowserSim(server.issuer).request(first.link!);
    assert.equal(dead.status, 400);

    // Alice asked three times this hour, the account's allowance: the operator lets her ask again.
    assert.equal(await run(['users', 'unlock', 'alice'], cliIo(server).io), 0);
    before = smtp.received.length;
    await askReset(new BrowserSim(server.issuer), 'alice');
    const second = await mailTo('alice@example.com', /Reset your password/, before);
    server.clock.offset += 31 * 60;
    try {
      assert.equal((await new BrowserSim(server.issuer).request(second.link!)).status, 400);
    } finally {
      server.clock.offset -= 31 * 60;
    }
  });

  it('throttles per account silently and per address with 429, parallel requests included', async () => {
    await run(['users', 'create', '--username', 'bob', '--email', 'bob@example.com'], cliIo(server).io);
    const before = smtp.received.length;
    const browser = new BrowserSim(server.issuer);
    const page = await (await browser.request('/reset/request')).text();
    const csrf = BrowserSim.hidden(page, 'csrf');
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => browser.request('/reset/request', { form: { csrf, identifier: 'bob' } })),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(200),
    );
    await delivery.runOnce();
    await mailTo('bob@example.com', /Reset/, before);
    // The outbox holds exactly three for bob: the account's allowance, however the requests raced.
    const bobs = (await server.store.listMails(100)).filter((m) => m.recipient === 'bob@example.com');
    assert.equal(bobs.length, 3);
    // The address: thirty an hour (those above counted, but not those the account refused), then 429.
    const [state] = await server.store.getThrottles(['reset-address:127.0.0.1']);
    assert.ok(state && state.failures >= 3);
    const more = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        browser.request('/reset/request', { form: { csrf, identifier: `someone-${i}` } }),
      ),
    );
    const refused = more.filter((r) => r.status === 429);
    assert.equal(more.length - refused.length, 30 - state.failures);
    assert.ok(Number(refused[0]!.headers.get('retry-after')) > 0);
    assert.match(await refused[0]!.text(), /Too many requests from your network/);
    await server.store.clearThrottles(['reset-address:127.0.0.1']);
  });

  it('a mail asked for while the SMTP server is down arrives once it is back', async () => {
    await run(['users', 'create', '--username', 'carol', '--email', 'carol@example.com'], cliIo(server).io);
    await smtp.stop();
    const before = smtp.received.length;
    await askReset(new BrowserSim(server.issuer), 'carol');
    const pending = async () => (await server.store.listMails(100)).find((m) => m.recipient === 'carol@example.com');
    // Wait for the first attempt to fail (the worker looks every 50 ms).
    await until(async () => ((await pending())?.attempts ?? 0) >= 1);
    const failed = (await pending())!;
    assert.equal(failed.status, 'pending');
    assert.ok(failed.lastError);
    assert.ok(!failed.lastError.includes('token='));
    await smtp.start();
    // The retry is due 5 s later by the worker's clock.
    server.clock.offset += 6;
    try {
      const mail = await mailTo('carol@example.com', /Reset/, before);
      assert.ok(mail.link);
    } finally {
      server.clock.offset -= 6;
    }
    await until(async () => (await pending())?.status === 'sent');
    assert.equal((await pending())?.messageEnc, null);
  });

  it('a mail claimed by an instance that died is sent by another once the lease runs out', async () => {
    await run(['users', 'create', '--username', 'dave', '--email', 'dave@example.com'], cliIo(server).io);
    await delivery.stop();
    // A second instance on the same database, its worker not started: it takes the reset request,
    // claims the mail and dies before sending.
    const dying = await openStore(server.config.databaseUrl);
    const before = smtp.received.length;
    await askReset(new BrowserSim(server.issuer), 'dave');
    const now = Math.floor(Date.now() / 1000);
    const claimed = await dying.claimMails(now, 60, 10);
    assert.ok(claimed.some((m) => m.recipient === 'dave@example.com'));
    await dying.close();
    // A restarted instance: nothing while the lease holds, then the mail, once.
    const transport = smtpTransport({ url: smtp.url, password: smtp.password, ca: smtp.ca });
    const clock = { offset: 0 };
    const restarted = new MailDelivery(server.store, {
      secret: server.secret,
      transport,
      from: server.config.mail.from,
      interval: 0.05,
      now: () => Math.floor(Date.now() / 1000) + clock.offset,
      log,
    });
    assert.equal(await restarted.runOnce(), 0);
    clock.offset = 61;
    assert.equal(await restarted.runOnce(), 1);
    await mailTo('dave@example.com', /Reset/, before);
    assert.equal(smtp.received.filter((m, i) => i >= before && m.to.includes('dave')).length, 1);
    delivery = restarted;
    delivery.start();
  });

  it('a mail is in the language of the page that asked for it', async () => {
    await run(['users', 'create', '--username', 'erika', '--email', 'erika@example.de'], cliIo(server).io);
    const browser = new BrowserSim(server.issuer);
    // The language switch's choice, kept in its cookie.
    const page = await (await browser.request('/reset/request?lang=de')).text();
    assert.match(page, /Passwort vergessen\?/);
    const before = smtp.received.length;
    const answer = await browser.request('/reset/request', {
      form: { csrf: BrowserSim.hidden(page, 'csrf'), identifier: 'erika' },
    });
    assert.match(await answer.text(), /Sehen Sie in Ihr Postfach/);
    const mail = await mailTo('erika@example.de', /Setzen Sie Ihr Passwort für Example ID zurück/, before);
    assert.match(mail.text, /Neues Passwort wählen/);
    assert.match(mail.html, /<html lang="de">/);
  });

  it('an invitation resent: the earlier link stops working, the new one sets the password once', async () => {
    const env = { TESSERA_ISSUER: server.issuer };
    const invite = cliIo(server);
    invite.io.env = { ...invite.io.env, ...env };
    const before = smtp.received.length;
    assert.equal(await run(['users', 'invite', '--email', 'gina@example.com', '--username', 'gina'], invite.io), 0);
    const first = await mailTo('gina@example.com', /You are invited/, before);
    const again = cliIo(server);
    again.io.env = { ...again.io.env, ...env };
    assert.equal(await run(['users', 'invite', '--email', 'gina@example.com', '--resend'], again.io), 0);
    const second = await mailTo('gina@example.com', /You are invited/, smtp.received.indexOf(first) + 1);
    assert.notEqual(first.link, second.link);
    const browser = new BrowserSim(server.issuer);
    assert.equal((await browser.request(first.link!)).status, 400);
    const page = await (await browser.request(second.link!)).text();
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), token: BrowserSim.hidden(page, 'token') };
    const accepted = await browser.request('/invite', {
      form: { ...form, password: NEW_PASSWORD, confirm: NEW_PASSWORD },
    });
    assert.equal(accepted.status, 200);
    assert.equal((await browser.request(second.link!)).status, 400);
    assert.ok((await signIn('gina', NEW_PASSWORD)).ok);
    const gina = (await server.store.getUserByUsername('gina'))!;
    assert.equal(gina.emailVerified, true);
    // Accepted: no more resending.
    const late = cliIo(server);
    assert.equal(
      await run(['users', 'invite', '--email', 'gina@example.com', '--username', 'gina', '--resend'], late.io),
      2,
    );
    assert.match(late.lines.join('\n'), /accepted the invitation already/);
  });

  it('tessera mail list shows the states and never a link or token', async () => {
    const { lines, io } = cliIo(server);
    assert.equal(await run(['mail', 'list', '--limit', '50'], io), 0);
    const out = lines.join('\n');
    assert.match(out, /reset\s+alice@example\.com\s+sent, 1 attempt/);
    assert.doesNotMatch(out, /token|https?:\/\//);
    const json = cliIo(server);
    assert.equal(await run(['mail', 'list', '--json'], json.io), 0);
    const listed = JSON.parse(json.lines.join('\n')) as Array<Record<string, unknown>>;
    assert.ok(listed.every((m) => !('message' in m) && !JSON.stringify(m).includes('token')));
  });

  it('no link or token reaches the log', () => {
    assert.ok(links.length >= 4);
    const text = logs.join('\n');
    assert.match(text, /"url":"\/reset\?token=%5Bredacted%5D"/);
    for (const link of links) {
      const token = new URL(link).searchParams.get('token')!;
      assert.ok(!text.includes(token), 'a token reached the log');
    }
  });
});

describe('mail: development without an SMTP server, production without one', () => {
  it('in development, mails go to the log with their link, and say so', async () => {
    const lines: string[] = [];
    const log = { warn: (obj: object, msg: string) => void lines.push(JSON.stringify({ ...obj, msg })) };
    await logTransport(log).send({
      from: 'a@b.c',
      to: 'x@y.z',
      subject: 's',
      text: 'see https://id.example/reset?token=T\n',
      html: '',
    });
    assert.match(lines[0]!, /development: not sent/);
    assert.match(lines[0]!, /reset\?token=T/);
  });

  it('in production, nothing that needs mail is offered: no pages, no links', async () => {
    const env = { NODE_ENV: 'production', TESSERA_ISSUER: 'https://id.example', TESSERA_SECRET: 'x'.repeat(40) };
    const config = loadConfig({ ...env, TESSERA_SIGNUP: 'open' });
    assert.equal(config.mail.mode, 'off');
    assert.equal(config.signup.mode, 'off');
    const server = await startServer({ env: { TESSERA_SIGNUP: 'open' } });
    try {
      // In development and tests mail goes to the log: the pages and their links are there.
      const offered = await (await fetch(`${server.issuer}/account/login`)).text();
      assert.match(offered, /Forgot your password\?/);
      assert.match(offered, /Create an account/);
      const off = { ...server.config, mail: config.mail, signup: config.signup };
      const app = await buildApp({
        config: off,
        store: server.store,
        keys: server.keys,
        secret: server.secret,
        logger: false,
      });
      for (const url of ['/reset/request', '/reset?token=x', '/signup', '/invite?token=x', '/verify?token=x']) {
        assert.equal((await app.inject({ url })).statusCode, 404, url);
      }
      const page = (await app.inject({ url: '/account/login' })).body;
      assert.doesNotMatch(page, /Forgot your password|Create an account/);
      await app.close();
    } finally {
      await server.close();
    }
  });
});

describe('mail: sign-up rules over HTTP (TESSERA_SIGNUP=open, TESSERA_SIGNUP_DOMAINS)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      env: { TESSERA_SIGNUP: 'open', TESSERA_SIGNUP_DOMAINS: 'example.org, @Example.NET' },
    });
  });
  after(() => server?.close());

  async function signUp(browser: BrowserSim, fields: { username: string; email: string; password: string }) {
    const page = await (await browser.request('/signup')).text();
    return browser.request('/signup', { form: { csrf: BrowserSim.hidden(page, 'csrf'), ...fields } });
  }
  const mailsTo = async (to: string) => (await server.store.listMails(100)).filter((m) => m.recipient === to);

  it('keeps to the domains, the password rules and free usernames, and never tells whether an address has an account', async () => {
    const browser = new BrowserSim(server.issuer);
    const elsewhere = await signUp(browser, { username: 'zed', email: 'zed@example.com', password: NEW_PASSWORD });
    assert.equal(elsewhere.status, 400);
    assert.match(await elsewhere.text(), /Only addresses of example\.org, example\.net can sign up here/);
    const weak = await signUp(browser, { username: 'zed', email: 'zed@example.org', password: 'password' });
    assert.equal(weak.status, 400);
    const taken = await signUp(browser, { username: 'alice', email: 'zed@example.org', password: NEW_PASSWORD });
    assert.match(await taken.text(), /That username is taken/);
    assert.deepEqual(await mailsTo('zed@example.org'), []);
    // An address with an account already: the same answer, and no mail.
    await createUser(server.store, null, { username: 'yan', email: 'yan@example.net', passwordHash: null });
    const existing = await signUp(browser, { username: 'zed', email: 'YAN@example.net', password: NEW_PASSWORD });
    const fresh = await signUp(browser, { username: 'zed', email: 'zed@example.net', password: NEW_PASSWORD });
    assert.equal(existing.status, 200);
    assert.equal(await existing.text(), await fresh.text());
    assert.equal((await mailsTo('zed@example.net')).length, 1);
    assert.deepEqual(await mailsTo('YAN@example.net'), []);
    // Three an hour per address asked for, then silently nothing.
    for (let i = 0; i < 4; i++)
      await signUp(browser, { username: `z${i}`, email: 'zoe@example.org', password: NEW_PASSWORD });
    assert.equal((await mailsTo('zoe@example.org')).length, 3);
  });
});
