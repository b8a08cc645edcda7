// The pages' language over HTTP: ui_locales, Accept-Language, the default, the switch and its cookie,
// kept for the whole interaction; discovery's ui_locales_supported; claims_locales accepted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('languages of the pages', () => {
  let server: TestServer;
  let german: TestServer;
  before(async () => {
    [server, german] = await Promise.all([startServer(), startServer({ env: { TESSERA_DEFAULT_LOCALE: 'de' } })]);
  });
  after(() => Promise.all([server.close(), german.close()]));

  function authorizeUrl(target: TestServer, extra: Record<string, string> = {}): string {
    const client = target.clients.confidential;
    const params = { client_id: client.id, redirect_uri: client.redirectUri, response_type: 'code', scope: 'openid' };
    return `${target.issuer}/oauth2/authorize?${new URLSearchParams({ ...params, state: 's', ...extra })}`;
  }

  /** The sign-in page of a new authorization request, in a new browser. */
  async function signInPage(target: TestServer, extra: Record<string, string>, headers: Record<string, string> = {}) {
    const browser = new BrowserSim(target.issuer);
    const keep = (response: Response) => {
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        browser.cookies.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
      }
      return response;
    };
    const started = keep(await fetch(authorizeUrl(target, extra), { redirect: 'manual', headers }));
    const location = started.headers.get('location')!;
    const page = keep(
      await fetch(new URL(location, target.issuer), {
        headers: { ...headers, cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      }),
    );
    return { browser, location, page: await page.text(), response: page };
  }

  it('discovery lists the languages; claims_locales is accepted', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.deepEqual(metadata.ui_locales_supported, ['en', 'de', 'fr', 'es', 'pt-BR', 'ja']);
    const { page } = await signInPage(server, { claims_locales: 'de fr' });
    assert.match(page, /<html lang="en">/);
  });

  it('ui_locales: the first one Tessera has', async () => {
    const { page } = await signInPage(server, { ui_locales: 'fr-CA de' });
    assert.match(page, /<html lang="fr">/);
    assert.match(page, /<h1>Se connecter<\/h1>/);
    assert.match(page, /<label for="password">Mot de passe<\/label>/);
    const second = await signInPage(server, { ui_locales: 'xx de' }, { 'accept-language': 'ja' });
    assert.match(second.page, /<html lang="de">/);
  });

  it('Accept-Language by quality, then the default', async () => {
    const { page } = await signInPage(server, {}, { 'accept-language': 'xx, ja;q=0.8, de;q=0.9' });
    assert.match(page, /<html lang="de">/);
    assert.match(page, /<h1>Anmelden<\/h1>/);
    assert.match((await signInPage(server, {}, { 'accept-language': 'ja-JP' })).page, /<h1>ログイン<\/h1>/);
    assert.match((await signInPage(server, {}, { 'accept-language': 'pt-PT' })).page, /<html lang="pt-BR">/);
    assert.match((await signInPage(german, {}, { 'accept-language': 'xx' })).page, /<html lang="de">/);
    assert.match((await signInPage(german, {})).page, /<html lang="de">/);
  });

  it('kept for the whole interaction: a failed sign-in, then the consent page', async () => {
    const { browser, location, page } = await signInPage(server, { ui_locales: 'es' });
    const form = { interaction: BrowserSim.hidden(page, 'interaction'), csrf: BrowserSim.hidden(page, 'csrf') };
    const failed = await browser.request('/login', { form: { ...form, username: 'alice', password: 'wrong' } });
    const again = await (await browser.request(failed.headers.get('location')!)).text();
    assert.match(again, /<html lang="es">/);
    assert.match(again, /role="alert">El nombre de usuario o la contraseña no son correctos\.</);
    const signedIn = await browser.login(location, server.user.username, server.user.password);
    const consent = await (await browser.request(signedIn.headers.get('location')!)).text();
    assert.match(consent, /<html lang="es">/);
    assert.match(consent, /Iniciar tu sesión con tu cuenta <code>openid<\/code>/);
  });

  it('the switch: links to this page in each language; the choice is kept in a cookie', async () => {
    const { browser, location, page } = await signInPage(server, { ui_locales: 'fr' });
    assert.match(page, /<nav class="languages" aria-label="Langue">/);
    const links = [...page.matchAll(/<a href="([^"]+)" lang="([^"]+)" hreflang="[^"]+"( aria-current="true")?>/g)];
    assert.deepEqual(
      links.map((m) => m[2]),
      ['en', 'de', 'fr', 'es', 'pt-BR', 'ja'],
    );
    assert.equal(links.find((m) => m[3])?.[2], 'fr');
    const japanese = links.find((m) => m[2] === 'ja')![1]!.replace(/&amp;/g, '&');
    assert.equal(
      new URL(japanese, server.issuer).searchParams.get('interaction'),
      new URL(location, server.issuer).searchParams.get('interaction'),
    );
    const switched = await browser.request(japanese);
    assert.match(await switched.text(), /<html lang="ja">/);
    assert.equal(browser.cookies.get('tessera_locale'), 'ja');
    // The choice outranks ui_locales and Accept-Language from then on.
    const later = await browser.request(location);
    assert.match(await later.text(), /<html lang="ja">/);
  });

  it('error pages too, with the code for developers', async () => {
    const response = await fetch(authorizeUrl(server, { client_id: 'nope' }), { headers: { 'accept-language': 'de' } });
    const page = await response.text();
    assert.equal(response.status, 400);
    assert.match(page, /<html lang="de">/);
    assert.match(page, /<h1>Ungültige Autorisierungsanfrage<\/h1>/);
    assert.match(page, /<code>invalid_client<\/code>/);
  });
});
