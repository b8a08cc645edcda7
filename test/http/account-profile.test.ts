// The account page's profile form: a person sets and clears the claims they own, which applications
// then read at userinfo; a bad value is refused with nothing changed; the form needs its token and
// the page's origin; it speaks every language of the pages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unescapeHtml, BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';

describe('account page: profile', () => {
  let server: TestServer;
  let browser: BrowserSim;
  before(async () => {
    server = await startServer();
    browser = new BrowserSim(server.issuer);
    const loginPage = await (await browser.request('/account/login')).text();
    const login = await browser.request('/account/login', {
      form: { csrf: BrowserSim.hidden(loginPage, 'csrf'), username: 'alice', password: server.user.password },
    });
    assert.equal(login.status, 303);
  });
  after(() => server.close());

  const FORM = {
    given_name: 'Alice',
    middle_name: 'Pleasance',
    family_name: 'Liddell',
    nickname: 'Al',
    picture: 'https://example.com/alice.png',
    website: '',
    zoneinfo: 'Europe/London',
    locale: 'en-GB',
    birthdate: '1852-05-04',
    phone_number: '+44 1865 000000',
  };

  async function userinfo(): Promise<Record<string, unknown>> {
    const code = await getCode(server, server.clients.confidential, { scope: 'openid profile' });
    const { access_token } = (await (await exchange(server, code)).json()) as { access_token: string };
    const response = await fetch(`${server.issuer}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    return (await response.json()) as Record<string, unknown>;
  }

  it('shows the form with the names; saving sets the claims applications read', async () => {
    const page = await (await browser.request('/account')).text();
    assert.match(page, /<form method="post" action="\/account\/profile">/);
    assert.match(page, /name="given_name" autocomplete="given-name"[^>]*value="Alice"/);
    assert.match(page, /name="nickname"[^>]*value=""/);
    const saved = await browser.request('/account/profile', {
      form: { csrf: BrowserSim.hidden(page, 'csrf'), ...FORM },
    });
    assert.equal(saved.status, 303);
    assert.equal(saved.headers.get('location'), '/account?profile=saved#profile');
    const after = await (await browser.request('/account?profile=saved')).text();
    assert.match(after, /Your profile has been saved\./);
    assert.match(after, /name="phone_number"[^>]*value="\+441865000000"/);
    const info = await userinfo();
    assert.equal(info.middle_name, 'Pleasance');
    assert.equal(info.nickname, 'Al');
    assert.equal(info.picture, 'https://example.com/alice.png');
    assert.equal(info.birthdate, '1852-05-04');
    assert.equal(info.zoneinfo, 'Europe/London');
    assert.equal('website' in info, false, 'an empty field is no claim');
    // The phone number is the phone scope's, not profile's.
    assert.equal('phone_number' in info, false);
    const [event] = await server.store.listEvents({ userId: server.user.id, type: 'user.updated', limit: 1 });
    assert.deepEqual(event!.data?.changed, [
      'middle_name',
      'nickname',
      'picture',
      'birthdate',
      'zoneinfo',
      'locale',
      'phone_number',
    ]);

    // Clearing a field removes its claim.
    const cleared = await browser.request('/account/profile', {
      form: { csrf: BrowserSim.hidden(after, 'csrf'), ...FORM, nickname: '' },
    });
    assert.equal(cleared.status, 303);
    assert.equal('nickname' in (await userinfo()), false);
  });

  for (const [field, value] of [
    ['picture', 'javascript:alert(1)'],
    ['zoneinfo', 'Mars/Olympus'],
    ['birthdate', '4 May 1852'],
    ['phone_number', '01865 000000'],
    ['locale', 'english please'],
  ] as const) {
    it(`refuses ${field} ${JSON.stringify(value)}, keeping what was typed and changing nothing`, async () => {
      const before = await server.store.getUserById(server.user.id);
      const page = await (await browser.request('/account')).text();
      const refused = await browser.request('/account/profile', {
        form: { csrf: BrowserSim.hidden(page, 'csrf'), ...FORM, nickname: 'Changed', [field]: value },
      });
      assert.equal(refused.status, 400);
      const body = await refused.text();
      assert.match(body, /role="alert">[^<]*this value cannot be used/);
      const input = new RegExp(`name="${field}"[^>]*value="([^"]*)" aria-invalid="true"`).exec(body);
      assert.ok(input, 'the refused field is marked');
      assert.equal(unescapeHtml(input[1]!), value);
      assert.deepEqual(await server.store.getUserById(server.user.id), before);
    });
  }

  it('refuses a form without its token, or from another origin', async () => {
    const page = await (await browser.request('/account')).text();
    const forged = await browser.request('/account/profile', { form: { csrf: 'forged', ...FORM, nickname: 'X' } });
    assert.equal(forged.status, 403);
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const crossOrigin = await fetch(`${server.issuer}/account/profile`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: BrowserSim.hidden(page, 'csrf'), ...FORM, nickname: 'X' }).toString(),
    });
    assert.equal(crossOrigin.status, 403);
    assert.notEqual((await userinfo()).nickname, 'X');
  });

  it('speaks the page’s language', async () => {
    const french = new BrowserSim(server.issuer, { 'accept-language': 'fr' });
    french.cookies.clear();
    for (const [k, v] of browser.cookies) french.cookies.set(k, v);
    const page = await (await french.request('/account')).text();
    assert.match(page, /Votre profil/);
    assert.match(page, /Fuseau horaire/);
  });
});
