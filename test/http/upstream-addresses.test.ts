// An address an upstream provider states without verifying it is stored unverified and is nobody's
// claim: with a real SMTP server (../helpers/smtp.ts) and node-oidc-provider, a person at the provider
// claiming someone's address unverified becomes a user of their own holding it, and afterwards the
// address's owner still gets their reset by address, signs up with it, is invited at it, changes their
// address to it, and, arriving verified through a provider trusted for emails, is linked rather than
// asked for a password.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { MailDelivery } from '../../src/mail/delivery.ts';
import { smtpTransport } from '../../src/mail/transport.ts';
import { PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { Browser, type Page } from '../helpers/upstream-browser.ts';
import { type OidcUpstream, startOidcUpstream, tessera } from '../helpers/upstreams.ts';

describe('an address a provider did not verify never stands in the way of its owner', () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let delivery: MailDelivery;
  let upstream: OidcUpstream;
  let rp: client.Configuration;

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      env: {
        TESSERA_SMTP_URL: smtp.url,
        TESSERA_SMTP_PASSWORD: smtp.password,
        TESSERA_MAIL_FROM: 'Example <no-reply@example.com>',
        TESSERA_SIGNUP: 'open',
        TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
      },
    });
    const transport = smtpTransport({ url: smtp.url, password: smtp.password, ca: smtp.ca });
    const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const from = server.config.mail.from;
    delivery = new MailDelivery(server.store, { secret: server.secret, transport, from, interval: 0.05, now, log });
    delivery.start();
    upstream = await startOidcUpstream({
      redirectUris: ['corp', 'trusting'].map((id) => `${server.issuer}/login/upstream/${id}/callback`),
    });
    for (const [id, ...more] of [['corp'], ['trusting', '--trust-email', '--name', 'Trusting IdP']]) {
      const made = await tessera(
        server,
        ['providers', 'create', '--type', 'oidc', '--id', id!, '--issuer', upstream.issuer, '--client-id'].concat([
          upstream.clientId,
          '--client-secret-stdin',
          ...more,
        ]),
        upstream.clientSecret,
      );
      assert.equal(made.code, 0, made.out);
    }
    const c = server.clients.confidential;
    rp = await client.discovery(new URL(server.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await delivery?.stop();
    await upstream?.close();
    await server?.close();
    await smtp?.close();
  });

  /** A sign-in through `provider` for the confidential client: the ID token's claims, or the page it stopped at. */
  async function viaProvider(provider: string, browser = new Browser()) {
    const c = server.clients.confidential;
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const url = client.buildAuthorizationUrl(rp, { redirect_uri: c.redirectUri, scope: 'openid email', state, nonce });
    const { page, stoppedAt } = await browser.drive(
      url,
      (p: Page) => {
        if (p.status !== 200) return undefined;
        if (p.url.pathname === '/login')
          return { form: p.forms.find((f) => f.action === `/login/upstream/${provider}`)! };
        return p.url.pathname === '/consent' ? { form: p.forms[0]!, fields: { decision: 'allow' } } : undefined;
      },
      c.redirectUri,
    );
    if (!stoppedAt) return { page };
    const tokens = await client.authorizationCodeGrant(rp, stoppedAt, { expectedState: state, expectedNonce: nonce });
    return { claims: tokens.claims()! };
  }

  /** Someone at the provider claiming `email` without the provider verifying it: the user it makes. */
  async function claimedUnverified(email: string) {
    upstream.next = { account: { sub: `claims-${email}`, email, email_verified: false }, amr: ['pwd'] };
    const { claims } = await viaProvider('corp');
    assert.ok(claims);
    const made = (await server.store.getUserById(claims.sub))!;
    assert.equal(made.email, email, 'stored as the provider stated it');
    assert.equal(made.emailVerified, false, 'and unverified');
    return made;
  }

  async function account(username: string, email: string, emailVerified: boolean) {
    const passwordHash = await hashPassword(PASSWORD);
    return createUser(server.store, server.config, { username, email, emailVerified, passwordHash });
  }

  /** Asks a reset by `identifier` on the forgotten-password page: the user the request was recorded for. */
  async function resetFor(identifier: string): Promise<string | null> {
    const browser = new Browser();
    const page = await browser.request(`${server.issuer}/reset/request`);
    const answer = await browser.submit(page, page.forms[0]!, { identifier });
    assert.equal(answer.status, 200);
    const [event] = await server.store.listEvents({ type: 'user.password_reset_requested', limit: 1 });
    return event?.data?.sent === true ? event.userId : null;
  }

  const mailTo = (to: string, subject: RegExp, after: number) =>
    smtp.waitFor((m) => m.to.includes(to) && subject.test(m.subject) && smtp.received.indexOf(m) >= after);

  it('the owner’s reset by address reaches them, their address verified or not', async () => {
    const bob = await account('bob', 'bob@example.com', true);
    const carol = await account('carol', 'carol@example.com', false);
    await claimedUnverified('bob@example.com');
    await claimedUnverified('carol@example.com');
    assert.equal(await resetFor('bob@example.com'), bob.id);
    assert.equal(await resetFor('CAROL@example.com'), carol.id);
    // An address only a provider's unverified word gave an account names nobody.
    await claimedUnverified('nobody-here@example.com');
    assert.equal(await resetFor('nobody-here@example.com'), null);
  });

  it('signing up with the address sends its link, and the account made has it', async () => {
    await claimedUnverified('dan@example.com');
    const before = smtp.received.length;
    const browser = new Browser();
    const page = await browser.request(`${server.issuer}/signup`);
    const answer = await browser.submit(page, page.forms[0]!, {
      username: 'dan-here',
      email: 'dan@example.com',
      password: PASSWORD,
    });
    assert.equal(answer.status, 200);
    const mail = await mailTo('dan@example.com', /Finish creating/, before);
    assert.equal((await browser.request(mail.link!)).status, 200);
    const dan = await server.store.getUserByUsername('dan-here');
    assert.equal(dan?.emailVerified, true);
    assert.equal(await resetFor('dan@example.com'), dan.id);
  });

  it('an invitation at the address is resent to the invited account, not to the provider’s', async () => {
    const impostor = await claimedUnverified('erin@example.com');
    assert.equal(impostor.passwordHash, null);
    const invited = await tessera(server, ['users', 'invite', '--email', 'erin@example.com', '--username', 'erin-in']);
    assert.equal(invited.code, 0, invited.out);
    const first = await mailTo('erin@example.com', /invited/, 0);
    const before = smtp.received.indexOf(first) + 1;
    const resent = await tessera(server, ['users', 'invite', '--email', 'erin@example.com', '--resend']);
    assert.equal(resent.code, 0, resent.out);
    assert.match(resent.out, /for erin-in;/);
    const mail = await mailTo('erin@example.com', /invited/, before);
    const browser = new Browser();
    const page = await browser.request(mail.link!);
    const accepted = await browser.submit(page, page.forms[0]!, { password: PASSWORD, confirm: PASSWORD });
    assert.equal(accepted.status, 200);
    const erin = (await server.store.getUserByUsername('erin-in'))!;
    assert.equal(erin.emailVerified, true);
    assert.equal((await server.store.getUserById(impostor.id))?.passwordHash, null);
    assert.equal(await resetFor('erin@example.com'), erin.id);
  });

  it('an address change to it takes effect, and the address then names the account', async () => {
    const frank = await account('frank', 'frank-old@example.com', true);
    await claimedUnverified('frank@example.com');
    const browser = new Browser();
    const login = await browser.request(`${server.issuer}/account/login`);
    const form = login.forms.find((f) => f.action === '/account/login')!;
    assert.equal((await browser.submit(login, form, { username: 'frank', password: PASSWORD })).status, 303);
    const page = await browser.request(`${server.issuer}/account`);
    const change = page.forms.find((f) => f.action === '/account/email')!;
    const before = smtp.received.length;
    assert.equal((await browser.submit(page, change, { email: 'frank@example.com' })).status, 303);
    const mail = await mailTo('frank@example.com', /Confirm your email/, before);
    assert.equal((await browser.request(mail.link!)).status, 200);
    const changed = (await server.store.getUserById(frank.id))!;
    assert.deepEqual([changed.email, changed.emailVerified], ['frank@example.com', true]);
    assert.equal(await resetFor('frank@example.com'), frank.id);
  });

  it('the owner arriving verified through a provider trusted for emails is linked, not asked for a password', async () => {
    const gina = await account('gina', 'gina@example.com', true);
    await claimedUnverified('gina@example.com');
    upstream.next = { account: { sub: 'gina-at-trusting', email: 'gina@example.com', email_verified: true }, amr: [] };
    const { claims, page } = await viaProvider('trusting');
    assert.equal(page?.url.pathname, undefined, 'no link page');
    assert.equal(claims?.sub, gina.id);
    assert.equal((await server.store.getLink('trusting', 'gina-at-trusting'))?.userId, gina.id);

    // A reset by mail says which providers still sign her in, and records them.
    const before = smtp.received.length;
    assert.equal(await resetFor('gina@example.com'), gina.id);
    const mail = await mailTo('gina@example.com', /Reset your password/, before);
    const browser = new Browser();
    const choose = await browser.request(mail.link!);
    const fresh = 'a new passphrase for gina';
    const done = await browser.submit(choose, choose.forms[0]!, { password: fresh, confirm: fresh });
    assert.equal(done.status, 303);
    const accountPage = await browser.request(done.location!);
    assert.equal(accountPage.status, 200);
    assert.match(accountPage.body, /These still sign you in without a password: Trusting IdP\./);
    const [reset] = await server.store.listEvents({ userId: gina.id, type: 'user.password_reset', limit: 1 });
    assert.deepEqual(reset?.data?.linked_providers, ['trusting']);

    // Someone whose verified address only a provider's unverified word holds here is not sent to a
    // link page for an account they could never sign in to: they get an account of their own.
    const impostor = await claimedUnverified('hugo@example.com');
    upstream.next = { account: { sub: 'hugo-at-corp', email: 'hugo@example.com', email_verified: true }, amr: [] };
    const hugo = await viaProvider('corp');
    assert.ok(hugo.claims, `stopped at ${hugo.page?.url.pathname}`);
    assert.notEqual(hugo.claims.sub, impostor.id);
    assert.equal(hugo.claims.email_verified, true);
  });
});
