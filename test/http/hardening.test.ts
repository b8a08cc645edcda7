// The security review's attacks, sent as an attacker would: a cookie pair minted in the attacker's
// browser and planted in the victim's, forms posted from another origin or with no Origin at all,
// another client's replay of a used code, client enumeration, caller text in error descriptions,
// sessions left after a password change, dangerous redirect URIs, and the deployment's surface.
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { openStore } from '../../src/store/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startInstance } from '../helpers/instances.ts';
import { cliIo, freePort, startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { until } from '../helpers/webhook-receiver.ts';

/** A browser signed in to the account page as alice. */
async function signedIn(server: TestServer): Promise<BrowserSim> {
  const browser = new BrowserSim(server.issuer);
  const page = await (await browser.request('/account/login')).text();
  const answer = await browser.request('/account/login', {
    form: { csrf: BrowserSim.hidden(page, 'csrf'), username: 'alice', password: server.user.password },
  });
  assert.equal(answer.headers.get('location'), '/account');
  return browser;
}

/** Posts a form with extra headers (an Origin, a Sec-Fetch-Site), as a page of another site makes a browser do. */
async function post(browser: BrowserSim, path: string, form: Record<string, string>, headers: Record<string, string>) {
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  return fetch(new URL(path, browser.origin), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
}

describe('hardening', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server?.close());

  it('a token pair minted in another browser and planted does not withdraw, with or without an Origin', async () => {
    const c = server.clients.confidential;
    const victim = new BrowserSim(server.issuer);
    assert.equal((await exchange(server, await getCode(server, c, { browser: victim, scope: 'openid' }))).status, 200);
    // The attacker's own pair, from their own visit.
    const attacker = new BrowserSim(server.issuer);
    const page = await (await attacker.request('/account/login')).text();
    const token = BrowserSim.hidden(page, 'csrf');
    victim.cookies.set('tessera_csrf', attacker.cookies.get('tessera_csrf')!);
    const form = { csrf: token, client_id: c.id };
    const attacks: Array<Record<string, string>> = [
      {},
      { origin: 'http://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attacks) {
      const answer = await post(victim, '/account/withdraw', form, headers);
      assert.equal(answer.status, 403, JSON.stringify(headers));
    }
    assert.equal((await server.store.listActiveGrants(server.user.id, Math.floor(Date.now() / 1000))).length > 0, true);
    // The user's own form still works, from the same origin.
    const own = await signedIn(server);
    const account = await (await own.request('/account')).text();
    const answer = await post(
      own,
      '/account/withdraw',
      { csrf: BrowserSim.hidden(account, 'csrf'), client_id: c.id },
      { origin: server.issuer, 'sec-fetch-site': 'same-origin' },
    );
    assert.equal(answer.status, 303);
  });

  it("another browser's consent request and token pair get the victim no code", async () => {
    const c = server.clients.confidential;
    // The attacker starts an authorization request for a client of theirs in their own browser.
    const attacker = new BrowserSim(server.issuer);
    const query = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid apps',
      prompt: 'consent',
    });
    let answer = await attacker.request(`/oauth2/authorize?${query}`);
    answer = await attacker.login(answer.headers.get('location')!, 'alice', server.user.password);
    const consent = await (await attacker.request(answer.headers.get('location')!)).text();
    const interaction = BrowserSim.hidden(consent, 'interaction');
    const token = BrowserSim.hidden(consent, 'csrf');
    // The victim is signed in; the attacker's page posts the consent form in the victim's browser.
    const victim = await signedIn(server);
    for (const planted of [false, true]) {
      if (planted) {
        for (const name of ['tessera_csrf', 'tessera_browser']) victim.cookies.set(name, attacker.cookies.get(name)!);
      }
      const posted = await post(victim, '/consent', { interaction, csrf: token, decision: 'allow' }, {});
      assert.notEqual(posted.status, 303, `no redirect with a code (planted cookies: ${planted})`);
      assert.ok([400, 403].includes(posted.status));
    }
    // A sign-in posted from another site (login CSRF) is refused too.
    const loginPage = await (await attacker.request('/account/login')).text();
    const forged = await post(
      attacker,
      '/account/login',
      { csrf: BrowserSim.hidden(loginPage, 'csrf'), username: 'alice', password: server.user.password },
      { origin: 'http://evil.example' },
    );
    assert.equal(forged.status, 403);
  });

  it("another client's replay of a used code revokes nothing", async () => {
    const c = server.clients.confidential;
    const issued = await getCode(server, c, { scope: 'openid' });
    const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string };
    const other = server.clients.es256;
    const replay = await tokenRequest(
      server,
      { grant_type: 'authorization_code', code: issued.code, redirect_uri: c.redirectUri },
      basic(other.id, other.secret!),
    );
    assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');
    const refreshed = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(c.id, c.secret!),
    );
    assert.equal(refreshed.status, 200, "the owner's refresh token still works");
    // Its own client's replay still revokes.
    const own = await exchange(server, issued);
    assert.equal(own.status, 400);
  });

  it('known and unknown clients are indistinguishable at the token endpoint', async () => {
    const answers = [];
    for (const form of [
      {
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: 'https://x',
        client_id: server.clients.confidential.id,
      },
      { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://x', client_id: 'no-such-client' },
    ]) {
      const response = await tokenRequest(server, form);
      answers.push([response.status, response.headers.get('www-authenticate'), await response.text()]);
    }
    assert.deepEqual(answers[0], answers[1]);
    const wrong = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic(server.clients.confidential.id, 'wrong'),
    );
    const unknown = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic('no-such-client', 'wrong'),
    );
    assert.deepEqual(await wrong.json(), await unknown.json());
  });

  it("error_description is a fixed text within RFC 6749 characters, never the caller's input", async () => {
    const c = server.clients.confidential;
    const ALLOWED = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
    const descriptions: string[] = [];
    const authorize = async (extra: Record<string, string>) => {
      const query = new URLSearchParams({
        client_id: c.id,
        redirect_uri: c.redirectUri,
        response_type: 'code',
        scope: 'openid',
        ...extra,
      });
      const answer = await fetch(`${server.issuer}/oauth2/authorize?${query}`, { redirect: 'manual' });
      descriptions.push(new URL(answer.headers.get('location')!).searchParams.get('error_description')!);
    };
    await authorize({ scope: 'openid evil"\\scope' });
    await authorize({ scope: 'openid mark-evil' });
    await authorize({ prompt: 'evil"\\prompt' });
    const token = async (form: Record<string, string>) => {
      const answer = await tokenRequest(server, form, basic(c.id, c.secret!));
      descriptions.push(((await answer.json()) as { error_description: string }).error_description);
    };
    await token({ grant_type: 'evil"\\grant' });
    await token({ grant_type: 'refresh_token', refresh_token: 'x', scope: 'evil"\\' });
    const repeated = await fetch(`${server.issuer}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basic(c.id, c.secret!), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&evil"\\=1&evil"\\=2',
    });
    descriptions.push(((await repeated.json()) as { error_description: string }).error_description);
    for (const description of descriptions) {
      assert.match(description, ALLOWED);
      assert.doesNotMatch(description, /evil/);
    }
  });

  it('setting a password and disabling a user end their sessions, and revoke nothing else', async () => {
    const browser = await signedIn(server);
    const issued = await getCode(server, server.clients.confidential, { scope: 'openid' });
    const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string };
    const { io } = cliIo(server, `${server.user.password}\n`);
    assert.equal(await run(['users', 'set-password', 'alice', '--password-stdin'], io), 0);
    assert.equal((await browser.request('/account')).headers.get('location'), '/account/login');
    const c = server.clients.confidential;
    const refreshed = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(c.id, c.secret!),
    );
    assert.equal(refreshed.status, 200, 'grants stay');
    const again = await signedIn(server);
    await run(['users', 'disable', 'alice'], cliIo(server).io);
    await run(['users', 'enable', 'alice'], cliIo(server).io);
    assert.equal((await again.request('/account')).headers.get('location'), '/account/login');
  });

  it('clients create refuses credentials, fragments and dangerous schemes in redirect URIs', async () => {
    for (const uri of [
      'https://u:p@app.example/cb',
      'https://app.example/cb#x',
      'vbscript:x',
      'file:///etc/passwd',
      'blob:https://a.example/x',
      'javascript:alert(1)',
      'data:text/html,x',
      'http://app.example/cb',
    ]) {
      const { io, lines } = cliIo(server);
      const code = await run(['clients', 'create', '--name', 'x', '--redirect-uri', uri, '--scope', 'openid'], io);
      assert.equal(code, 2, `${uri}: ${lines.join(' ')}`);
    }
    const { io, lines } = cliIo(server);
    assert.equal(
      await run(['clients', 'create', '--name', 'x', '--redirect-uri', 'http://localhost/cb', '--scope', 'openid'], io),
      0,
    );
    assert.match(lines.join('\n'), /warning: .*127\.0\.0\.1/);
    const dev = cliIo(server);
    dev.io.env = { ...dev.io.env, TESSERA_ALLOW_HTTP_REDIRECT_URIS: 'true' };
    assert.equal(
      await run(
        ['clients', 'create', '--name', 'x', '--redirect-uri', 'http://app.example/cb', '--scope', 'openid'],
        dev.io,
      ),
      0,
    );
    const production = cliIo(server);
    production.io.env = {
      ...production.io.env,
      NODE_ENV: 'production',
      TESSERA_ALLOW_HTTP_REDIRECT_URIS: 'true',
      TESSERA_ISSUER: 'https://id.example',
    };
    assert.equal(await run(['clients', 'list'], production.io), 2, 'never in production');
    const listed = cliIo(server);
    await run(['clients', 'list'], listed.io);
    assert.match(listed.lines.join('\n'), /a redirect URI breaks the rules/);
  });

  it('with an https issuer: __Host- cookies and HSTS on every answer', async () => {
    const secure = await startServer({ env: { TESSERA_ISSUER: 'https://id.example' } });
    try {
      const page = await secure.app.inject({ method: 'GET', url: '/account/login' });
      assert.equal(page.headers['strict-transport-security'], 'max-age=31536000');
      // The forms' pre-session cookie, and the browser's (a passkey's challenge is bound to it).
      const cookies = [page.headers['set-cookie'] ?? []].flat();
      assert.deepEqual(cookies.map((c) => c.split('=')[0]).sort(), ['__Host-tessera_browser', '__Host-tessera_csrf']);
      for (const cookie of cookies)
        assert.match(cookie, /^__Host-tessera_\w+=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
      const token = await secure.app.inject({ method: 'POST', url: '/oauth2/token', payload: {} });
      assert.equal(token.headers['strict-transport-security'], 'max-age=31536000');
      const plain = await server.app.inject({ method: 'GET', url: '/account/login' });
      assert.equal(plain.headers['strict-transport-security'], undefined);
      assert.match(String(plain.headers['set-cookie']), /^tessera_csrf=/);
    } finally {
      await secure.close();
    }
  });

  it('the SQLite database and its folder are readable by the owner only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-modes-'));
    try {
      const store = await openStore(`sqlite:${join(dir, 'nested', 'tessera.db')}`);
      await store.migrate();
      await store.close();
      assert.equal((await stat(join(dir, 'nested'))).mode & 0o777, 0o700);
      assert.equal((await stat(join(dir, 'nested', 'tessera.db'))).mode & 0o777, 0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('/metrics: a bearer token when set; in production a listener of its own on 127.0.0.1, not the public one', async () => {
    const guarded = await startServer({ env: { TESSERA_METRICS_TOKEN: 'a-metrics-token-of-sorts' } });
    try {
      assert.equal((await fetch(`${guarded.issuer}/metrics`)).status, 401);
      const ok = await fetch(`${guarded.issuer}/metrics`, {
        headers: { authorization: 'Bearer a-metrics-token-of-sorts' },
      });
      assert.equal(ok.status, 200);
    } finally {
      await guarded.close();
    }
    const dir = await mkdtemp(join(tmpdir(), 'tessera-metrics-'));
    const metricsPort = await freePort();
    const instance = await startInstance({
      NODE_ENV: 'production',
      TESSERA_ISSUER: 'https://id.example',
      TESSERA_SECRET: 'a-production-secret-for-the-metrics-test',
      DATABASE_URL: `sqlite:${join(dir, 'tessera.db')}`,
      TESSERA_TRUST_PROXY: 'false',
      TESSERA_METRICS_PORT: String(metricsPort),
      TESSERA_SHUTDOWN_DRAIN: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    try {
      assert.equal((await fetch(`${instance.url}/metrics`)).status, 404);
      const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      assert.equal(scraped.status, 200);
      assert.match(await scraped.text(), /tessera_ready/);
      // The admin API beside it (TESSERA_ADMIN_API=operations, the default), and not on the public one.
      const document = await fetch(`http://127.0.0.1:${metricsPort}/admin/api/v1/openapi.json`);
      assert.equal(document.status, 200);
      const users = await fetch(`http://127.0.0.1:${metricsPort}/admin/api/v1/users`);
      assert.equal(users.status, 401);
      assert.match(users.headers.get('www-authenticate')!, /^Bearer/);
      assert.equal((await fetch(`${instance.url}/admin/api/v1/openapi.json`)).status, 404);
      // Requests to the operations listener are logged, but not Prometheus's scrapes (made first here).
      await until(() => instance.output().includes('/admin/api/v1/users'), 'the admin API request logged', 15_000);
      assert.equal(instance.output().includes(`"url":"/metrics","host":"127.0.0.1:${metricsPort}"`), false);
    } finally {
      await instance.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
