// What anyone can write into Tessera, sent as an attacker would: an X-Forwarded-For that is no
// address, redirect URIs with line breaks, spaces or backslashes, terminal escape sequences meant for
// the operator's terminal, withdrawals of clients the user never granted, and settings for
// development left on in production.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { securityEvent } from '../../src/events/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';

/** A sign-in form posted with `headers` (as a proxy would forward it): the answer's status. */
async function signIn(server: TestServer, password: string, headers: Record<string, string>): Promise<number> {
  const browser = new BrowserSim(server.issuer);
  const page = await (await browser.request('/account/login')).text();
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const response = await fetch(`${server.issuer}/account/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ csrf: BrowserSim.hidden(page, 'csrf'), username: 'alice', password }),
  });
  return response.status;
}

/** What a CLI command printed. */
async function cli(server: TestServer, args: string[]): Promise<{ code: number; out: string }> {
  const { io, lines } = cliIo(server);
  const code = await run(args, io);
  return { code, out: lines.join('\n') };
}

// eslint-disable-next-line no-control-regex
const RAW_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('inputs and addresses', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { TESSERA_TRUST_PROXY: 'loopback' } });
  });
  after(() => server?.close());

  it("a forwarded address that is not one is recorded as the peer's", async () => {
    const lastFailure = async () => (await server.store.listEvents({ type: 'user.sign_in_failed', limit: 1 }))[0]!.ip;
    assert.equal(await signIn(server, 'wrong', { 'x-forwarded-for': '<script>alert(1)</script>' }), 303);
    assert.equal(await lastFailure(), '127.0.0.1');
    assert.equal(await signIn(server, 'wrong', { 'x-forwarded-for': 'not-an-ip' }), 303);
    assert.equal(await lastFailure(), '127.0.0.1');
    assert.equal(await signIn(server, 'wrong', { 'x-forwarded-for': '203.0.113.9' }), 303);
    assert.equal(await lastFailure(), '203.0.113.9', 'a real address from the trusted proxy is believed');
    await (await server.db()).deleteFrom('throttles').execute();
  });

  it('redirect URIs with line breaks, spaces or backslashes are refused, and an old one gets no 500', async () => {
    for (const uri of [
      'https://app.example/cb\r\nSet-Cookie: x=1',
      'https://app.example/a b',
      'https://app.example\\cb',
    ]) {
      const created = await cli(server, [
        'clients',
        'create',
        '--name',
        'x',
        '--redirect-uri',
        uri,
        '--scope',
        'openid',
      ]);
      assert.equal(created.code, 2, JSON.stringify(uri));
      assert.match(created.out, /must be printable ASCII, without spaces or backslashes/);
    }
    // Stored before these rules: the authorization request gets the error page, not a broken header.
    const legacy = 'https://app.example/cb\r\nSet-Cookie: planted=1';
    const client = { ...(await server.store.getClient(server.clients.confidential.id))!, clientId: 'legacy-client' };
    await server.store.createClient({ ...client, redirectUris: [legacy] });
    const query = new URLSearchParams({
      client_id: 'legacy-client',
      redirect_uri: legacy,
      response_type: 'code',
      scope: 'openid',
    });
    const response = await fetch(`${server.issuer}/oauth2/authorize?${query}`, { redirect: 'manual' });
    assert.equal(response.status, 400);
    assert.ok(!response.headers.get('set-cookie')?.includes('planted'));
    assert.match(await response.text(), /redirect_uri has characters a URI cannot have/);
    // clients create keeps scheme and host in lowercase.
    const cased = await cli(server, [
      'clients',
      'create',
      '--name',
      'cased',
      '--redirect-uri',
      'HTTPS://App.Example/Back',
      '--scope',
      'openid',
      '--json',
    ]);
    assert.deepEqual(JSON.parse(cased.out).redirect_uris, ['https://app.example/Back']);
  });

  it("the CLI prints no terminal escape sequence of anyone's", async () => {
    const escape = '\u001b]0;owned\u0007\u001b[2J\u009b31m';
    // A webhook URL sent through the API is refused; rows written before (or behind the CLI's back)
    // are printed escaped.
    const token = (
      (await (
        await exchange(server, await getCode(server, server.clients.firstParty, { scope: 'openid webhooks' }))
      ).json()) as { access_token: string }
    ).access_token;
    const api = await fetch(`${server.issuer}/api/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://hooks.example/${escape}`, events: ['user.signed_in'] }),
    });
    assert.equal(api.status, 400);
    await server.store.createWebhook({
      id: 'wh_escape',
      url: `https://hooks.example/${escape}`,
      events: 'user.signed_in',
      ownerId: null,
      secretEnc: 'x.y.z',
      previousSecretEnc: null,
      previousUntil: null,
      createdAt: 0,
    });
    const client = { ...(await server.store.getClient(server.clients.confidential.id))!, clientId: `c${escape}` };
    await server.store.createClient({ ...client, name: `name${escape}` });
    await server.store.recordEvent(
      securityEvent('consent.withdrawn', Math.floor(Date.now() / 1000), {
        clientId: `c${escape}`,
        requester: { ip: null, userAgent: `agent${escape}` },
      }),
    );
    for (const args of [
      ['webhooks', 'list'],
      ['webhooks', 'list', '--json'],
      ['clients', 'list'],
      ['clients', 'show', `c${escape}`],
      ['events', 'list', '--limit', '5'],
      ['events', 'list', '--limit', '5', '--json'],
    ]) {
      const { code, out } = await cli(server, args);
      assert.equal(code, 0, args.join(' '));
      assert.doesNotMatch(out, RAW_CONTROLS, args.join(' '));
      assert.match(out, /\\x1b\]0;owned\\x07|\\u001b\]0;owned\\u0007/, args.join(' '));
    }
  });

  it('withdrawing a client the user never granted records nothing', async () => {
    const browser = new BrowserSim(server.issuer);
    const login = await (await browser.request('/account/login')).text();
    await browser.request('/account/login', {
      form: { csrf: BrowserSim.hidden(login, 'csrf'), username: 'alice', password: server.user.password },
    });
    const csrf = BrowserSim.hidden(await (await browser.request('/account')).text(), 'csrf');
    const before = (await server.store.listEvents({ type: 'consent.withdrawn', limit: 100 })).length;
    for (const clientId of [server.clients.narrow.id, 'no-such-client', '\u001b[2Jforged']) {
      assert.equal((await browser.request('/account/withdraw', { form: { csrf, client_id: clientId } })).status, 303);
    }
    assert.equal((await server.store.listEvents({ type: 'consent.withdrawn', limit: 100 })).length, before);
    // A real grant: withdrawn, and recorded.
    await exchange(server, await getCode(server, server.clients.confidential, { scope: 'openid' }));
    await browser.request('/account/withdraw', { form: { csrf, client_id: server.clients.confidential.id } });
    const [withdrawn] = await server.store.listEvents({ type: 'consent.withdrawn', limit: 1 });
    assert.equal(withdrawn?.clientId, server.clients.confidential.id);
  });

  it('development settings are refused in production', () => {
    const production = { NODE_ENV: 'production', TESSERA_ISSUER: 'https://id.example', TESSERA_SECRET: 'x'.repeat(32) };
    assert.throws(() => loadConfig({ ...production, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' }), ConfigError);
    assert.deepEqual(loadConfig(production).trustProxy, ['loopback'], 'only a proxy on the same machine by default');
  });
});
