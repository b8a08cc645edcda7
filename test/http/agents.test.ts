// AI agents, as the MCP authorization specification has them find and use Tessera: from nothing but
// an API's URL, the official MCP TypeScript SDK's client (`auth()`) follows the API's 401 to its
// RFC 9728 metadata, then to Tessera's RFC 8414 metadata, identifies itself by dynamic registration
// or by a Client ID Metadata Document (served here over https, under a throwaway certificate
// authority Tessera trusts through NODE_EXTRA_CA_CERTS), signs the user in with PKCE and the
// resource (RFC 8707), and calls the API with a token whose audience is that API. Tessera runs as
// a real process, as `npm start` runs it.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { auth, extractWWWAuthenticateParams, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { decodeJwt } from 'jose';
import { exampleApi } from '../../examples/api.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { openStore } from '../../src/store/index.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Instance, startInstance } from '../helpers/instances.ts';
import { freePort, PASSWORD } from '../helpers/server.ts';
import { createThrowawayCa } from '../helpers/tls.ts';

/** The one text of every failed document fetch, exactly: no reason, no status, no port. */
const FETCH_FAILED = /<code>invalid_client<\/code>: the client&#39;s metadata document could not be fetched<\/p>/;

/** The SDK's client side, kept in memory: what an agent keeps between runs. */
class AgentProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly clientMetadataUrl: string | undefined;
  readonly redirectUrl: string;
  constructor(redirectUrl: string, clientMetadataUrl?: string) {
    this.redirectUrl = redirectUrl;
    this.clientMetadataUrl = clientMetadataUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test agent',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('AI agents with the MCP SDK: dynamic registration and client ID metadata documents', () => {
  let dir: string;
  let tessera: Instance;
  let guarded: Instance | undefined;
  let api: Server;
  let apiUrl: string;
  let documents: HttpsServer;
  let documentsUrl: string;
  /** What the document server serves, by path; and how often each path was fetched. */
  const served = new Map<string, { status?: number; headers?: Record<string, string>; body: string }>();
  const fetched = new Map<string, number>();
  let env: Record<string, string>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-agents-'));
    const ca = await createThrowawayCa(dir);
    documents = createHttpsServer({ key: ca.key, cert: ca.cert }, (request, response) => {
      const path = new URL(request.url ?? '/', 'https://localhost').pathname;
      fetched.set(path, (fetched.get(path) ?? 0) + 1);
      const document = served.get(path);
      if (!document) return response.writeHead(404).end();
      response.writeHead(document.status ?? 200, { 'content-type': 'application/json', ...document.headers });
      response.end(document.body);
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsUrl = `https://127.0.0.1:${(documents.address() as { port: number }).port}`;

    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const apiPort = await freePort();
    apiUrl = `http://127.0.0.1:${apiPort}`;
    env = {
      TESSERA_ISSUER: issuer,
      DATABASE_URL: `sqlite:${join(dir, 'tessera.db')}`,
      TESSERA_SECRET: 'a-secret-of-the-agents-test-0123456789',
      TESSERA_DATA_DIR: dir,
      TESSERA_REGISTRATION: 'open',
      // The operator lets agents ask users for the API's scopes.
      TESSERA_REGISTRATION_SCOPES: 'openid profile email apps webhooks',
      NODE_EXTRA_CA_CERTS: ca.caFile,
    };
    // The database first: a user, and the API as a resource accepting its scopes.
    const store = await openStore(env.DATABASE_URL!);
    await store.migrate();
    const passwordHash = await hashPassword(PASSWORD);
    await createUser(store, null, { username: 'alice', email: 'alice@example.com', passwordHash });
    await store.createResource({ uri: apiUrl, name: 'Example API', scopes: ['apps', 'webhooks'], createdAt: 0 });
    await store.close();
    // The documents are on localhost: only with the development setting may Tessera fetch them.
    tessera = await startInstance({ ...env, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' }, port);
    api = exampleApi({ issuer, resource: apiUrl });
    await new Promise<void>((resolve) => api.listen(apiPort, '127.0.0.1', resolve));
  });
  after(async () => {
    await tessera?.stop();
    await guarded?.stop();
    await new Promise((resolve) => api?.close(resolve));
    await new Promise((resolve) => documents?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  /** The whole agent flow from the API's URL: the token the agent ends with, after calling the API with it. */
  async function agentFlow(provider: AgentProvider): Promise<OAuthTokens> {
    const serverUrl = `${apiUrl}/apps`;
    const unauthorized = await fetch(serverUrl);
    assert.equal(unauthorized.status, 401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
    assert.ok(resourceMetadataUrl, 'the 401 names the protected resource metadata');
    assert.equal(await auth(provider, { serverUrl, resourceMetadataUrl }), 'REDIRECT');
    const authorizationUrl = provider.authorizationUrl!;
    assert.equal(authorizationUrl.searchParams.get('resource'), apiUrl);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    // The user signs in and consents in the browser; the agent's redirect URI receives the code.
    const callback = await new BrowserSim(tessera.url).authorize(authorizationUrl.href, {
      username: 'alice',
      password: PASSWORD,
    });
    assert.equal(callback.origin + callback.pathname, provider.redirectUrl);
    const authorizationCode = callback.searchParams.get('code')!;
    assert.equal(await auth(provider, { serverUrl, resourceMetadataUrl, authorizationCode }), 'AUTHORIZED');
    const tokens = provider.tokens()!;
    assert.equal(decodeJwt(tokens.access_token).aud, apiUrl, 'the token is for this API alone');
    const called = await fetch(serverUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(called.status, 200, await called.clone().text());
    assert.equal(((await called.json()) as { owner: string }).owner, decodeJwt(tokens.access_token).sub);
    // The agent's next run refreshes, for the same resource.
    provider.saved = { ...tokens, access_token: 'expired' };
    assert.equal(await auth(provider, { serverUrl, resourceMetadataUrl }), 'AUTHORIZED');
    assert.notEqual(provider.tokens()!.refresh_token, tokens.refresh_token, 'the refresh token rotated');
    assert.equal(decodeJwt(provider.tokens()!.access_token).aud, apiUrl);
    return tokens;
  }

  it('registers by dynamic registration, signs in with PKCE and the resource, and calls the API', async () => {
    const provider = new AgentProvider('http://127.0.0.1:38571/callback');
    await agentFlow(provider);
    const information = provider.clientInformation()!;
    assert.doesNotMatch(information.client_id, /^https:/, 'a registered client id');
  });

  it('identifies itself by a client ID metadata document, fetched once and shown by its host', async () => {
    const clientId = `${documentsUrl}/agent/client.json`;
    const redirectUrl = 'http://127.0.0.1:38572/callback';
    served.set('/agent/client.json', {
      headers: { 'cache-control': 'max-age=600' },
      body: JSON.stringify({
        client_id: clientId,
        client_name: 'Test agent',
        redirect_uris: [redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
    const provider = new AgentProvider(redirectUrl, clientId);
    await agentFlow(provider);
    assert.equal(provider.clientInformation()!.client_id, clientId);
    assert.equal(fetched.get('/agent/client.json'), 1, 'cached as its Cache-Control allows');

    // The consent page leads with the host: the name is the document's claim alone.
    const browser = new BrowserSim(tessera.url);
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUrl,
      response_type: 'code',
      scope: 'apps',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      prompt: 'consent',
    });
    const start = await browser.request(`/oauth2/authorize?${query}`);
    const login = await browser.login(start.headers.get('location')!, 'alice', PASSWORD);
    const page = await (await browser.request(login.headers.get('location')!)).text();
    const host = new URL(documentsUrl).host;
    assert.match(page, new RegExp(`<h1>Allow <strong>${host}</strong> access\\?</h1>`));
    assert.match(page, /It calls itself “Test agent”, which nobody has checked/);
  });

  it('refuses documents the draft rules out, and never follows a redirect', async () => {
    const document = (path: string, changes: Record<string, unknown>, more: Record<string, unknown> = {}) => {
      const base = { client_id: `${documentsUrl}${path}`, redirect_uris: ['http://127.0.0.1:1/cb'] };
      served.set(path, { body: JSON.stringify({ ...base, ...changes }), ...more });
    };
    document('/bad/other-id', { client_id: `${documentsUrl}/somebody-else` });
    document('/bad/secret', { token_endpoint_auth_method: 'client_secret_basic' });
    document('/bad/fragment-uri', { redirect_uris: ['https://app.example/cb#x'] });
    document('/bad/numeric-host', { redirect_uris: ['http://127.0.0.1:1/cb', 'https://2130706433/cb'] });
    document('/bad/wildcard', { redirect_uris: ['https://*.app.example/cb'] });
    document('/bad/big', { padding: 'x'.repeat(6000) });
    served.set('/bad/moved', { status: 302, headers: { location: `${documentsUrl}/agent/client.json` }, body: '' });
    served.set('/bad/not-json', { body: '<html>' });
    for (const [path, reason] of [
      ['/bad/other-id', /names another client_id/],
      ['/bad/secret', /token_endpoint_auth_method must be none/],
      ['/bad/fragment-uri', /redirect_uris\[0\] must not contain a fragment/],
      ['/bad/numeric-host', /redirect_uris\[1\] must not have an IP address for its host/],
      ['/bad/wildcard', /redirect_uris\[0\] must not contain \*/],
      // Whatever the fetch met, one text: an error page is no port or name scanner.
      ['/bad/big', FETCH_FAILED],
      ['/bad/moved', FETCH_FAILED],
      ['/bad/not-json', FETCH_FAILED],
      ['/bad/missing', FETCH_FAILED],
    ] as const) {
      const query = new URLSearchParams({
        client_id: `${documentsUrl}${path}`,
        redirect_uri: 'http://127.0.0.1:1/cb',
        response_type: 'code',
        scope: 'apps',
      });
      const response = await fetch(`${tessera.url}/oauth2/authorize?${query}`, { redirect: 'manual' });
      assert.equal(response.status, 400, path);
      assert.match(await response.text(), reason, path);
    }
    assert.equal(fetched.get('/agent/client.json'), 1, 'the redirect was not followed');
  });

  it('without the development setting, a document cannot make Tessera fetch an internal address', async () => {
    guarded = await startInstance({ ...env, TESSERA_ISSUER: 'http://127.0.0.1:1' });
    const before = [...fetched.values()].reduce((a, b) => a + b, 0);
    const port = new URL(documentsUrl).port;
    for (const clientId of [
      `${documentsUrl}/agent/client.json`,
      `https://localhost:${port}/agent/client.json`,
      `https://[::1]:${port}/agent/client.json`,
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.1/client.json',
    ]) {
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: 'http://127.0.0.1:1/cb',
        response_type: 'code',
      });
      const response = await fetch(`${guarded.url}/oauth2/authorize?${query}`, { redirect: 'manual' });
      assert.equal(response.status, 400, clientId);
      assert.match(await response.text(), FETCH_FAILED, clientId);
    }
    assert.equal(
      [...fetched.values()].reduce((a, b) => a + b, 0),
      before,
      'no request reached the internal server',
    );
    // The reason is the operator's to read, in the log.
    assert.match(guarded.output(), /"reason":"address: [^"]+".*client metadata document not fetched/);
  });
});
