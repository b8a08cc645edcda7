// Logs that explain: every refused request (the authorization endpoint, its error pages included, the
// token, registration, introspection and revocation endpoints) leaves one info line with the reason,
// the client it names and the request id, and never a credential; every answer carries X-Request-Id,
// taken from a trusted proxy or generated; a failure to start is a JSON line like every other.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  error?: string;
  description?: string;
  detail?: string;
  client_id?: string;
}

describe('refused requests are logged with their reason, client and request id', () => {
  let server: TestServer;
  const written: string[] = [];
  const lines = () =>
    written
      .join('')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);

  /** The `request rejected` line of the request that got `response`, by the id the response carries. */
  async function rejectionOf(response: Response): Promise<Line> {
    const id = response.headers.get('x-request-id');
    assert.match(id ?? '', UUID, 'the answer names its request');
    // The line is written before the answer is sent; the stream may still hold it for a moment.
    for (let tries = 0; tries < 100; tries++) {
      const line = lines().find((l) => l.reqId === id && l.msg === 'request rejected');
      if (line) return line;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.fail(`no "request rejected" line for ${id}:\n${written.join('')}`);
  }

  before(async () => {
    server = await startServer({ env: { LOG_LEVEL: 'info' }, logStream: { write: (line) => void written.push(line) } });
  });
  after(() => server?.close());

  const authorizeUrl = (params: Record<string, string>) =>
    `${server.issuer}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', scope: 'openid', ...params })}`;

  it('a redirect URI that is not registered: the error page, and a line naming the client and the URI', async () => {
    const c = server.clients.confidential;
    const response = await fetch(authorizeUrl({ client_id: c.id, redirect_uri: 'https://evil.example/cb' }));
    assert.equal(response.status, 400);
    const line = await rejectionOf(response);
    assert.equal(line.level, 30, 'at info');
    assert.equal(line.client_id, c.id);
    assert.equal(line.error, 'invalid_request');
    assert.equal(line.description, 'redirect_uri is not registered for this client');
    assert.match(line.detail!, /https:\/\/evil\.example\/cb/);
  });

  it('an unknown client: the error page, and a line naming the client_id it was sent', async () => {
    const response = await fetch(authorizeUrl({ client_id: 'no-such-client', redirect_uri: 'https://a.example/cb' }));
    assert.equal(response.status, 400);
    const line = await rejectionOf(response);
    assert.equal(line.client_id, 'no-such-client');
    assert.equal(line.error, 'invalid_client');
  });

  it('an invalid scope goes back to the client, and the line says which scope', async () => {
    const c = server.clients.confidential;
    const response = await fetch(authorizeUrl({ client_id: c.id, redirect_uri: c.redirectUri, scope: 'openid nope' }), {
      redirect: 'manual',
    });
    assert.equal(response.status, 302);
    assert.equal(new URL(response.headers.get('location')!).searchParams.get('error'), 'invalid_scope');
    const line = await rejectionOf(response);
    assert.equal(line.client_id, c.id);
    assert.equal(line.error, 'invalid_scope');
    assert.match(line.detail!, /unknown: nope/);
  });

  it('the token endpoint: invalid_grant and invalid_client name the client, never its secret or the code', async () => {
    const c = server.clients.confidential;
    const issued = await getCode(server, c);
    const wrongRedirect = await tokenRequest(
      server,
      { grant_type: 'authorization_code', code: issued.code, redirect_uri: `${c.redirectUri}/other` },
      basic(c.id, c.secret!),
    );
    assert.equal(wrongRedirect.status, 400);
    const grant = await rejectionOf(wrongRedirect);
    assert.equal(grant.error, 'invalid_grant');
    assert.equal(grant.client_id, c.id);

    const wrongSecret = await tokenRequest(server, { grant_type: 'client_credentials' }, basic(c.id, 'not-the-secret'));
    assert.equal(wrongSecret.status, 401);
    const client = await rejectionOf(wrongSecret);
    assert.equal(client.error, 'invalid_client');
    assert.equal(client.client_id, c.id);
    assert.match(client.detail!, /wrong client_secret/);

    const post = server.clients.post;
    const inBody = await tokenRequest(server, {
      grant_type: 'refresh_token',
      refresh_token: 'not-a-refresh-token',
      client_id: post.id,
      client_secret: post.secret!,
    });
    assert.equal((await rejectionOf(inBody)).client_id, post.id);

    const log = written.join('');
    for (const secret of [c.secret!, 'not-the-secret', post.secret!, issued.code, 'not-a-refresh-token'])
      assert.equal(log.includes(secret), false, `a log line carries ${secret.slice(0, 8)}…`);
  });

  it('introspection and revocation refusals name the client', async () => {
    const pub = server.clients.public;
    const introspection = await fetch(`${server.issuer}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'x', client_id: pub.id }),
    });
    assert.equal(introspection.status, 401);
    assert.equal((await rejectionOf(introspection)).client_id, pub.id);

    // A refresh token of one client, revoked by another: unauthorized_client.
    const tokens = (await (await exchange(server, await getCode(server, server.clients.confidential))).json()) as {
      refresh_token: string;
    };
    const es = server.clients.es256;
    const revocation = await fetch(`${server.issuer}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(es.id, es.secret!) },
      body: new URLSearchParams({ token: tokens.refresh_token }),
    });
    assert.equal(revocation.status, 400);
    const line = await rejectionOf(revocation);
    assert.equal(line.error, 'unauthorized_client');
    assert.equal(line.client_id, es.id);
    assert.equal(written.join('').includes(tokens.refresh_token), false);
  });

  it('registration refusals are logged, with the client of RFC 7592 requests', async () => {
    const register = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example/cb'] }),
    });
    assert.equal(register.status, 401);
    assert.equal((await rejectionOf(register)).error, 'invalid_token');

    const c = server.clients.confidential;
    const read = await fetch(`${server.issuer}/oauth2/register/${c.id}`, {
      headers: { authorization: 'Bearer not-the-registration-token' },
    });
    assert.equal(read.status, 401);
    const line = await rejectionOf(read);
    assert.equal(line.client_id, c.id);
    assert.equal(written.join('').includes('not-the-registration-token'), false);
  });

  it('an error page of the sign-in pages is logged too', async () => {
    const browser = new BrowserSim(server.issuer);
    const response = await browser.request('/login?interaction=forged');
    assert.equal(response.status, 400);
    assert.equal((await rejectionOf(response)).description, 'Go back to the application and start again.');
  });

  it('a successful flow logs no rejection', async () => {
    const before = lines().filter((l) => l.msg === 'request rejected').length;
    const response = await exchange(server, await getCode(server, server.clients.confidential));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('x-request-id') ?? '', UUID);
    assert.equal(lines().filter((l) => l.msg === 'request rejected').length, before);
  });
});

describe('X-Request-Id', () => {
  let direct: TestServer;
  let proxied: TestServer;
  before(async () => {
    direct = await startServer();
    proxied = await startServer({ env: { TESSERA_TRUST_PROXY: '127.0.0.1' } });
  });
  after(async () => {
    await direct?.close();
    await proxied?.close();
  });

  const idOf = async (server: TestServer, path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.issuer}${path}`, { headers });
    await response.body?.cancel();
    return response.headers.get('x-request-id');
  };

  it('is generated, unique, on every answer: success, error, 404', async () => {
    const ids = [
      await idOf(direct, '/healthz'),
      await idOf(direct, '/healthz'),
      await idOf(direct, '/oauth2/userinfo'),
      await idOf(direct, '/no/such/path'),
    ];
    for (const id of ids) assert.match(id ?? '', UUID);
    assert.equal(new Set(ids).size, ids.length);
  });

  it("a peer that is not a trusted proxy cannot choose it; a trusted proxy's is kept, if it is fit for a log", async () => {
    assert.match((await idOf(direct, '/healthz', { 'x-request-id': 'chosen-by-a-caller' })) ?? '', UUID);
    assert.equal(await idOf(proxied, '/healthz', { 'x-request-id': 'nginx-4f2a9c' }), 'nginx-4f2a9c');
    assert.match((await idOf(proxied, '/healthz', { 'x-request-id': 'two words' })) ?? '', UUID);
    assert.match((await idOf(proxied, '/healthz', { 'x-request-id': 'x'.repeat(129) })) ?? '', UUID);
  });
});

describe('a failure to start', () => {
  it('is a JSON line, fatal, saying why, and the process exits 78 (EX_CONFIG) for a setting, which systemd does not restart', async () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    const child = spawn(process.execPath, start.split(' ').slice(1), {
      env: { PATH: process.env.PATH, TESSERA_SECRET: 'too-short' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 78);
    const lines = output.trim().split('\n');
    assert.equal(lines.length, 1, output);
    const line = JSON.parse(lines[0]!) as Line;
    assert.equal(line.level, 60);
    assert.match(line.msg, /^cannot start: .*TESSERA_SECRET/s);
  });
});
