// Clients that register themselves, as an attacker uses them: a Client ID Metadata Document, or an
// open registration, naming redirect URIs on a host of the attacker's, to turn Tessera's address into
// an open redirector (RFC 9700 §4.11.2) through RP-initiated logout or an authorization error; an
// official-sounding name on the sign-in and sign-out pages; and document fetches as a port scanner or
// a flood. Tessera runs as a process trusting a throwaway CA (NODE_EXTRA_CA_CERTS), the documents are
// served over https on 127.0.0.1, named localhost (TESSERA_OUTBOUND_ALLOW_PRIVATE, as in development; a
// redirect URI has a name for its host, never an IP address but loopback over http).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { createUser } from '../../src/admin/new-user.ts';
import { openStore } from '../../src/store/index.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { freePort, PASSWORD } from '../helpers/server.ts';
import { createThrowawayCa } from '../helpers/tls.ts';

/** The one text of every failed document fetch. */
const FETCH_FAILED = /<code>invalid_client<\/code>: the client&#39;s metadata document could not be fetched<\/p>/;
const EVIL = 'https://evil.example';

describe('clients that register themselves cannot send browsers off their own host', () => {
  let dir: string;
  let tessera: Instance;
  let documents: Server;
  let documentsUrl: string;
  let clientId: string;
  const fetched = new Map<string, number>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-documents-'));
    const ca = await createThrowawayCa(dir);
    documents = createServer({ key: ca.key, cert: ca.cert }, (request, response) => {
      const path = new URL(request.url ?? '/', 'https://localhost').pathname;
      fetched.set(path, (fetched.get(path) ?? 0) + 1);
      if (path !== '/client.json') return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
      response.end(
        JSON.stringify({
          client_id: clientId,
          client_name: 'Tessera Account Security (official)',
          redirect_uris: [`${EVIL}/cb`, `${documentsUrl}/cb`],
          post_logout_redirect_uris: [`${EVIL}/bye`, `${documentsUrl}/bye`],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsUrl = `https://localhost:${(documents.address() as { port: number }).port}`;
    clientId = `${documentsUrl}/client.json`;

    const port = await freePort();
    const env = {
      TESSERA_ISSUER: `http://127.0.0.1:${port}`,
      DATABASE_URL: `sqlite:${join(dir, 'tessera.db')}`,
      TESSERA_SECRET: 'a-secret-of-the-documents-test-0123456789',
      TESSERA_DATA_DIR: dir,
      TESSERA_REGISTRATION: 'open',
      TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
      NODE_EXTRA_CA_CERTS: ca.caFile,
    };
    const store = await openStore(env.DATABASE_URL);
    await store.migrate();
    await createUser(store, null, {
      username: 'alice',
      email: 'alice@example.com',
      passwordHash: await hashPassword(PASSWORD),
    });
    await store.close();
    tessera = await startInstance(env, port);
  });
  after(async () => {
    await tessera?.stop();
    await new Promise((resolve) => documents?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, params: Record<string, string>) =>
    fetch(`${tessera.url}${path}?${new URLSearchParams(params)}`, { redirect: 'manual' });

  /** Answered with the error page: no redirect at all. */
  async function errorPage(response: Response, why: string) {
    assert.equal(response.status, 400, `${why}: ${response.headers.get('location')}`);
    assert.equal(response.headers.get('location'), null, why);
    assert.match(response.headers.get('content-type')!, /^text\/html/, why);
    return response.text();
  }

  /** An ID token of alice's for `client`, through the browser and the token endpoint with PKCE. */
  async function idTokenFor(client: string, redirectUri: string): Promise<string> {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: client,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 's',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new BrowserSim(tessera.url);
    const callback = await browser.authorize(`/oauth2/authorize?${query}`, { username: 'alice', password: PASSWORD });
    assert.equal(callback.origin + callback.pathname, redirectUri);
    const response = await fetch(`${tessera.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: redirectUri,
        client_id: client,
        code_verifier: verifier,
      }),
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { id_token: string }).id_token;
  }

  it("a metadata document's client: RP-initiated logout goes nowhere but its own host, with an ID token", async () => {
    // The attack: no session, so Tessera would send the browser on at once.
    await errorPage(
      await get('/oauth2/logout', { client_id: clientId, post_logout_redirect_uri: `${EVIL}/bye` }),
      'evil',
    );
    const own = `${documentsUrl}/bye`;
    await errorPage(await get('/oauth2/logout', { client_id: clientId, post_logout_redirect_uri: own }), 'no hint');
    // With an ID token it was issued, to its own host only.
    const hint = await idTokenFor(clientId, `${documentsUrl}/cb`);
    assert.equal(decodeJwt(hint).aud, clientId);
    const evil = { id_token_hint: hint, post_logout_redirect_uri: `${EVIL}/bye` };
    await errorPage(await get('/oauth2/logout', evil), 'hint, evil');
    const back = await get('/oauth2/logout', { id_token_hint: hint, post_logout_redirect_uri: own, state: 'z' });
    assert.equal(back.status, 303);
    assert.equal(back.headers.get('location'), `${own}?state=z`);
  });

  it("a metadata document's client: authorization errors go back only to its own host", async () => {
    const request = (redirectUri: string, more: Record<string, string>) =>
      get('/oauth2/authorize', { client_id: clientId, redirect_uri: redirectUri, state: 's', ...more });
    const pkce = {
      response_type: 'code',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    for (const [more, why] of [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ ...pkce, prompt: 'none' }, 'login_required'],
      [{ ...pkce, scope: 'openid apps' }, 'invalid_scope'],
    ] as const) {
      const page = await errorPage(await request(`${EVIL}/cb`, more), why);
      assert.match(page, new RegExp(`<code>${why}</code>`));
    }
    const home = await request(`${documentsUrl}/cb`, { response_type: 'token' });
    assert.equal(home.status, 302);
    assert.match(home.headers.get('location')!, new RegExp(`^${documentsUrl}/cb\\?error=unsupported_response_type`));
  });

  it('an openly registered client: neither logout nor an authorization error redirects', async () => {
    const registered = await fetch(`${tessera.url}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [`${EVIL}/cb`],
        post_logout_redirect_uris: [`${EVIL}/bye`],
        token_endpoint_auth_method: 'none',
      }),
    });
    assert.equal(registered.status, 201);
    const { client_id: id } = (await registered.json()) as { client_id: string };
    await errorPage(await get('/oauth2/logout', { client_id: id, post_logout_redirect_uri: `${EVIL}/bye` }), 'logout');
    const authorize = { client_id: id, redirect_uri: `${EVIL}/cb`, response_type: 'token', state: 's' };
    await errorPage(await get('/oauth2/authorize', authorize), 'authorize');
  });

  it('the sign-in and sign-out pages lead with the host and say nobody checked the name', async () => {
    const browser = new BrowserSim(tessera.url);
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: `${documentsUrl}/cb`,
      response_type: 'code',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const start = await browser.request(`/oauth2/authorize?${query}`);
    const login = await (await browser.request(start.headers.get('location')!)).text();
    const host = new URL(documentsUrl).host;
    assert.match(login, new RegExp(`Sign in to continue to <strong>${host}</strong>`));
    assert.match(login, new RegExp(`known only by its address,\\s+<strong>${host}</strong>`));
    assert.match(login, /It calls itself “Tessera Account Security \(official\)”, which nobody has checked/);
    assert.match(login, new RegExp(`You will return to <strong>${host}</strong>`));

    const signedIn = await browser.login(start.headers.get('location')!, 'alice', PASSWORD);
    assert.equal(signedIn.status, 303);
    const logout = await (
      await browser.request(`/oauth2/logout?${new URLSearchParams({ client_id: clientId })}`)
    ).text();
    assert.match(logout, new RegExp(`<strong>${host}</strong> asks to sign you out`));
    assert.match(logout, /It calls itself “Tessera Account Security \(official\)”, which nobody has checked/);
  });

  it('document fetches are limited per host, and every failure reads the same', async () => {
    const closed = await freePort();
    const pages = new Set<string>();
    for (const id of [`https://127.0.0.1:${closed}/client.json`, `${documentsUrl}/missing.json`]) {
      const page = await errorPage(await get('/oauth2/authorize', { client_id: id, redirect_uri: `${EVIL}/cb` }), id);
      assert.match(page, FETCH_FAILED, id);
      // What the page says (its language switch links to this very request, so differs by its client_id).
      pages.add(page.slice(page.indexOf('<main'), page.indexOf('</main>')));
    }
    assert.equal(pages.size, 1, 'a closed port and a 404 read alike');
    // A flood of new client ids on one host: Tessera stops fetching, and says the same.
    for (let i = 0; i < 40; i++) {
      const id = `${documentsUrl}/flood/${i}.json`;
      const page = await errorPage(await get('/oauth2/authorize', { client_id: id, redirect_uri: `${EVIL}/cb` }), id);
      assert.match(page, FETCH_FAILED, id);
    }
    const flood = [...fetched].filter(([path]) => path.startsWith('/flood/')).length;
    assert.ok(flood > 0 && flood <= 30, `${flood} of 40 fetched`);
  });
});
