// An upstream provider that lies or does not answer. A proxy in front of node-oidc-provider alters the
// ID token of its token answers: its payload with the signature kept (what openid-client accepts
// unless asked to check signatures), a signature by a key the provider does not publish, and claims
// (nonce, iss, aud, exp) changed and signed again with the provider's own key: each is refused, and
// nobody is signed in. A provider that does not answer gives a page within 10 seconds, at the
// redirect or at the callback, while local sign-in keeps working.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, freePort, type TestServer } from '../helpers/server.ts';
import { Browser, type Page } from '../helpers/upstream-browser.ts';
import {
  type OidcUpstream,
  startOidcUpstream,
  startSilentServer,
  startTamperingProxy,
  type Tampering,
  type TamperingProxy,
  tessera,
} from '../helpers/upstreams.ts';

describe('a tampered or unavailable upstream provider', () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let proxy: TamperingProxy;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;

  const create = async (id: string, issuer: string, clientId: string, clientSecret: string, ...more: string[]) => {
    const args = ['providers', 'create', '--type', 'oidc', '--id', id, '--issuer', issuer, '--client-id', clientId];
    const made = await tessera(server, [...args, '--client-secret-stdin', ...more], clientSecret);
    assert.equal(made.code, 0, made.out);
  };

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    // The proxy owns the issuer's address; the provider listens behind it.
    const [front, back] = [await freePort(), await freePort()];
    upstream = await startOidcUpstream({
      redirectUris: [`${server.issuer}/login/upstream/corp/callback`],
      issuer: `http://localhost:${front}`,
      port: back,
    });
    proxy = await startTamperingProxy(front, `http://127.0.0.1:${back}`, upstream);
    await create('corp', upstream.issuer, upstream.clientId, upstream.clientSecret);
    silent = await startSilentServer();
    await create('silent', silent.url, 'tessera', 'secret', '--no-check');
    const refused = await freePort();
    await create('refused', `http://localhost:${refused}`, 'tessera', 'secret', '--no-check');
  });
  after(async () => {
    await proxy?.close();
    await upstream?.close();
    await silent?.close();
    await server?.close();
  });

  /** The sign-in page of a new authorization request of the confidential client, in `browser`. */
  async function signInPage(browser: Browser): Promise<Page> {
    const c = server.clients.confidential;
    const query = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid profile email',
      state: 'xyz',
      nonce: 'n-0S6_WzA2Mj',
    });
    const first = await browser.request(`${server.issuer}/oauth2/authorize?${query}`);
    const page = await browser.request(first.location!);
    assert.equal(page.status, 200);
    return page;
  }

  /** Presses `provider`'s button and follows the flow; the page it ends on, or the client's callback. */
  async function pressButton(browser: Browser, provider: string) {
    const page = await signInPage(browser);
    const form = page.forms.find((f) => f.action === `/login/upstream/${provider}`)!;
    const pressed = await browser.submit(page, form);
    if (!pressed.location) return { page: pressed, stoppedAt: undefined };
    const { page: last, stoppedAt } = await browser.drive(
      pressed.location,
      (p) => (p.url.pathname === '/consent' ? { form: p.forms[0]!, fields: { decision: 'allow' } } : undefined),
      server.clients.confidential.redirectUri,
    );
    return { page: last, stoppedAt };
  }

  /** Signs alice in with her password from the sign-in page's local form: the client's callback URL. */
  async function localSignIn(browser: Browser, from?: Page): Promise<URL | undefined> {
    const page = from ?? (await signInPage(browser));
    const form = page.forms.find((f) => f.action === '/login')!;
    const sent = await browser.submit(page, form, { username: 'alice', password: server.user.password });
    const { stoppedAt } = await browser.drive(
      sent.location!,
      (p) => (p.url.pathname === '/consent' ? { form: p.forms[0]!, fields: { decision: 'allow' } } : undefined),
      server.clients.confidential.redirectUri,
    );
    return stoppedAt;
  }

  it('signs in through the proxy while it alters nothing', async () => {
    proxy.mode.tampering = 'none';
    upstream.next = { account: { sub: 'honest', email: 'honest@corp.example', email_verified: true }, amr: ['pwd'] };
    const { stoppedAt } = await pressButton(new Browser(), 'corp');
    assert.ok(stoppedAt?.searchParams.get('code'));
    assert.ok(await server.store.getLink('corp', 'honest'));
  });

  it('refuses an ID token whose payload was changed to name someone else, its signature kept', async () => {
    // Without a check of the signature this signs mallory in as the victim, whose link exists.
    proxy.mode.tampering = 'none';
    upstream.next = { account: { sub: 'victim', email: 'victim@corp.example', email_verified: true }, amr: ['pwd'] };
    assert.ok((await pressButton(new Browser(), 'corp')).stoppedAt?.searchParams.get('code'));
    proxy.mode.tampering = { payload: { sub: 'victim' } };
    upstream.next = { account: { sub: 'mallory' }, amr: ['pwd'] };
    const browser = new Browser();
    const { page, stoppedAt } = await pressButton(browser, 'corp');
    assert.equal(stoppedAt, undefined);
    assert.equal(page?.status, 502);
    assert.equal(browser.jar('127.0.0.1').has('tessera_session'), false);
    const [failed] = await server.store.listEvents({ type: 'user.upstream_sign_in_failed', limit: 1 });
    assert.deepEqual(failed?.data, { provider: 'corp', reason: 'invalid_response' });
  });

  const tamperings: Array<[string, Tampering]> = [
    ['a signature by a key the provider does not publish', 'foreign-key'],
    ['another nonce, signed by the provider’s key', { claim: 'nonce', value: 'not-this-sign-in' }],
    ['another issuer, signed by the provider’s key', { claim: 'iss', value: 'http://localhost:1' }],
    ['another audience, signed by the provider’s key', { claim: 'aud', value: 'someone-else' }],
    ['an expiry past, signed by the provider’s key', { claim: 'exp', value: 1_000_000_000 }],
  ];
  for (const [what, tampering] of tamperings) {
    it(`refuses an ID token with ${what}`, async () => {
      proxy.mode.tampering = tampering;
      const sub = `victim-${tamperings.findIndex(([w]) => w === what)}`;
      upstream.next = { account: { sub, email: `${sub}@corp.example`, email_verified: true }, amr: ['pwd'] };
      const browser = new Browser();
      const { page, stoppedAt } = await pressButton(browser, 'corp');
      assert.equal(stoppedAt, undefined);
      assert.equal(page?.status, 502);
      assert.match(page.body, /answer could not be verified/);
      assert.match(page.body, /Sign in another way/);
      assert.equal(await server.store.getLink('corp', sub), undefined);
      assert.equal(browser.jar('127.0.0.1').has('tessera_session'), false);
      const [failed] = await server.store.listEvents({ type: 'user.upstream_sign_in_failed', limit: 1 });
      assert.deepEqual(failed?.data, { provider: 'corp', reason: 'invalid_response' });
    });
  }

  it('gives a page within 10 s when a provider does not answer, while local sign-in goes on', async () => {
    const browser = new Browser();
    const page = await signInPage(browser);
    const started = performance.now();
    const pressed = browser.submit(
      page,
      page.forms.find((f) => f.action === '/login/upstream/silent')!,
    );
    // Meanwhile someone signs in with a password, and is not kept waiting.
    const local = performance.now();
    assert.ok((await localSignIn(new Browser()))?.searchParams.get('code'));
    assert.ok(performance.now() - local < 5000);
    const answered = await pressed;
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 10_000, `answered after ${elapsed} ms`);
    assert.equal(answered.status, 503);
    assert.match(answered.body, /did not answer/);
    // Its way back leads to the local form of the same request, which signs in.
    const back = /<a href="([^"]*)">Sign in another way<\/a>/.exec(answered.body)![1]!.replace(/&amp;/g, '&');
    const localPage = await browser.request(new URL(back, server.issuer));
    assert.ok((await localSignIn(browser, localPage))?.searchParams.get('code'));
  });

  it('gives a page within 10 s when the token endpoint does not answer', async () => {
    proxy.mode.tampering = 'hang';
    upstream.next = { account: { sub: 'patient' }, amr: ['pwd'] };
    const browser = new Browser();
    const page = await signInPage(browser);
    const toProvider = await browser.submit(
      page,
      page.forms.find((f) => f.action === '/login/upstream/corp')!,
    );
    // At the provider and back: the callback is where it waits for the token endpoint.
    const callback = `${server.issuer}/login/upstream/corp/callback`;
    const { stoppedAt } = await browser.drive(toProvider.location!, () => undefined, callback);
    assert.ok(stoppedAt);
    const started = performance.now();
    const answered = await browser.request(stoppedAt);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 10_000, `answered after ${elapsed} ms`);
    assert.equal(answered.status, 503);
    assert.match(answered.body, /did not answer/);
    proxy.mode.tampering = 'none';
  });

  it('gives a page at once when a provider refuses connections', async () => {
    const { page } = await pressButton(new Browser(), 'refused');
    assert.equal(page?.status, 503);
    assert.match(page.body, /did not answer/);
    const metrics = await (await fetch(`${server.issuer}/metrics`)).text();
    assert.match(metrics, /tessera_upstream_failures_total\{provider="refused",reason="unavailable"\} 1\n/);
  });
});
