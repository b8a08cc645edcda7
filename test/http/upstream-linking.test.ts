// Linking an upstream account to an account here on the link page (/login/link), against
// node-oidc-provider and a relying party of Tessera's driven by openid-client: someone with the
// victim's password and an upstream account of their own is asked for the victim's authenticator code,
// and without it gets neither a session nor a link; the password of another account than the one the
// page named is refused; the provider's factors (trusted for mfa or not) never count while linking,
// but do through the link once it exists; an operator's resets and sign-out list the links.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { base32Decode, newTotpSecret, timeStep, totpCode } from '../../src/authn/totp/code.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { securityEvent } from '../../src/events/index.ts';
import { encryptAtRest } from '../../src/tokens/at-rest.ts';
import { PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { Browser, type Page } from '../helpers/upstream-browser.ts';
import { type Account, type OidcUpstream, startOidcUpstream, tessera } from '../helpers/upstreams.ts';

const MFA = { acr_values: 'urn:tessera:acr:mfa' };

describe('linking an upstream account proves the account here fully', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let rp: client.Configuration;

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    upstream = await startOidcUpstream({
      redirectUris: ['corp', 'partners', 'trusting'].map((id) => `${server.issuer}/login/upstream/${id}/callback`),
    });
    const create = (id: string, ...more: string[]) =>
      tessera(
        server,
        ['providers', 'create', '--type', 'oidc', '--id', id, '--issuer', upstream.issuer, '--client-id'].concat([
          upstream.clientId,
          '--client-secret-stdin',
          '--trust-upstream-mfa',
          ...more,
        ]),
        upstream.clientSecret,
      );
    assert.equal((await create('corp')).code, 0);
    assert.equal((await create('partners', '--link-only')).code, 0);
    assert.equal((await create('trusting', '--trust-email')).code, 0);
    const c = server.clients.confidential;
    rp = await client.discovery(new URL(server.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await upstream?.close();
    await server?.close();
  });

  /** A user with a password, a verified address and, with `totp`, an authenticator app: its secret. */
  async function account(username: string, options: { totp?: boolean } = {}) {
    const passwordHash = await hashPassword(PASSWORD);
    const email = `${username}@example.com`;
    const user = await createUser(server.store, server.config, { username, email, emailVerified: true, passwordHash });
    const secret = newTotpSecret();
    if (options.totp) {
      const enrolled = securityEvent('mfa.enrolled', 0, { userId: user.id, data: { method: 'totp' } });
      const secretEnc = encryptAtRest(server.secret, 'totpSecret', secret);
      const credential = { userId: user.id, secretEnc, lastStep: 0, createdAt: 0, lastUsedAt: null };
      assert.ok(await server.store.enrolTotp(credential, [], enrolled));
    }
    return { user, email, secret };
  }

  /** The app's code now; the clock then moves a step on, so that the next code is a new one. */
  function code(secret: string): string {
    const now = Math.floor(Date.now() / 1000) + server.clock.offset;
    const typed = totpCode(base32Decode(secret)!, timeStep(now));
    server.clock.offset += 30;
    return typed;
  }

  const person = (sub: string, more: Partial<Account> = {}, amr = ['pwd', 'otp', 'mfa']) => {
    upstream.next = { account: { sub, ...more }, amr };
  };

  /** The confidential client's request, through the provider's button, to the page where it stopped. */
  async function authorize(provider: string, params: Record<string, string> = {}, browser = new Browser()) {
    const c = server.clients.confidential;
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const url = client.buildAuthorizationUrl(rp, {
      redirect_uri: c.redirectUri,
      scope: 'openid',
      state,
      nonce,
      ...params,
    });
    const act = (page: Page) => {
      if (page.status !== 200) return undefined;
      if (page.url.pathname === '/login') {
        const form = page.forms.find((f) => f.action === `/login/upstream/${provider}`);
        return form && { form };
      }
      return consent(page);
    };
    const { page, stoppedAt } = await browser.drive(url, act, c.redirectUri);
    /** From `from` (or where the request stopped) on to the client: its ID token's claims, or the error. */
    const finish = async (from?: URL) => {
      const at = from ? (await browser.drive(from, consent, c.redirectUri)).stoppedAt : stoppedAt;
      assert.ok(at, 'the request got back to the client');
      if (at.searchParams.has('error')) return { error: at.searchParams.get('error')! };
      const tokens = await client.authorizationCodeGrant(rp, at, { expectedState: state, expectedNonce: nonce });
      return { claims: tokens.claims()! };
    };
    return { page, browser, finish };
  }

  const consent = (p: Page) =>
    p.url.pathname === '/consent' && p.status === 200
      ? { form: p.forms[0]!, fields: { decision: 'allow' } }
      : undefined;

  /** The first form of a page of the sign-in (the link page, a step's page), submitted. */
  const submit = (browser: Browser, page: Page, fields: Record<string, string>) =>
    browser.submit(page, page.forms[0]!, fields);

  const sessionsOf = async (userId: string) =>
    (await server.store.listSessionsOf(userId, Math.floor(Date.now() / 1000) + server.clock.offset)).length;
  const typesOf = async (userId: string) => (await server.store.listEvents({ userId, limit: 50 })).map((e) => e.type);

  it('asks the victim’s authenticator code after their password; without it, no session and no link', async () => {
    const victim = await account('victim', { totp: true });
    person('attacker-at-partners', { email: 'attacker@partners.example', email_verified: true });
    const { page, browser } = await authorize('partners', MFA);
    assert.equal(page?.url.pathname, '/login/link');
    const answer = await submit(browser, page, { username: 'victim', password: PASSWORD });
    assert.equal(answer.status, 303);
    assert.equal(answer.location?.pathname, '/login/totp', 'the victim’s own second factor is asked');
    assert.equal(await server.store.getLink('partners', 'attacker-at-partners'), undefined);
    assert.equal(await sessionsOf(victim.user.id), 0);

    // A wrong code: still nothing. Then the sign-in is left there.
    const codePage = await browser.request(answer.location!);
    assert.equal(codePage.status, 200);
    const right = code(victim.secret);
    const wrong = await submit(browser, codePage, { code: right === '000000' ? '111111' : '000000' });
    assert.notEqual(wrong.status, 303);
    assert.equal(await server.store.getLink('partners', 'attacker-at-partners'), undefined);
    assert.equal(await sessionsOf(victim.user.id), 0);
    const types = await typesOf(victim.user.id);
    assert.ok(!types.includes('user.upstream_linked') && !types.includes('user.signed_in'), types.join(' '));

    // The provider alone still signs nobody in as the victim: the link page again.
    assert.equal((await authorize('partners')).page?.url.pathname, '/login/link');
  });

  it('links when the owner gives their code too, with the session; only the account’s factors count', async () => {
    const owner = await account('owner', { totp: true });
    person('owner-at-partners', { email: 'owner@partners.example', email_verified: true });
    const { page, browser, finish } = await authorize('partners', MFA);
    const answer = await submit(browser, page!, { username: 'owner', password: PASSWORD });
    assert.equal(answer.location?.pathname, '/login/totp');
    const done = await submit(browser, await browser.request(answer.location!), { code: code(owner.secret) });
    assert.equal(done.status, 303);
    const link = await server.store.getLink('partners', 'owner-at-partners');
    assert.equal(link?.userId, owner.user.id);
    assert.equal(link.lastUsedAt, link.createdAt);
    assert.equal(await sessionsOf(owner.user.id), 1);
    const [linked] = await server.store.listEvents({ userId: owner.user.id, type: 'user.upstream_linked', limit: 1 });
    assert.deepEqual(linked?.data, { provider: 'partners', subject: 'owner-at-partners', by: 'sign_in' });
    const { claims } = await finish(done.location);
    assert.deepEqual(new Set(claims?.amr as string[]), new Set(['pwd', 'otp', 'mfa']));

    // The account page: the provider, when it was linked and when last used.
    const accountPage = await browser.request(`${server.issuer}/account`);
    assert.match(accountPage.body, /Linked [^<]+<\/p>\s*<p class="muted">Last used /);
  });

  it('counts a provider trusted for mfa as one factor while linking, and as two through the link after', async () => {
    await account('plain');
    person('plain-at-partners', { email: 'plain@partners.example', email_verified: true });
    const linking = await authorize('partners', MFA);
    assert.equal(linking.page?.url.pathname, '/login/link');
    const answer = await submit(linking.browser, linking.page, { username: 'plain', password: PASSWORD });
    // The password is all the account has: it is not two factors, whatever the provider said.
    assert.deepEqual(await linking.finish(answer.location), { error: 'unmet_authentication_requirements' });
    const plain = await server.store.getUserByUsername('plain');
    assert.equal((await server.store.getLink('partners', 'plain-at-partners'))?.userId, plain!.id);

    // Through the link that now exists, the provider's mfa counts (--trust-upstream-mfa).
    const through = await (await authorize('partners', MFA)).finish();
    assert.equal(through.claims?.sub, plain!.id);
    assert.equal(through.claims?.acr, 'urn:tessera:acr:mfa');
    assert.deepEqual(new Set(through.claims?.amr as string[]), new Set(['fed', 'pwd', 'otp', 'mfa']));
  });

  it('links by a trusted email only once the account’s own second factor is given too', async () => {
    const ivy = await account('ivy', { totp: true });
    person('ivy-at-trusting', { email: ivy.email, email_verified: true });
    const { page, browser, finish } = await authorize('trusting', MFA);
    // No password (the operator trusts the provider's emails), but the account's app is asked for.
    assert.equal(page?.url.pathname, '/login/totp');
    assert.equal(await server.store.getLink('trusting', 'ivy-at-trusting'), undefined);
    const done = await submit(browser, page, { code: code(ivy.secret) });
    assert.equal((await server.store.getLink('trusting', 'ivy-at-trusting'))?.userId, ivy.user.id);
    const [linked] = await server.store.listEvents({ userId: ivy.user.id, type: 'user.upstream_linked', limit: 1 });
    assert.equal(linked?.data?.by, 'verified_email');
    const { claims } = await finish(done.location);
    assert.deepEqual(new Set(claims?.amr as string[]), new Set(['fed', 'otp', 'mfa']));
  });

  it('refuses the password of another account than the one with the address the page named', async () => {
    const named = await account('named');
    const other = await account('other');
    person('someone-at-corp', { email: named.email, email_verified: true });
    const { page, browser, finish } = await authorize('corp');
    assert.equal(page?.url.pathname, '/login/link');
    assert.match(page.body, /An account here has the email address <strong>named@example.com<\/strong>/);
    const refused = await submit(browser, page, { username: 'other', password: PASSWORD });
    assert.equal(refused.status, 403);
    assert.match(refused.body, /That is not the account with the address <strong>named@example.com<\/strong>/);
    assert.equal(await server.store.getLink('corp', 'someone-at-corp'), undefined);
    assert.equal(await sessionsOf(other.user.id), 0);

    const answer = await submit(browser, refused, { username: 'named', password: PASSWORD });
    const { claims } = await finish(answer.location);
    assert.equal(claims?.sub, named.user.id);
    assert.deepEqual(claims?.amr, ['pwd']);
    assert.equal((await server.store.getLink('corp', 'someone-at-corp'))?.userId, named.user.id);
  });

  it('lists the links in what an operator’s reset and sign-out say and record', async () => {
    const { user } = await account('helped');
    person('helped-at-corp', { email: 'helped@example.com', email_verified: true });
    const { page, browser, finish } = await authorize('corp');
    assert.ok(
      (await finish((await submit(browser, page!, { username: 'helped', password: PASSWORD })).location)).claims,
    );
    const line = /1 linked provider\(s\) still sign helped in, without the password: corp \(helped-at-corp\)/;
    const commands: Array<[string[], 'user.signed_out' | 'mfa.reset' | 'user.password_changed', string]> = [
      [['users', 'sign-out', 'helped'], 'user.signed_out', ''],
      [['users', 'mfa', 'reset', 'helped'], 'mfa.reset', ''],
      [['users', 'set-password', 'helped', '--password-stdin'], 'user.password_changed', 'another long passphrase'],
    ];
    for (const [args, type, stdin] of commands) {
      const done = await tessera(server, args, stdin);
      assert.equal(done.code, 0, done.out);
      assert.match(done.out, line, args.join(' '));
      const [event] = await server.store.listEvents({ userId: user.id, type, limit: 1 });
      assert.deepEqual(event?.data?.linked_providers, ['corp'], type);
    }
    const unlinked = await tessera(server, ['users', 'unlink', 'helped', 'corp']);
    assert.equal(unlinked.code, 0, unlinked.out);
    assert.equal(await server.store.getLink('corp', 'helped-at-corp'), undefined);
    assert.doesNotMatch((await tessera(server, ['users', 'mfa', 'reset', 'helped'])).out, /linked provider/);
  });
});
