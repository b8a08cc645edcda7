// The two sign-in pages, /login (an authorization request's) and /account/login (the account page's),
// are one page: both offer the same other ways in (a passkey, the upstream providers, a reset by
// mail), also when the password is throttled (429), since those are not what is throttled.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tessera } from '../helpers/upstreams.ts';

/** What a sign-in page offers besides the password. */
function otherWaysIn(page: string) {
  return {
    passkey: page.includes('action="/login/passkey"'),
    provider: page.includes('action="/login/upstream/github"'),
    reset: page.includes('href="/reset/request"'),
  };
}
const ALL = { passkey: true, provider: true, reset: true };

describe('the sign-in pages', () => {
  let server: TestServer;
  before(async () => {
    // localhost: a relying party's ID is a domain, so passkeys are offered (never at an IP address).
    server = await startServer({ host: 'localhost' });
    const made = await tessera(
      server,
      ['providers', 'create', '--type', 'github', '--client-id', 'Iv1.abc', '--client-secret-stdin'],
      's3cret',
    );
    assert.equal(made.code, 0, made.out);
  });
  after(() => server?.close());

  /** Wrong passwords on `path`'s form until one is refused: that 429 page. */
  async function throttled(browser: BrowserSim, path: string, username: string) {
    for (let i = 0; i < 30; i++) {
      const page = await (await browser.request(path)).text();
      const interaction = page.match(/name="interaction" value="([^"]*)"/)?.[1] ?? '';
      const form = { interaction, csrf: BrowserSim.hidden(page, 'csrf'), username, password: `guess ${i}` };
      const response = await browser.request(path.split('?')[0]!, { form });
      if (response.status === 429)
        return { page: await response.text(), retryAfter: response.headers.get('retry-after') };
      assert.equal(response.status, 303);
    }
    return assert.fail('never throttled');
  }

  it('/account/login offers the passkey, the providers and the reset, also when throttled', async () => {
    const browser = new BrowserSim(server.issuer);
    const page = await (await browser.request('/account/login')).text();
    assert.deepEqual(otherWaysIn(page), ALL);
    const refused = await throttled(browser, '/account/login', 'nobody-a');
    assert.ok(Number(refused.retryAfter) > 0);
    assert.deepEqual(otherWaysIn(refused.page), ALL, 'the throttled page keeps the other ways in');
    assert.match(refused.page, /action="\/account\/login"/, 'and stays the account page');
    assert.match(refused.page, /value="nobody-a"/, 'with the username typed');
  });

  it('/login (an authorization request) offers the same, also when throttled', async () => {
    const browser = new BrowserSim(server.issuer);
    const { id, redirectUri } = server.clients.confidential;
    const query = new URLSearchParams({
      client_id: id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
    });
    const authorize = await browser.request(`/oauth2/authorize?${query}`);
    const location = authorize.headers.get('location')!;
    assert.match(location, /^\/login\?interaction=/);
    assert.deepEqual(otherWaysIn(await (await browser.request(location)).text()), ALL);
    const refused = await throttled(browser, location, 'nobody-b');
    assert.deepEqual(otherWaysIn(refused.page), ALL);
    assert.match(refused.page, /action="\/login"/);
  });
});
