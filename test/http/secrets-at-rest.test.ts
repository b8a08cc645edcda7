// Only hashes of codes, refresh tokens, sessions and client secrets reach the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';

describe('secrets at rest', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('no table holds a code, refresh token, session cookie, client secret or password in the clear', async () => {
    const browser = new BrowserSim(server.issuer);
    const issued = await getCode(server, server.clients.confidential, { browser });
    const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string };
    const session = browser.cookies.get('tessera_session')!;
    const db = await server.db();
    const tables = ['clients', 'users', 'sessions', 'consents', 'grants', 'revoked_access_tokens', 'signing_keys'];
    let dump = '';
    for (const table of tables) dump += JSON.stringify((await sql`select * from ${sql.table(table)}`.execute(db)).rows);
    for (const [what, secret] of [
      ['authorization code', issued.code],
      ['refresh token', tokens.refresh_token],
      ['session cookie', session],
      ['client secret', server.clients.confidential.secret!],
      ['password', server.user.password],
    ] as const) {
      assert.equal(dump.includes(secret), false, `${what} is stored in the clear`);
    }
    assert.doesNotMatch(dump, /"d":/, 'no private key member in the clear');
  });

  it('a consent form without the CSRF token is refused with 403', async () => {
    const browser = new BrowserSim(server.issuer);
    const c = server.clients.confidential;
    const params = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid webhooks',
      state: 's',
    });
    const first = await browser.request(`/oauth2/authorize?${params}`);
    const toConsent = await browser.login(first.headers.get('location')!, server.user.username, server.user.password);
    const page = await (await browser.request(toConsent.headers.get('location')!)).text();
    const response = await browser.request('/consent', {
      form: { interaction: BrowserSim.hidden(page, 'interaction'), csrf: 'forged', decision: 'allow' },
    });
    assert.equal(response.status, 403);
    assert.deepEqual(
      await server.store.getConsentedScopes(server.user.id, c.id).then((s) => s.includes('webhooks')),
      false,
    );
  });
});
