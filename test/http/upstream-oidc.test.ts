// Signing in through an upstream OpenID Connect provider: node-oidc-provider, configured with
// `tessera providers create`, and a relying party of Tessera's driven by openid-client. A first sign-in
// makes a user, the next signs the same user in, and Tessera's tokens carry Tessera's own `sub`; an
// email links accounts only when verified and trusted, or when the person proves the account; the
// provider's errors and a deleted provider give pages with the way back to local sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { startServer, type TestServer } from '../helpers/server.ts';
import { Browser, type Page } from '../helpers/upstream-browser.ts';
import { type Account, type OidcUpstream, startOidcUpstream, tessera } from '../helpers/upstreams.ts';

describe('upstream OpenID Connect providers', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let rp: client.Configuration;
  const callback = (id: string) => `${server.issuer}/login/upstream/${id}/callback`;

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    upstream = await startOidcUpstream({
      redirectUris: ['corp', 'trusting', 'partners', 'gone'].map(
        (id) => `${server.issuer}/login/upstream/${id}/callback`,
      ),
    });
    const create = (id: string, name: string, ...more: string[]) =>
      tessera(
        server,
        ['providers', 'create', '--type', 'oidc', '--id', id, '--name', name, '--issuer', upstream.issuer].concat([
          '--client-id',
          upstream.clientId,
          '--client-secret-stdin',
          ...more,
        ]),
        `${upstream.clientSecret}\n`,
      );
    const made = await create('corp', 'Corp SSO', '--login-hint-domain', 'corp.example');
    assert.equal(made.code, 0, made.out);
    assert.match(made.out, new RegExp(`Register this redirect URI at the provider: ${callback('corp')}`));
    assert.equal((await create('trusting', 'Trusting IdP', '--trust-email', '--trust-upstream-mfa')).code, 0);
    assert.equal((await create('partners', 'Partners', '--link-only')).code, 0);
    const c = server.clients.confidential;
    const basic = client.ClientSecretBasic(c.secret!);
    rp = await client.discovery(new URL(server.issuer), c.id, c.secret!, basic, {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await upstream?.close();
    await server?.close();
  });

  interface FlowOptions {
    /** The provider whose button to press on the sign-in page (none: the page is where it stops). */
    provider?: string;
    params?: Record<string, string>;
    /** Credentials for the link page, if it comes. */
    link?: { username: string; password: string };
    browser?: Browser;
  }

  /** An authorization request of the confidential client, through the pages, to its tokens or the page it stopped at. */
  async function authorize(options: FlowOptions) {
    const c = server.clients.confidential;
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const url = client.buildAuthorizationUrl(rp, {
      redirect_uri: c.redirectUri,
      scope: 'openid profile email',
      state,
      nonce,
      ...options.params,
    });
    const browser = options.browser ?? new Browser();
    const { page, stoppedAt } = await browser.drive(
      url,
      (page: Page) => {
        if (page.status !== 200) return undefined;
        if (page.url.pathname === '/login' && options.provider) {
          const form = page.forms.find((f) => f.action === `/login/upstream/${options.provider}`);
          return form && { form };
        }
        if (page.url.pathname === '/consent') return { form: page.forms[0]!, fields: { decision: 'allow' } };
        if (page.url.pathname === '/login/link' && options.link) return { form: page.forms[0]!, fields: options.link };
        return undefined;
      },
      c.redirectUri,
    );
    if (!stoppedAt) return { page: page!, browser };
    if (stoppedAt.searchParams.has('error')) return { error: stoppedAt.searchParams.get('error')!, browser };
    const tokens = await client.authorizationCodeGrant(rp, stoppedAt, { expectedState: state, expectedNonce: nonce });
    return { tokens, claims: tokens.claims()!, browser };
  }

  const person = (sub: string, more: Partial<Account> = {}, amr = ['pwd']) => {
    upstream.next = { account: { sub, ...more }, amr };
  };

  it('shows a button per provider on the sign-in page, its name only', async () => {
    const { page } = await authorize({});
    assert.ok(page);
    for (const [id, name] of [
      ['corp', 'Corp SSO'],
      ['trusting', 'Trusting IdP'],
      ['partners', 'Partners'],
    ]) {
      assert.ok(page.forms.some((f) => f.action === `/login/upstream/${id}` && f.fields.csrf && f.fields.interaction));
      assert.match(page.body, new RegExp(`Sign in with ${name}</button>`));
    }
    assert.doesNotMatch(page.body, /<img/);
    const shown = await tessera(server, ['providers', 'show', 'corp']);
    assert.match(shown.out, new RegExp(`callback_uri +${callback('corp')}`));
    assert.doesNotMatch(shown.out, new RegExp(upstream.clientSecret));
  });

  it('keeps the buttons on the sign-in page that refuses throttled passwords', async () => {
    const { page, browser } = await authorize({});
    const form = page!.forms.find((f) => f.action === '/login')!;
    let answer = page!;
    for (let i = 0; i < 12 && answer.status !== 429; i++)
      answer = await browser.submit(page!, form, { username: 'someone-guessed', password: 'not the password' });
    assert.equal(answer.status, 429);
    assert.ok(answer.forms.some((f) => f.action === '/login/upstream/corp' && f.fields.csrf && f.fields.interaction));
    assert.match(answer.body, /Sign in with Corp SSO<\/button>/);
  });

  it('makes a user at the first sign-in, signs the same user in the next time, with Tessera’s sub', async () => {
    person('carol-at-corp', {
      preferred_username: 'carol',
      name: 'Carol Corp',
      email: 'carol@corp.example',
      email_verified: true,
    });
    const first = await authorize({ provider: 'corp' });
    assert.ok(first.claims, JSON.stringify(first.page?.body));
    const made = await server.store.getUserByUsername('carol');
    assert.ok(made);
    assert.equal(first.claims.sub, made.id);
    assert.notEqual(first.claims.sub, 'carol-at-corp');
    assert.deepEqual(first.claims.amr, ['fed']);
    assert.equal(first.claims.acr, 'urn:tessera:acr:sfa');
    assert.equal(first.claims.email, 'carol@corp.example');
    assert.equal(first.claims.email_verified, true);
    assert.equal(first.claims.name, 'Carol Corp');
    assert.equal(made.passwordHash, null);
    const access = await client.fetchUserInfo(rp, first.tokens.access_token, made.id);
    assert.equal(access.preferred_username, 'carol');

    const users = (await server.store.listUsers()).length;
    const second = await authorize({ provider: 'corp' });
    assert.equal(second.claims?.sub, made.id);
    assert.equal((await server.store.listUsers()).length, users);

    const types: string[] = (await server.store.listEvents({ userId: made.id, limit: 20 })).map((e) => e.type);
    for (const type of ['user.created', 'user.upstream_linked', 'user.upstream_signed_in', 'user.signed_in']) {
      assert.ok(types.includes(type), `${type} in ${types.join(' ')}`);
    }
    const linkedBy = (await server.store.listEvents({ userId: made.id, type: 'user.upstream_linked', limit: 1 }))[0];
    assert.deepEqual(linkedBy?.data, { provider: 'corp', subject: 'carol-at-corp', by: 'first_sign_in' });

    // The operator sees the link: provider, the person's subject there, when linked and last used.
    const shown = await tessera(server, ['users', 'show', 'carol', '--json']);
    assert.equal(shown.code, 0, shown.out);
    const [link, ...others] = JSON.parse(shown.out).linked_providers;
    assert.deepEqual(others, []);
    assert.equal(link.provider, 'corp');
    assert.equal(link.subject, 'carol-at-corp');
    assert.ok(link.linked_at && link.last_used_at, shown.out);
    const text = await tessera(server, ['users', 'show', 'carol']);
    assert.match(text.out, /^providers +1$/m);
    assert.match(text.out, /^ {2}corp {2}carol-at-corp {2}\(linked .+, last used .+\)$/m);
  });

  it('makes the username unique, and keeps an unverified email unverified', async () => {
    person('another-alice', { preferred_username: 'alice', email: 'alice@elsewhere.example', email_verified: false });
    const { claims } = await authorize({ provider: 'corp' });
    const made = await server.store.getUserById(claims!.sub);
    assert.equal(made?.username, 'alice-2');
    assert.equal(made?.emailVerified, false);
    assert.notEqual(claims!.sub, server.user.id);
  });

  it('makes a user of a person whose provider shares no email, and releases none', async () => {
    person('anonymous-7');
    const { claims } = await authorize({ provider: 'corp' });
    assert.ok(claims);
    const made = await server.store.getUserById(claims.sub);
    assert.equal(made?.username, 'corp-anonymous-7');
    assert.equal(claims.email, undefined);
    assert.equal(claims.email_verified, undefined);
  });

  it('never links a second upstream account by an unverified email, even from a provider trusted for emails', async () => {
    person('dave-1', { preferred_username: 'dave', email: 'dave@example.org', email_verified: true });
    const dave = (await authorize({ provider: 'trusting' })).claims!;
    for (const provider of ['trusting', 'corp']) {
      person(`impostor-at-${provider}`, {
        preferred_username: 'dave',
        email: 'dave@example.org',
        email_verified: false,
      });
      const impostor = (await authorize({ provider })).claims;
      assert.ok(impostor, provider);
      assert.notEqual(impostor.sub, dave.sub);
      assert.equal(impostor.email_verified, false);
    }
    assert.deepEqual(
      (await server.store.listLinks(dave.sub)).map((l) => l.subject),
      ['dave-1'],
    );
  });

  it('links by a verified email to the one user with it verified, when the provider is trusted for emails', async () => {
    person('alice-at-trusting', { email: 'ALICE@example.com', email_verified: true });
    const { claims } = await authorize({ provider: 'trusting' });
    assert.equal(claims?.sub, server.user.id);
    const [event] = await server.store.listEvents({ userId: server.user.id, type: 'user.upstream_linked', limit: 1 });
    assert.equal(event?.data?.by, 'verified_email');
  });

  it('asks a person whose verified email an account has to sign in to it, and links it then', async () => {
    person('alice-at-corp', { email: 'alice@example.com', email_verified: true });
    const { page, browser } = await authorize({ provider: 'corp' });
    assert.equal(page?.url.pathname, '/login/link');
    assert.match(page.body, /An account here has the email address <strong>alice@example.com<\/strong>/);
    assert.equal(await server.store.getLink('corp', 'alice-at-corp'), undefined);
    const form = page.forms[0]!;
    const wrong = await browser.submit(page, form, { username: 'alice', password: 'not the password' });
    assert.equal(wrong.status, 303);
    const again = await browser.request(wrong.location!);
    assert.match(again.body, /Incorrect username or password/);
    assert.equal(await server.store.getLink('corp', 'alice-at-corp'), undefined);

    const { stoppedAt } = await browser.drive(
      (await browser.submit(again, again.forms[0]!, { username: 'alice', password: server.user.password })).location!,
      (p) => (p.url.pathname === '/consent' ? { form: p.forms[0]!, fields: { decision: 'allow' } } : undefined),
      server.clients.confidential.redirectUri,
    );
    assert.ok(stoppedAt?.searchParams.get('code'));
    assert.equal((await server.store.getLink('corp', 'alice-at-corp'))?.userId, server.user.id);
    // From now on the provider alone signs alice in.
    assert.equal((await authorize({ provider: 'corp' })).claims?.sub, server.user.id);
  });

  it('makes no user for a provider that only links, and offers local sign-in instead', async () => {
    person('newcomer', { preferred_username: 'newcomer', email: 'newcomer@partners.example', email_verified: true });
    const { page, browser } = await authorize({ provider: 'partners' });
    assert.equal(page?.url.pathname, '/login/link');
    assert.match(page.body, /Your Partners account is not linked to an account here/);
    assert.equal(await server.store.getUserByUsername('newcomer'), undefined);
    const back = /<a href="([^"]*local=1)">Sign in another way<\/a>/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(back);
    const local = await browser.request(new URL(back, server.issuer));
    assert.equal(local.status, 200);
    assert.ok(local.forms.some((f) => f.action === '/login'));
  });

  it('counts a provider’s mfa as two factors only when trusted for it; the second-factor policy applies otherwise', async () => {
    person('erin', { preferred_username: 'erin', email: 'erin@example.net', email_verified: true }, [
      'pwd',
      'otp',
      'mfa',
    ]);
    const mfa = { acr_values: 'urn:tessera:acr:mfa' };
    const trusted = await authorize({ provider: 'trusting', params: mfa });
    assert.deepEqual(new Set(trusted.claims?.amr as string[]), new Set(['fed', 'pwd', 'otp', 'mfa']));
    assert.equal(trusted.claims?.acr, 'urn:tessera:acr:mfa');

    person('erin-at-corp', { preferred_username: 'erin', email: 'erin@corp.example', email_verified: false }, [
      'pwd',
      'otp',
      'mfa',
    ]);
    const untrusted = await authorize({ provider: 'corp', params: mfa });
    assert.equal(untrusted.error, 'unmet_authentication_requirements');
    const plain = await authorize({ provider: 'corp', browser: untrusted.browser });
    assert.deepEqual(plain.claims?.amr, ['fed']);
  });

  it('goes straight to a provider for idp_hint or a login_hint of its domain, passing on login_hint and prompt', async () => {
    person('frank', { preferred_username: 'frank', email: 'frank@corp.example', email_verified: true });
    const hints: Array<Record<string, string>> = [
      { idp_hint: 'corp' },
      { login_hint: 'frank@corp.example', prompt: 'login' },
    ];
    for (const params of hints) {
      const browser = new Browser();
      const c = server.clients.confidential;
      const url = client.buildAuthorizationUrl(rp, { redirect_uri: c.redirectUri, scope: 'openid', ...params });
      const login = await browser.request((await browser.request(url)).location!);
      assert.equal(login.status, 302, login.body);
      assert.ok(login.location?.href.startsWith(`${upstream.issuer}/auth?`), login.location?.href);
      const asked = login.location!.searchParams;
      assert.equal(asked.get('code_challenge_method'), 'S256');
      assert.ok(asked.get('nonce') && asked.get('state') && asked.get('code_challenge'));
      if ('login_hint' in params) {
        assert.equal(asked.get('login_hint'), 'frank@corp.example');
        assert.equal(asked.get('prompt'), 'login');
      }
    }
    // An unknown hint is only a hint: the sign-in page, with every way in.
    const { page } = await authorize({ params: { idp_hint: 'nope', login_hint: 'x@elsewhere.example' } });
    assert.equal(page?.status, 200);
    assert.ok(page.forms.some((f) => f.action === '/login'));
  });

  it('shows the provider’s error with the way back to local sign-in, where a password still works', async () => {
    upstream.next = {
      account: { sub: 'whoever' },
      amr: [],
      deny: { error: 'access_denied', error_description: 'the person said no' },
    };
    const { page, browser } = await authorize({ provider: 'corp' });
    assert.equal(page?.status, 400);
    assert.match(page.body, /Signing in with Corp SSO was cancelled/);
    const back = /<a href="([^"]*)">Sign in another way<\/a>/.exec(page.body)![1]!.replace(/&amp;/g, '&');
    const local = await browser.request(new URL(back, server.issuer));
    const form = local.forms.find((f) => f.action === '/login')!;
    const { stoppedAt } = await browser.drive(
      (await browser.submit(local, form, { username: 'alice', password: server.user.password })).location!,
      (p) => (p.url.pathname === '/consent' ? { form: p.forms[0]!, fields: { decision: 'allow' } } : undefined),
      server.clients.confidential.redirectUri,
    );
    assert.ok(stoppedAt?.searchParams.get('code'));
    const [failed] = await server.store.listEvents({ type: 'user.upstream_sign_in_failed', limit: 1 });
    assert.deepEqual(failed?.data, { provider: 'corp', reason: 'provider_error', error: 'access_denied' });
    const metrics = await (await fetch(`${server.issuer}/metrics`)).text();
    assert.match(metrics, /tessera_upstream_failures_total\{provider="corp",reason="provider_error"\} [1-9]/);
    assert.match(metrics, /tessera_upstream_request_duration_seconds_count\{provider="corp"\} [1-9]/);
  });

  it('links and unlinks on the account page only on a recent sign-in', async () => {
    const browser = new Browser();
    const login = await browser.request(`${server.issuer}/account/login`);
    const form = login.forms.find((f) => f.action === '/account/login')!;
    const signed = await browser.submit(login, form, { username: 'alice', password: server.user.password });
    assert.equal(signed.location?.pathname, '/account');
    const page = await browser.request(`${server.issuer}/account`);
    const link = page.forms.find((f) => f.action === '/account/upstream/link' && f.fields.provider === 'partners')!;
    const unlink = { action: '/account/upstream/unlink', fields: { csrf: link.fields.csrf!, provider: 'corp' } };
    server.clock.offset += 600;
    try {
      for (const stale of [link, unlink]) {
        const answered = await browser.submit(page, stale);
        assert.equal(answered.location?.href, `${server.issuer}/account/login?reauth=1`);
      }
    } finally {
      server.clock.offset -= 600;
    }
    assert.ok((await browser.submit(page, link)).location?.href.startsWith(upstream.issuer));
  });

  it('stops a deleted provider’s button and its flows, links included', async () => {
    const made = await tessera(
      server,
      ['providers', 'create', '--type', 'oidc', '--id', 'gone', '--issuer', upstream.issuer].concat([
        '--client-id',
        upstream.clientId,
        '--client-secret-stdin',
      ]),
      upstream.clientSecret,
    );
    assert.equal(made.code, 0, made.out);
    person('grace', { preferred_username: 'grace', email: 'grace@example.net', email_verified: true });
    const grace = (await authorize({ provider: 'gone' })).claims!;
    assert.equal((await server.store.listLinks(grace.sub)).length, 1);

    // A flow under way at the provider when the provider is deleted.
    const browser = new Browser();
    const c = server.clients.confidential;
    const url = client.buildAuthorizationUrl(rp, { redirect_uri: c.redirectUri, scope: 'openid', idp_hint: 'gone' });
    const toProvider = await browser.request((await browser.request(url)).location!);
    assert.ok(toProvider.location?.href.startsWith(upstream.issuer));
    const deleted = await tessera(server, ['providers', 'delete', 'gone']);
    assert.equal(deleted.code, 0, deleted.out);
    assert.match(deleted.out, /1 linked account/);
    const { page } = await browser.drive(toProvider.location!, () => undefined);
    assert.equal(page?.status, 404);
    assert.match(page.body, /This way of signing in is not available/);
    assert.equal(await server.store.getLink('gone', 'grace'), undefined);

    const { page: login, browser: other } = await authorize({});
    assert.ok(login && !login.forms.some((f) => f.action === '/login/upstream/gone'));
    assert.doesNotMatch(login.body, /gone/);
    // The button of a page shown before the deletion.
    const [form] = login.forms;
    const pressed = await other.submit(login, { ...form!, action: '/login/upstream/gone' });
    assert.equal(pressed.status, 404);
    assert.match(pressed.body, /This way of signing in is not available/);
    assert.equal((await tessera(server, ['providers', 'show', 'gone'])).code, 1);
  });
});

describe('TESSERA_DEFAULT_PROVIDER', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true', TESSERA_DEFAULT_PROVIDER: 'corp' } });
    upstream = await startOidcUpstream({ redirectUris: [`${server.issuer}/login/upstream/corp/callback`] });
    const args = ['providers', 'create', '--type', 'oidc', '--id', 'corp', '--issuer', upstream.issuer];
    const made = await tessera(
      server,
      [...args, '--client-id', upstream.clientId, '--client-secret-stdin'],
      upstream.clientSecret,
    );
    assert.equal(made.code, 0, made.out);
  });
  after(async () => {
    await upstream?.close();
    await server?.close();
  });

  it('sends every sign-in page to the provider, and local=1 back to the local one', async () => {
    const c = server.clients.confidential;
    const browser = new Browser();
    const authorization = `${server.issuer}/oauth2/authorize?${new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 's',
    })}`;
    const login = (await browser.request(authorization)).location!;
    const sent = await browser.request(login);
    assert.equal(sent.status, 302);
    assert.ok(sent.location?.href.startsWith(upstream.issuer));
    const local = await browser.request(`${login.href}&local=1`);
    assert.equal(local.status, 200);
    assert.ok(local.forms.some((f) => f.action === '/login'));
    const account = await browser.request(`${server.issuer}/account/login`);
    assert.ok(account.location?.href.startsWith(upstream.issuer));
    assert.equal((await browser.request(`${server.issuer}/account/login?local=1`)).status, 200);
  });
});
