// Resource indicators (RFC 8707): APIs registered with `tessera resources`, tokens audience-restricted
// to the one asked for and carrying only the scopes it accepts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

const API = 'https://api.example/';
const OTHER = 'https://other.example/v1';

describe('resource indicators (RFC 8707)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    for (const [uri, scope] of [
      [API, 'apps'],
      [OTHER, 'webhooks'],
    ] as const) {
      const { io } = cliIo(server);
      assert.equal(await run(['resources', 'create', '--uri', uri, '--scope', scope, '--name', 'Test API'], io), 0);
    }
  });
  after(() => server?.close());

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
  const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as any });

  it('the CLI creates, lists and deletes resources, and refuses what is not one', async () => {
    const { io, lines } = cliIo(server);
    assert.equal(await run(['resources', 'list', '--json'], io), 0);
    const listed = JSON.parse(lines.join('\n'));
    assert.deepEqual(
      listed.map((r: { uri: string; scope: string }) => [r.uri, r.scope]),
      [
        [API, 'apps'],
        [OTHER, 'webhooks'],
      ],
    );
    for (const args of [
      ['--uri', 'https://api.example/#x', '--scope', 'apps'],
      ['--uri', 'ftp://api.example/', '--scope', 'apps'],
      ['--uri', 'https://u:p@api.example/', '--scope', 'apps'],
      ['--uri', 'https://new.example/', '--scope', 'openid'],
      ['--uri', 'https://new.example/', '--scope', 'nope'],
      ['--uri', API, '--scope', 'apps'],
    ]) {
      const { io: bad, lines: said } = cliIo(server);
      assert.equal(await run(['resources', 'create', ...args], bad), 2, `${args.join(' ')}: ${said.join(' ')}`);
    }
    const { io: create } = cliIo(server);
    assert.equal(await run(['resources', 'create', '--uri', 'https://gone.example/', '--scope', 'apps'], create), 0);
    const { io: remove, lines: removed } = cliIo(server);
    assert.equal(await run(['resources', 'delete', 'https://gone.example/'], remove), 0);
    assert.match(removed.join(''), /deleted resource/);
    const { io: again } = cliIo(server);
    assert.equal(await run(['resources', 'delete', 'https://gone.example/'], again), 1);
  });

  it('a grant for a resource gives tokens for it alone, with only its scopes, through refreshes', async () => {
    const c = server.clients.confidential;
    const issued = await getCode(server, c, { scope: 'openid apps', extra: { resource: API } });
    const { status, body } = await json(await exchange(server, issued));
    assert.equal(status, 200, JSON.stringify(body));
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.aud, API);
    assert.equal(claims.scope, 'apps');
    assert.equal(body.scope, 'apps');
    assert.ok(body.id_token, 'openid still gives an ID token');
    // Tessera's own userinfo is not the API's audience.
    const userinfo = await fetch(`${server.issuer}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    assert.equal(userinfo.status, 401);
    // Introspection answers for every API's tokens and says whose.
    const introspected = await json(
      await fetch(`${server.issuer}/oauth2/introspect`, {
        method: 'POST',
        headers: { authorization: basic(c.id, c.secret!), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: body.access_token }),
      }),
    );
    assert.equal(introspected.body.active, true);
    assert.equal(introspected.body.aud, API);

    // Another resource is refused, and refuses nothing else: the refresh token still works.
    const auth = basic(c.id, c.secret!);
    const other = await json(
      await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: body.refresh_token, resource: OTHER },
        auth,
      ),
    );
    assert.equal(other.status, 400);
    assert.equal(other.body.error, 'invalid_target');
    const refreshed = await json(
      await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: body.refresh_token }, auth),
    );
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(decodeJwt(refreshed.body.access_token).aud, API);
    const named = await json(
      await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, resource: API },
        auth,
      ),
    );
    assert.equal(named.status, 200);
    assert.equal(decodeJwt(named.body.access_token).scope, 'apps');
  });

  it('a grant without a resource narrows to any registered one at the token endpoint', async () => {
    const c = server.clients.confidential;
    const issued = await getCode(server, c, { scope: 'openid apps webhooks' });
    const { body } = await json(await exchange(server, issued));
    assert.equal(decodeJwt(body.access_token).aud, server.issuer);
    assert.equal(body.scope, 'openid apps webhooks');
    const auth = basic(c.id, c.secret!);
    const narrowed = await json(
      await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: body.refresh_token, resource: OTHER },
        auth,
      ),
    );
    assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
    assert.equal(decodeJwt(narrowed.body.access_token).aud, OTHER);
    assert.equal(narrowed.body.scope, 'webhooks');
    const unknown = await json(
      await tokenRequest(
        server,
        {
          grant_type: 'refresh_token',
          refresh_token: narrowed.body.refresh_token,
          resource: 'https://unknown.example/',
        },
        auth,
      ),
    );
    assert.equal(unknown.body.error, 'invalid_target');
    // At the code exchange too.
    const second = await getCode(server, c, { scope: 'openid apps' });
    const exchanged = await json(await exchange(server, second, { resource: API }));
    assert.equal(decodeJwt(exchanged.body.access_token).aud, API);
  });

  it('a client acting for itself gets a token for a resource', async () => {
    const { io, lines } = cliIo(server);
    const args = [
      'clients',
      'create',
      '--name',
      'svc',
      '--scope',
      'apps webhooks',
      '--grant-types',
      'client_credentials',
    ];
    assert.equal(await run([...args, '--json'], io), 0);
    const svc = JSON.parse(lines.join('\n'));
    const answer = await json(
      await tokenRequest(
        server,
        { grant_type: 'client_credentials', resource: OTHER },
        basic(svc.client_id, svc.client_secret),
      ),
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(decodeJwt(answer.body.access_token).aud, OTHER);
    assert.equal(answer.body.scope, 'webhooks');
  });

  it('the authorization endpoint refuses an unknown, repeated or malformed resource and foreign scopes', async () => {
    const c = server.clients.confidential;
    const browser = new BrowserSim(server.issuer);
    const ask = async (extra: string, scope = 'openid apps') => {
      const query = new URLSearchParams({
        client_id: c.id,
        redirect_uri: c.redirectUri,
        response_type: 'code',
        scope,
        state: 'st',
      });
      const response = await browser.request(`/oauth2/authorize?${query}&${extra}`);
      assert.equal(response.status, 302);
      return new URL(response.headers.get('location')!).searchParams;
    };
    const enc = encodeURIComponent;
    assert.equal((await ask(`resource=${enc('https://unknown.example/')}`)).get('error'), 'invalid_target');
    assert.equal((await ask(`resource=${enc(API)}&resource=${enc(OTHER)}`)).get('error'), 'invalid_target');
    assert.equal((await ask(`resource=${enc('https://api.example/#frag')}`)).get('error'), 'invalid_target');
    assert.equal((await ask('resource=relative/path')).get('error'), 'invalid_target');
    assert.equal((await ask(`resource=${enc(API)}`, 'openid webhooks')).get('error'), 'invalid_scope');
    assert.equal((await ask(`resource=${enc(API)}`, 'openid')).get('error'), 'invalid_scope');
    // The token endpoint: a code for one resource is not redeemed for another.
    const issued = await getCode(server, c, { scope: 'openid apps', extra: { resource: API } });
    const refused = await json(await exchange(server, issued, { resource: OTHER }));
    assert.equal(refused.body.error, 'invalid_target');
  });

  it('the consent page names the API', async () => {
    const c = server.clients.public;
    const browser = new BrowserSim(server.issuer);
    const query = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid apps',
      resource: API,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    let response = await browser.request(`/oauth2/authorize?${query}`);
    response = await browser.login(response.headers.get('location')!, server.user.username, server.user.password);
    const consent = await browser.request(response.headers.get('location')!);
    const page = await consent.text();
    assert.match(page, /For the API Test API \(<code>https:\/\/api\.example\/<\/code>\)/);
  });
});
