// Another Tessera as the upstream provider: Tessera One is registered as a client of Tessera Two with
// Tessera Two's CLI, and Tessera Two as a provider of Tessera One with Tessera One's. A person of
// Tessera Two signs in to an application of Tessera One: the first time they become a user of
// Tessera One, the next time they are that user again, and the tokens carry Tessera One's `sub`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { startServer, type TestServer } from '../helpers/server.ts';
import { Browser, type Page } from '../helpers/upstream-browser.ts';
import { tessera } from '../helpers/upstreams.ts';

describe('another Tessera as the upstream provider', () => {
  let one: TestServer;
  let two: TestServer;
  let rp: client.Configuration;
  const bob = { username: 'bob', password: 'a long and lovely password' };

  before(async () => {
    one = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    // On another host name, so that the browser keeps the two instances' cookies apart.
    two = await startServer({ host: 'localhost' });
    const user = [
      'users',
      'create',
      '--username',
      bob.username,
      '--email',
      'bob@two.example',
      '--name',
      'Bob Two',
      '--email-verified',
    ];
    assert.equal((await tessera(two, [...user, '--password-stdin'], `${bob.password}\n`)).code, 0);
    const callback = `${one.issuer}/login/upstream/two/callback`;
    const registered = await tessera(two, [
      ...['clients', 'create', '--name', 'Tessera One', '--redirect-uri', callback],
      ...['--scope', 'openid profile email', '--json'],
    ]);
    assert.equal(registered.code, 0, registered.out);
    const { client_id: clientId, client_secret: clientSecret } = JSON.parse(registered.out) as Record<string, string>;
    const provider = await tessera(
      one,
      ['providers', 'create', '--type', 'oidc', '--id', 'two', '--name', 'Tessera Two', '--issuer', two.issuer].concat([
        '--client-id',
        clientId!,
        '--client-secret-stdin',
      ]),
      `${clientSecret}\n`,
    );
    assert.equal(provider.code, 0, provider.out);
    assert.ok(provider.out.includes(callback));
    const c = one.clients.confidential;
    rp = await client.discovery(new URL(one.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    await one?.close();
    await two?.close();
  });

  /** A sign-in to Tessera One's client through Tessera Two; the pages of Tessera Two's sign-in it showed. */
  async function signIn(browser: Browser, params: Record<string, string> = {}) {
    const c = one.clients.confidential;
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const url = client.buildAuthorizationUrl(rp, {
      ...{ redirect_uri: c.redirectUri, scope: 'openid profile email', state, nonce },
      ...params,
    });
    const twoSignIns: string[] = [];
    const { stoppedAt, page } = await browser.drive(
      url,
      (p: Page) => {
        if (p.status !== 200) return undefined;
        const at = p.url.origin;
        if (at === one.issuer && p.url.pathname === '/login') {
          return { form: p.forms.find((f) => f.action === '/login/upstream/two')! };
        }
        if (at === two.issuer && p.url.pathname === '/login') {
          twoSignIns.push(p.url.href);
          return { form: p.forms.find((f) => f.action === '/login')!, fields: bob };
        }
        if (p.url.pathname === '/consent') return { form: p.forms[0]!, fields: { decision: 'allow' } };
        return undefined;
      },
      c.redirectUri,
    );
    assert.ok(stoppedAt, page?.body);
    const tokens = await client.authorizationCodeGrant(rp, stoppedAt, { expectedState: state, expectedNonce: nonce });
    return { claims: tokens.claims()!, tokens, twoSignIns };
  }

  it('makes a user of Tessera One at the first sign-in, and signs the same one in the next time', async () => {
    const first = await signIn(new Browser());
    assert.equal(first.twoSignIns.length, 1);
    const made = await one.store.getUserByUsername('bob');
    assert.ok(made);
    assert.equal(made.passwordHash, null);
    assert.equal(first.claims.sub, made.id);
    const atTwo = await two.store.getUserByUsername('bob');
    assert.notEqual(first.claims.sub, atTwo!.id);
    assert.equal((await one.store.listLinks(made.id))[0]?.subject, atTwo!.id);
    assert.equal(first.claims.email, 'bob@two.example');
    assert.equal(first.claims.email_verified, true);
    assert.equal(first.claims.name, 'Bob Two');
    // Tessera Two's own amr (pwd) is its word, not Tessera One's.
    assert.deepEqual(first.claims.amr, ['fed']);
    const info = await client.fetchUserInfo(rp, first.tokens.access_token, made.id);
    assert.equal(info.preferred_username, 'bob');

    const second = await signIn(new Browser());
    assert.equal(second.claims.sub, made.id);
    assert.equal((await one.store.listUsers()).filter((u) => u.username.startsWith('bob')).length, 1);
  });

  it('asks Tessera Two to sign the person in again when the application asks for a fresh sign-in', async () => {
    const browser = new Browser();
    await signIn(browser);
    // Signed in at both; without prompt=login passed on, Tessera Two would sign bob in from its session.
    assert.equal((await signIn(browser)).twoSignIns.length, 0);
    const again = await signIn(browser, { prompt: 'login' });
    assert.equal(again.twoSignIns.length, 1);
    assert.ok(new URL(again.twoSignIns[0]!).searchParams.get('interaction'));
  });
});
